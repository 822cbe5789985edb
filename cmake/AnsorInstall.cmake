# Installation and the package configuration for find_package(Ansor), in two components:
#   runtime    the runtime library and headers that generated kernels link against: all that a
#              consumer of a pretuned kernel library needs (`find_package(Ansor COMPONENTS runtime)`);
#   generator  the ansor-gen executable, its measurement worker and the ansor_add_kernels()
#              module, for projects that generate kernels.
# `cmake --install BUILD --component runtime` installs the first alone. Under a parent project
# (add_subdirectory) only the runtime component installs: the parent's pretuned kernel packages
# (ansor_install_kernels) need it, and the generator there is built only for configure time.
include(CMakePackageConfigHelpers)

set(ANSOR_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Ansor")

if(PROJECT_IS_TOP_LEVEL)
  install(TARGETS ansor-gen EXPORT AnsorGeneratorTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT generator)
  # Tuning runs candidates in this worker, found next to ansor-gen.
  install(TARGETS ansor-measure-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT generator)
  install(EXPORT AnsorGeneratorTargets NAMESPACE Ansor:: DESTINATION ${ANSOR_INSTALL_CMAKEDIR} COMPONENT generator)
  # The module and the CMake functions of each backend (AnsorKernels<Backend>.cmake), which it includes.
  file(GLOB kernel_modules ${CMAKE_CURRENT_LIST_DIR}/AnsorKernels*.cmake)
  install(FILES ${kernel_modules} DESTINATION ${ANSOR_INSTALL_CMAKEDIR} COMPONENT generator)
endif()
install(EXPORT AnsorRuntimeTargets NAMESPACE Ansor:: DESTINATION ${ANSOR_INSTALL_CMAKEDIR} COMPONENT runtime)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/AnsorConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/AnsorConfig.cmake
  INSTALL_DESTINATION ${ANSOR_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/AnsorConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/AnsorConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/AnsorConfigVersion.cmake
  DESTINATION ${ANSOR_INSTALL_CMAKEDIR} COMPONENT runtime)
