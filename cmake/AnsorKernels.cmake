# ansor_add_kernels(): turns a kernels.def into a static library of generated kernels.
#
#   ansor_add_kernels(<lib>
#     DEF        <kernels.def>
#     [CACHE_DIR <dir>]        # tuning records; commit it to ship them
#     [TARGET    host|<cpu>|<cpu target string>|cuda:sm_XX|cuda]
#     [TARGETS   host x86-64-v3 x86-64-v4 ...]    # one variant per CPU, dispatched at run time
#     [TRIALS    <n>]          # tuning budget per kernel without a record; 0: never measure
#     [SCHEDULE  best|default|naive]
#     [COMPILER  <c++ compiler for the kernels>]
#     [FLAGS     <flags>...])  # replace the default kernel flags
#
# Creates the static library target <lib> (linking Ansor::runtime) whose include directory
# holds <lib>.h. At configure time kernels.def is validated (a bad file is a configure error
# naming file:line:col) and split into one fragment per kernel; at build time each kernel is
# one step, so editing one kernel regenerates and recompiles that kernel alone.
#
# The kernels are compiled with clang++ by default, whatever compiles the rest of the project
# (ANSOR_KERNEL_COMPILER overrides it); they have a C interface, so any compiler links them.
#
# A CUDA target (cuda:sm_80, cuda:sm_90; cuda: the GPU present at configure time) generates .cu
# sources that the project's CUDA compiler builds for that architecture (CUDA_ARCHITECTURES),
# linked with CUDA::cudart: the project enables the CUDA language before the call. Its kernels
# take device pointers (README, "CUDA kernels").
#
# A named CPU (x86-64-v3, skylake-avx512, ...) builds and tunes with -march=<cpu> instead of
# -march=native. With TARGETS, each kernel is generated and compiled once per target, and the
# library picks at run time the variant the CPU runs that needs the most features
# (ANSOR_KERNEL_TARGET=<target> forces one; <lib>_target() says which runs).

include_guard(GLOBAL)

set(ANSOR_KERNEL_COMPILER "" CACHE FILEPATH "C++ compiler for generated kernels (default: clang++)")
set(ANSOR_KERNEL_FLAGS "-O3;-march=native;-fno-math-errno;-ffp-contract=fast" CACHE STRING
    "Optimisation flags for generated kernels")

