# Installation and the package configuration for find_package(Ansor): the ansor-gen
# executable, the runtime library and headers, and the ansor_add_kernels() module.
include(CMakePackageConfigHelpers)

set(ANSOR_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Ansor")

install(TARGETS ansor-gen EXPORT AnsorTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Tuning runs candidates in this worker, found next to ansor-gen.
install(TARGETS ansor-measure-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT AnsorTargets NAMESPACE Ansor:: DESTINATION ${ANSOR_INSTALL_CMAKEDIR})

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
  ${CMAKE_CURRENT_LIST_DIR}/AnsorKernels.cmake
  DESTINATION ${ANSOR_INSTALL_CMAKEDIR})