# The ansor-gen executable: a prebuilt one (ANSOR_GEN_EXECUTABLE, or the one find_package(Ansor)
# imported), else one built now from the source tree this module belongs to.
function(_ansor_generator out_var)
  if(ANSOR_GEN_EXECUTABLE)
    set(${out_var} "${ANSOR_GEN_EXECUTABLE}" PARENT_SCOPE)
    return()
  endif()
  if(TARGET Ansor::ansor-gen)
    get_target_property(imported Ansor::ansor-gen IMPORTED)
    if(imported)
      get_target_property(location Ansor::ansor-gen IMPORTED_LOCATION)
      if(NOT location)
        # Installed from a build of any type: Release, Debug, RelWithDebInfo, ...
        get_target_property(configs Ansor::ansor-gen IMPORTED_CONFIGURATIONS)
        list(GET configs 0 config)
        get_target_property(location Ansor::ansor-gen IMPORTED_LOCATION_${config})
      endif()
      set(${out_var} "${location}" PARENT_SCOPE)
      return()
    endif()
  endif()
  # This file's directory, whichever directory scope calls: a variable set when the module is
  # included would not be visible from the scope of a parent project (add_subdirectory).
  get_filename_component(source_dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/.." ABSOLUTE)
  if(NOT EXISTS "${source_dir}/generator/CMakeLists.txt")
    message(FATAL_ERROR "ansor_add_kernels: no ansor-gen found; set ANSOR_GEN_EXECUTABLE or use find_package(Ansor)")
  endif()
  set(bootstrap_dir "${CMAKE_BINARY_DIR}/_ansor_generator")
  set(exe "${bootstrap_dir}/generator/ansor-gen")
  get_property(built GLOBAL PROPERTY _ANSOR_GENERATOR_BOOTSTRAPPED)
  if(NOT built)
    message(STATUS "ansor: building the generator for configure-time checks in ${bootstrap_dir}")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" -S "${source_dir}" -B "${bootstrap_dir}" -G "${CMAKE_GENERATOR}"
              -DANSOR_GENERATOR_ONLY=ON -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
      RESULT_VARIABLE rv OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(NOT rv EQUAL 0)
      message(FATAL_ERROR "ansor: configuring the generator failed:\n${log}")
    endif()
    cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
    execute_process(
      COMMAND "${CMAKE_COMMAND}" --build "${bootstrap_dir}" --target ansor-gen --parallel ${cores}
      RESULT_VARIABLE rv OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(NOT rv EQUAL 0)
      message(FATAL_ERROR "ansor: building the generator failed:\n${log}")
    endif()
    set_property(GLOBAL PROPERTY _ANSOR_GENERATOR_BOOTSTRAPPED TRUE)
    # Later builds pick up changes to the generator's sources.
    add_custom_target(ansor_generator_bootstrap
      COMMAND "${CMAKE_COMMAND}" --build "${bootstrap_dir}" --target ansor-gen
      BYPRODUCTS "${exe}"
      COMMENT "ansor: updating the generator")
  endif()
  set(${out_var} "${exe}" PARENT_SCOPE)
endfunction()

# The compiler for kernels: COMPILER, then ANSOR_KERNEL_COMPILER, then clang++.
function(_ansor_kernel_compiler out_var explicit)
  if(explicit)
    set(${out_var} "${explicit}" PARENT_SCOPE)
  elseif(ANSOR_KERNEL_COMPILER)
    set(${out_var} "${ANSOR_KERNEL_COMPILER}" PARENT_SCOPE)
  else()
    find_program(ANSOR_CLANGXX NAMES clang++ clang++-14 clang++-15 clang++-16 clang++-17 clang++-18)
    if(ANSOR_CLANGXX)
      set(${out_var} "${ANSOR_CLANGXX}" PARENT_SCOPE)
    else()
      message(WARNING "ansor: clang++ not found; generated kernels are compiled with ${CMAKE_CXX_COMPILER}, "
                      "which usually produces slower kernels")
      set(${out_var} "${CMAKE_CXX_COMPILER}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# The runtime headers that generated kernels include: set by AnsorConfig.cmake for an
# installed package, next to this module in the source tree otherwise.
function(_ansor_runtime_include_dir out_var)
  get_target_property(imported Ansor::runtime IMPORTED)
  if(imported)
    # An installed package: the imported target's include directory is a plain path.
    get_target_property(dirs Ansor::runtime INTERFACE_INCLUDE_DIRECTORIES)
    list(GET dirs 0 dir)
    set(${out_var} "${dir}" PARENT_SCOPE)
  else()
    get_filename_component(dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../runtime/include" ABSOLUTE)
    set(${out_var} "${dir}" PARENT_SCOPE)
  endif()
endfunction()

# Flags that build kernels for a named CPU (x86-64-v3): -march=native becomes -march=<cpu>, as
# the generator does (measure/cpu_variant.h), so that what is measured is what ships.
function(_ansor_flags_for_target out_var target)
  set(flags ${ARGN})
  if(target STREQUAL "host" OR target STREQUAL "cuda" OR target MATCHES ":")
    set(${out_var} ${flags} PARENT_SCOPE)
    return()
  endif()
  set(out)
  set(replaced FALSE)
  foreach(f IN LISTS flags)
    if(f STREQUAL "-march=native" OR f STREQUAL "-mcpu=native")
      list(APPEND out "-march=${target}")
      set(replaced TRUE)
    elseif(NOT f MATCHES "^-(march|mcpu)=")
      list(APPEND out "${f}")
    endif()
  endforeach()
  if(NOT replaced)
    list(APPEND out "-march=${target}")
  endif()
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()

# A CUDA target needs the CUDA language enabled in the calling project (enable_language() works
# at file scope only) and the CUDA runtime: a clear configure error names what is missing.
function(_ansor_require_cuda lib target)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "ansor_add_kernels(${lib}): TARGET ${target} builds CUDA kernels, but this project has not enabled the CUDA "
                          "language: add it (project(... LANGUAGES CXX CUDA) or enable_language(CUDA)) before ansor_add_kernels()")
    else()
      message(FATAL_ERROR "ansor_add_kernels(${lib}): TARGET ${target} builds CUDA kernels, but no CUDA compiler was found: install the "
                          "CUDA toolkit (nvcc) or set CMAKE_CUDA_COMPILER, and enable the CUDA language in the project")
    endif()
  endif()
  find_package(CUDAToolkit QUIET)
  if(NOT TARGET CUDA::cudart)
    message(FATAL_ERROR "ansor_add_kernels(${lib}): TARGET ${target} links the CUDA runtime, but find_package(CUDAToolkit) found no "
                        "CUDA::cudart: install the CUDA toolkit or point CUDAToolkit_ROOT at it")
  endif()
endfunction()

function(ansor_add_kernels lib)
  cmake_parse_arguments(ARG "" "DEF;CACHE_DIR;TARGET;TRIALS;SCHEDULE;COMPILER" "FLAGS;TARGETS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ansor_add_kernels(${lib}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_DEF)
    message(FATAL_ERROR "ansor_add_kernels(${lib}): DEF <kernels.def> is required")
  endif()
  if(NOT lib MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): the library name must be a C identifier")
  endif()
  get_filename_component(def "${ARG_DEF}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${def}")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): ${def} does not exist")
  endif()
  if(ARG_TARGET AND ARG_TARGETS)
    message(FATAL_ERROR "ansor_add_kernels(${lib}): give TARGET or TARGETS, not both")
  endif()
  set(targets ${ARG_TARGETS})
  if(ARG_TARGET)
    set(targets ${ARG_TARGET})
  elseif(NOT targets)
    set(targets host)
  endif()
  list(LENGTH targets target_count)
  if(NOT DEFINED ARG_TRIALS)
    set(ARG_TRIALS 0)
  endif()
  if(NOT ARG_TRIALS MATCHES "^[0-9]+$")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): TRIALS must be a non-negative integer")
  endif()
  if(NOT ARG_SCHEDULE)
    set(ARG_SCHEDULE best)
  endif()
  if(ARG_CACHE_DIR)
    get_filename_component(cache_dir "${ARG_CACHE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(cache_args --cache "${cache_dir}")
  else()
    set(cache_args)
    if(ARG_SCHEDULE STREQUAL "best")
      # With a cache the build's records check names the untuned kernels; without one, every
      # kernel is untuned, and TRIALS cannot tune (records need a place to live).
      message(WARNING "ansor_add_kernels(${lib}): no CACHE_DIR, so no kernel has a tuning record and every kernel "
                      "runs its default schedule (not tuned); TRIALS ${ARG_TRIALS} does nothing without one. "
                      "Give CACHE_DIR <dir> to tune (TRIALS, or the ${lib}_tune target) and to replay records.")
    endif()
  endif()

  list(GET targets 0 first_target)
  set(cuda FALSE)
  if(first_target MATCHES "^cuda(:|$)")
    set(cuda TRUE)
    _ansor_require_cuda(${lib} ${first_target})
  endif()

  _ansor_generator(gen)
  if(cuda)
    # Records of CUDA kernels name the CUDA compiler; -O3 and the architecture are their flags.
    set(cxx "${CMAKE_CUDA_COMPILER}")
  else()
    _ansor_kernel_compiler(cxx "${ARG_COMPILER}")
  endif()
  if(ARG_FLAGS)
    set(flags ${ARG_FLAGS})
  elseif(NOT cuda)
    set(flags ${ANSOR_KERNEL_FLAGS})
  endif()
  list(JOIN flags " " flags_text)

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/ansor/${lib}")
  set(target_args)
  foreach(t IN LISTS targets)
    list(APPEND target_args --target "${t}")
  endforeach()
  execute_process(
    COMMAND "${gen}" configure "${def}" --name "${lib}" --out "${out_dir}" ${target_args} --compiler "${cxx}" --flags "${flags_text}"
    RESULT_VARIABLE rv OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rv MATCHES "^[0-9]+$")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): cannot run the generator ${gen}: ${rv}")
  elseif(NOT rv EQUAL 0)
    # The diagnostics verbatim: FATAL_ERROR would re-wrap "file:line:col: error: ..." lines.
    message("${err}")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): the generator rejects ${def} or the targets ${targets} (errors above)")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${def}")
  # The kernel names, and what the target's code generator says its sources are and need.
  include("${out_dir}/${lib}_kernels.cmake")
  if(cuda)
    # `cuda` is the device found at configure time: the build steps name its architecture.
    set(targets cuda:sm_${ANSOR_KERNEL_CUDA_ARCHITECTURE})
    if(NOT ARG_FLAGS)
      set(flags -O3 -arch=sm_${ANSOR_KERNEL_CUDA_ARCHITECTURE})
      list(JOIN flags " " flags_text)
    endif()
  endif()
  set(language_flags ${ANSOR_KERNEL_EXTRA_FLAGS} ${ANSOR_KERNEL_LANGUAGE_FLAGS})

  # Build steps name the generator by its target where there is one (an installed package's
  # imported ansor-gen), so that CMake tracks it; a path otherwise.
  set(gen_command "${gen}")
  set(gen_deps "${gen}")
  if(TARGET Ansor::ansor-gen AND NOT ANSOR_GEN_EXECUTABLE)
    set(gen_command Ansor::ansor-gen)
    set(gen_deps Ansor::ansor-gen)
  endif()
  if(TARGET ansor_generator_bootstrap)
    list(APPEND gen_deps ansor_generator_bootstrap)
  endif()
  _ansor_runtime_include_dir(runtime_include)
  file(GLOB runtime_headers LIST_DIRECTORIES false "${runtime_include}/ansor/*.h")
  set(include_flags "-I${runtime_include}")

  # The variants: one library prefix per target (the library itself for a single target).
  if(target_count EQUAL 1)
    set(variant_libs ${lib})
  else()
    set(variant_libs ${ANSOR_KERNEL_VARIANT_LIBS})
  endif()

  # Steps that may measure (tuning a kernel without a record) run one at a time under Ninja, so
  # that no two measure at once and compiles stay parallel; the generator's lock serialises them
  # under other generators.
  set(measure_pool)
  if(NOT ARG_TRIALS EQUAL 0 AND ARG_CACHE_DIR AND CMAKE_GENERATOR MATCHES "Ninja")
    get_property(pools GLOBAL PROPERTY JOB_POOLS)
    if(NOT pools MATCHES "(^|;)ansor_measure=")
      set_property(GLOBAL APPEND PROPERTY JOB_POOLS ansor_measure=1)
    endif()
    set(measure_pool JOB_POOL ansor_measure)
  endif()

  set(objects)
  set(cuda_sources)
  set(stamps)
  set(stamp_commands)
  set(tune_commands)
  foreach(t vlib IN ZIP_LISTS targets variant_libs)
    # Tuning measures with the compiler and flags that build the library: both are part of every
    # record's key.
    _ansor_flags_for_target(vflags "${t}" ${flags})
    list(JOIN vflags " " vflags_text)
    set(session_args --target "${t}" --compiler "${cxx}" --flags "${vflags_text}")
    set(compile_flags ${vflags} ${language_flags})
    foreach(kernel IN LISTS ANSOR_KERNEL_NAMES)
      set(src "${out_dir}/${vlib}_${kernel}${ANSOR_KERNEL_SOURCE_EXTENSION}")
      set(obj "${out_dir}/${vlib}_${kernel}.o")
      set(stamp)
      if(ARG_CACHE_DIR AND ARG_SCHEDULE STREQUAL "best")
        set(stamp "${out_dir}/stamps/${vlib}_${kernel}.stamp")
        list(APPEND stamps "${stamp}")
      endif()
      add_custom_command(
        OUTPUT "${src}"
        COMMAND ${gen_command} emit "${out_dir}/defs/${kernel}.def" --name "${vlib}" --out "${out_dir}" --kernel "${kernel}"
                --schedule "${ARG_SCHEDULE}" ${cache_args} ${session_args} --trials "${ARG_TRIALS}"
        DEPENDS "${out_dir}/defs/${kernel}.def" ${stamp} ${gen_deps}
        COMMENT "ansor: generating ${vlib} kernel ${kernel}"
        ${measure_pool}
        VERBATIM)
      if(cuda)
        # The project's CUDA compiler builds it as a source of the library.
        list(APPEND cuda_sources "${src}")
        continue()
      endif()
      add_custom_command(
        OUTPUT "${obj}"
        COMMAND "${cxx}" ${compile_flags} "${include_flags}" -c "${src}" -o "${obj}"
        DEPENDS "${src}" ${runtime_headers}
        COMMENT "ansor: compiling ${vlib} kernel ${kernel}"
        VERBATIM)
      list(APPEND objects "${obj}")
    endforeach()
    if(cuda)
      list(APPEND cuda_sources "${out_dir}/${vlib}_registry.cpp")
    else()
      set(registry_obj "${out_dir}/${vlib}_registry.o")
      add_custom_command(
        OUTPUT "${registry_obj}"
        COMMAND "${cxx}" ${compile_flags} "${include_flags}" -c "${out_dir}/${vlib}_registry.cpp" -o "${registry_obj}"
        DEPENDS "${out_dir}/${vlib}_registry.cpp" "${out_dir}/${vlib}.h" ${runtime_headers}
        COMMENT "ansor: compiling ${vlib} registry"
        VERBATIM)
      list(APPEND objects "${registry_obj}")
    endif()
    list(APPEND stamp_commands COMMAND ${gen_command} emit "${def}" --name "${vlib}" --out "${out_dir}" --stamps-only ${cache_args}
         ${session_args} --trials "${ARG_TRIALS}" --tune-hint "cmake --build ${CMAKE_BINARY_DIR} --target ${lib}_tune")
    set(trials_args)
    if(NOT ARG_TRIALS EQUAL 0)
      set(trials_args --trials "${ARG_TRIALS}")
    endif()
    list(APPEND tune_commands COMMAND ${gen_command} tune "${def}" ${cache_args} ${session_args} ${trials_args})
  endforeach()
  if(NOT target_count EQUAL 1)
    # The dispatcher runs before it knows the CPU: it is built for the architecture's baseline.
    set(dispatch_flags ${flags})
    if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
      _ansor_flags_for_target(dispatch_flags x86-64 ${flags})
    endif()
    set(dispatch_obj "${out_dir}/${lib}_dispatch.o")
    add_custom_command(
      OUTPUT "${dispatch_obj}"
      COMMAND "${cxx}" ${dispatch_flags} ${language_flags} "${include_flags}" -c "${out_dir}/${lib}_dispatch${ANSOR_KERNEL_SOURCE_EXTENSION}"
              -o "${dispatch_obj}"
      DEPENDS "${out_dir}/${lib}_dispatch${ANSOR_KERNEL_SOURCE_EXTENSION}" "${out_dir}/${lib}.h" ${runtime_headers}
      COMMENT "ansor: compiling ${lib} dispatcher"
      VERBATIM)
    list(APPEND objects "${dispatch_obj}")
  endif()

  if(cuda)
    set_source_files_properties(${cuda_sources} PROPERTIES GENERATED TRUE)
    add_library(${lib} STATIC ${cuda_sources})
    # Generated kernels are optimised whatever the build type; the architecture is the target's.
    set_target_properties(${lib} PROPERTIES CUDA_ARCHITECTURES ${ANSOR_KERNEL_CUDA_ARCHITECTURE} CUDA_STANDARD 17
                                            CUDA_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
    if(ARG_FLAGS)
      target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${ARG_FLAGS}>)
    endif()
    target_link_libraries(${lib} PUBLIC CUDA::cudart)
  else()
    set_source_files_properties(${objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    add_library(${lib} STATIC ${objects})
    set_target_properties(${lib} PROPERTIES LINKER_LANGUAGE CXX)
  endif()
  target_include_directories(${lib} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${lib} PUBLIC Ansor::runtime)
  set_property(TARGET ${lib} PROPERTY ANSOR_DEF "${def}")
  set_property(TARGET ${lib} PROPERTY ANSOR_KERNELS "${ANSOR_KERNEL_NAMES}")
  set_property(TARGET ${lib} PROPERTY ANSOR_HEADER "${out_dir}/${lib}.h")
  set_property(TARGET ${lib} PROPERTY ANSOR_TARGETS "${targets}")
  set(native_targets)
  foreach(t IN LISTS targets)
    _ansor_flags_for_target(vflags "${t}" ${flags})
    if(vflags MATCHES "(^|;)-m(arch|cpu)=native(;|$)")
      list(APPEND native_targets "${t}")
    endif()
  endforeach()
  set_property(TARGET ${lib} PROPERTY ANSOR_NATIVE_TARGETS "${native_targets}")

  if(stamps)
    # With records to replay, every build asks the generator which records each kernel would
    # replay (well under a second); a kernel's stamp file changes only when they do (new or
    # better records: a tuning run, `<lib>_tune`, a colleague's cache), and then that kernel
    # alone is generated again, and compiled again if its source changed.
    add_custom_target(${lib}_records
      ${stamp_commands}
      BYPRODUCTS ${stamps}
      DEPENDS ${gen_deps}
      COMMENT "ansor: checking the records of ${lib}"
      VERBATIM)
    add_dependencies(${lib} ${lib}_records)
  endif()

  if(ARG_CACHE_DIR)
    # `cmake --build . --target <lib>_tune` tunes every kernel as an explicit step (before a
    # parallel build, say), the task scheduler sharing TRIALS per kernel (64 with TRIALS 0) among
    # them; for several targets, each target the host's CPU runs in turn.
    add_custom_target(${lib}_tune
      ${tune_commands}
      DEPENDS ${gen_deps}
      COMMENT "ansor: tuning ${lib}"
      USES_TERMINAL VERBATIM)
  endif()
endfunction()

# ansor_install_kernels(<lib> [NAMESPACE <ns>] [DESTINATION <dir for the package files>]
#                       [COMPONENT <install component>])
#
# Installs a kernel library made by ansor_add_kernels() as a CMake package of its own, so that
# a downstream project links the pretuned kernels with
#   find_package(<lib> REQUIRED)
#   target_link_libraries(app PRIVATE <ns><lib>)        # <ns> defaults to <lib>::
# The package holds the archive, the header and <lib>Config.cmake, which finds Ansor's runtime
# component (`find_package(Ansor COMPONENTS runtime)`): the downstream project needs neither the
# generator nor its dependencies.
function(ansor_install_kernels lib)
  cmake_parse_arguments(ARG "" "NAMESPACE;DESTINATION;COMPONENT" "" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ansor_install_kernels(${lib}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${lib})
    message(FATAL_ERROR "ansor_install_kernels(${lib}): no target ${lib}; call ansor_add_kernels(${lib} ...) first")
  endif()
  get_target_property(header ${lib} ANSOR_HEADER)
  if(NOT header)
    message(FATAL_ERROR "ansor_install_kernels(${lib}): ${lib} was not made by ansor_add_kernels()")
  endif()
  get_target_property(native_targets ${lib} ANSOR_NATIVE_TARGETS)
  if(native_targets)
    # Such an archive runs only on CPUs with every feature of the build machine: fine for one's
    # own servers, a crash (illegal instruction) elsewhere.
    string(REPLACE ";" ", " native_list "${native_targets}")
    message(WARNING "ansor_install_kernels(${lib}): the package ships kernels built with -march=native (${native_list}), "
                    "which run only on CPUs with every instruction set of this machine. To ship to other machines, build "
                    "for named CPUs: TARGET x86-64-v3 (any AVX2 CPU), or TARGETS x86-64-v3 x86-64-v4 ... (one variant "
                    "each, the best the CPU runs chosen at run time).")
  endif()
  include(GNUInstallDirs)
  include(CMakePackageConfigHelpers)
  if(NOT DEFINED ARG_NAMESPACE)
    set(ARG_NAMESPACE "${lib}::")
  endif()
  if(NOT ARG_DESTINATION)
    set(ARG_DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/${lib}")
  endif()
  if(NOT ARG_COMPONENT)
    set(ARG_COMPONENT ${lib})
  endif()
  target_include_directories(${lib} INTERFACE "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  install(TARGETS ${lib} EXPORT ${lib}Targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${ARG_COMPONENT})
  install(FILES "${header}" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT ${ARG_COMPONENT})
  install(EXPORT ${lib}Targets NAMESPACE ${ARG_NAMESPACE} DESTINATION ${ARG_DESTINATION} COMPONENT ${ARG_COMPONENT})
  set(config "${CMAKE_CURRENT_BINARY_DIR}/ansor/${lib}Config.cmake")
  # CUDA kernels link CUDA::cudart, which the consumer's CUDA toolkit provides.
  get_target_property(targets ${lib} ANSOR_TARGETS)
  set(cuda_dependency "")
  if(targets MATCHES "^cuda")
    set(cuda_dependency "find_dependency(CUDAToolkit)\n")
  endif()
  file(WRITE "${config}"
       "# Package configuration of the pretuned kernel library ${lib}, generated by ansor_install_kernels().\n"
       "include(CMakeFindDependencyMacro)\n"
       "find_dependency(Ansor COMPONENTS runtime)\n"
       "${cuda_dependency}"
       "include(\"\${CMAKE_CURRENT_LIST_DIR}/${lib}Targets.cmake\")\n")
  install(FILES "${config}" DESTINATION ${ARG_DESTINATION} COMPONENT ${ARG_COMPONENT})
endfunction()
