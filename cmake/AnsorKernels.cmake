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
#     [FLAGS     <flags>...])  # replace the target's default kernel flags
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
# take device pointers (README, "CUDA kernels"). What differs per kind of target comes from the
# generator (`ansor-gen configure` writes it, generator/backend/) and from the CMake functions of
# the target's backend, AnsorKernels<Backend>.cmake; this module tests no kind.
#
# A named CPU (x86-64-v3, skylake-avx512, ...) builds and tunes with -march=<cpu> instead of
# -march=native; a CPU target string (cpu:x86_64:x86-64-v3:avx2:t2) with -march=native where it is
# this machine's own target, else with -march of its CPU where that gives the ISA it names, else it
# is a configure error (README, "TARGET cpu:..."). With TARGETS, each kernel is generated and
# compiled once per target, and the library picks at run time the variant the CPU runs that needs
# the most features (ANSOR_KERNEL_TARGET=<target> forces one; <lib>_target() says which runs).

include_guard(GLOBAL)

set(ANSOR_KERNEL_COMPILER "" CACHE FILEPATH "C++ compiler for generated kernels (default: clang++)")
set(ANSOR_TUNE_SHARD "" CACHE STRING
    "I/N: the <lib>_tune targets tune shard I of N of the kernels (ansor-gen tune --shard); empty: the job engine's variables, if any")
set(ANSOR_KERNEL_FLAGS "" CACHE STRING
    "Flags for generated kernels, replacing the target's defaults (empty: ansor-gen's, -O3 -march=native ... for a CPU)")

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

# The arguments of ansor_add_kernels() (its ARG_ variables), checked, with their defaults:
# sets `def`, `targets`, `trials`, `schedule` and `cache_args` (--cache DIR, or nothing) in the
# caller.
function(_ansor_check_arguments lib)
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
  set(trials ${ARG_TRIALS})
  if(NOT DEFINED ARG_TRIALS)
    set(trials 0)
  endif()
  if(NOT trials MATCHES "^[0-9]+$")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): TRIALS must be a non-negative integer")
  endif()
  set(schedule ${ARG_SCHEDULE})
  if(NOT schedule)
    set(schedule best)
  endif()
  set(cache_args)
  if(ARG_CACHE_DIR)
    get_filename_component(cache_dir "${ARG_CACHE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(cache_args --cache "${cache_dir}")
  elseif(schedule STREQUAL "best")
    # With a cache the build's records check names the untuned kernels; without one, every
    # kernel is untuned, and TRIALS cannot tune (records need a place to live).
    message(WARNING "ansor_add_kernels(${lib}): no CACHE_DIR, so no kernel has a tuning record and every kernel "
                    "runs its default schedule (not tuned); TRIALS ${trials} does nothing without one. "
                    "Give CACHE_DIR <dir> to tune (TRIALS, or the ${lib}_tune target) and to replay records.")
  endif()
  foreach(name def targets trials schedule cache_args)
    set(${name} "${${name}}" PARENT_SCOPE)
  endforeach()
endfunction()

# Runs `ansor-gen configure`: it checks kernels.def and the targets (a configure error naming
# file:line:col), and writes into `out_dir` the header, the registries, the per-kernel
# fragments and <lib>_kernels.cmake, which says what the build needs of the target's backend.
function(_ansor_run_configure lib gen def out_dir compiler flags)
  set(target_args)
  foreach(t IN LISTS ARGN)
    list(APPEND target_args --target "${t}")
  endforeach()
  list(JOIN flags " " flags_text)
  _ansor_runtime_include_dir(runtime_include)
  execute_process(
    COMMAND "${gen}" configure "${def}" --name "${lib}" --out "${out_dir}" ${target_args} --compiler "${compiler}" --flags "${flags_text}"
            --runtime-include "${runtime_include}"
    RESULT_VARIABLE rv OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rv MATCHES "^[0-9]+$")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): cannot run the generator ${gen}: ${rv}")
  elseif(NOT rv EQUAL 0)
    # The diagnostics verbatim: FATAL_ERROR would re-wrap "file:line:col: error: ..." lines.
    message("${err}")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): the generator rejects ${def} or the targets ${ARGN} (errors above)")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${def}")
endfunction()

# How build steps run the generator: by its target where there is one (an installed package's
# imported ansor-gen), so that CMake tracks it, a path otherwise. Under add_subdirectory(),
# Ansor::ansor-gen is the source tree's own target: the steps run the generator built at
# configure time instead, which ansor_generator_bootstrap keeps up to date, so that the parent's
# build does not compile the generator a second time. Sets `gen_command` and `gen_deps` in the
# caller.
function(_ansor_generator_command gen)
  set(gen_command "${gen}")
  set(gen_deps "${gen}")
  if(TARGET Ansor::ansor-gen AND NOT ANSOR_GEN_EXECUTABLE)
    get_target_property(imported Ansor::ansor-gen IMPORTED)
    if(imported)
      set(gen_command Ansor::ansor-gen)
      set(gen_deps Ansor::ansor-gen)
    endif()
  endif()
  if(TARGET ansor_generator_bootstrap)
    list(APPEND gen_deps ansor_generator_bootstrap)
  endif()
  set(gen_command ${gen_command} PARENT_SCOPE)
  set(gen_deps ${gen_deps} PARENT_SCOPE)
endfunction()

# Steps that may measure (tuning a kernel without a record) run one at a time under Ninja, so
# that no two measure at once and compiles stay parallel; the generator's lock serialises them
# under other generators. Sets `out_var` to the custom command's JOB_POOL arguments, if any.
function(_ansor_measure_pool out_var trials cache_args)
  set(pool)
  if(NOT trials EQUAL 0 AND cache_args AND CMAKE_GENERATOR MATCHES "Ninja")
    get_property(pools GLOBAL PROPERTY JOB_POOLS)
    if(NOT pools MATCHES "(^|;)ansor_measure=")
      set_property(GLOBAL APPEND PROPERTY JOB_POOLS ansor_measure=1)
    endif()
    set(pool JOB_POOL ansor_measure)
  endif()
  set(${out_var} ${pool} PARENT_SCOPE)
endfunction()

# The build of one variant `vlib` (the library itself for one target): a step per kernel that
# emits its source (tuning it first where TRIALS asks), and the backend's handling of each
# source. Appends to the caller's `parts` (what the library is made of), `stamps`,
# `stamp_commands` and `tune_commands`. Reads the caller's variables of the arguments and of
# <lib>_kernels.cmake.
function(_ansor_add_variant lib vlib)
  # Tuning measures with the compiler and flags that build the library: both are part of every
  # record's key.
  list(JOIN ANSOR_KERNEL_FLAGS_${vlib} " " flags_text)
  set(session_args --target "${ANSOR_KERNEL_STEP_TARGET_${vlib}}" --compiler "${ANSOR_KERNEL_BUILD_COMPILER}" --flags "${flags_text}")
  _ansor_runtime_include_dir(runtime_include)
  file(GLOB runtime_headers LIST_DIRECTORIES false "${runtime_include}/ansor/*.h")
  _ansor_measure_pool(measure_pool "${trials}" "${cache_args}")
  foreach(kernel IN LISTS ANSOR_KERNEL_NAMES)
    set(src "${out_dir}/${vlib}_${kernel}${ANSOR_KERNEL_SOURCE_EXTENSION}")
    set(stamp)
    if(cache_args AND schedule STREQUAL "best")
      set(stamp "${out_dir}/stamps/${vlib}_${kernel}.stamp")
      list(APPEND stamps "${stamp}")
    endif()
    add_custom_command(
      OUTPUT "${src}"
      COMMAND ${gen_command} emit "${out_dir}/defs/${kernel}.def" --name "${vlib}" --out "${out_dir}" --kernel "${kernel}"
              --schedule "${schedule}" ${cache_args} ${session_args} --trials "${trials}"
      DEPENDS "${out_dir}/defs/${kernel}.def" ${stamp} ${gen_deps}
      COMMENT "ansor: generating ${vlib} kernel ${kernel}"
      ${measure_pool}
      VERBATIM)
    cmake_language(CALL _ansor_kernels_${ANSOR_KERNEL_BACKEND}_source part ANSOR_KERNEL_COMPILE_${vlib} "${src}"
                   "ansor: compiling ${vlib} kernel ${kernel}" ${runtime_headers})
    list(APPEND parts "${part}")
  endforeach()
  cmake_language(CALL _ansor_kernels_${ANSOR_KERNEL_BACKEND}_source part ANSOR_KERNEL_COMPILE_${vlib} "${out_dir}/${vlib}_registry.cpp"
                 "ansor: compiling ${vlib} registry" "${out_dir}/${vlib}.h" ${runtime_headers})
  list(APPEND parts "${part}")
  list(APPEND stamp_commands COMMAND ${gen_command} emit "${def}" --name "${vlib}" --out "${out_dir}" --stamps-only ${cache_args}
       ${session_args} --trials "${trials}" --tune-hint "cmake --build ${CMAKE_BINARY_DIR} --target ${lib}_tune")
  set(trials_args)
  if(NOT trials EQUAL 0)
    set(trials_args --trials "${trials}")
  endif()
  if(ANSOR_TUNE_SHARD)
    list(APPEND trials_args --shard "${ANSOR_TUNE_SHARD}")
  endif()
  list(APPEND tune_commands COMMAND ${gen_command} tune "${def}" ${cache_args} ${session_args} ${trials_args})
  foreach(name parts stamps stamp_commands tune_commands)
    set(${name} "${${name}}" PARENT_SCOPE)
  endforeach()
endfunction()

# What ansor_install_kernels() and callers read of the library: its kernels.def, kernels,
# header and targets, and the targets built with -march=native (an installed archive of those
# runs only on CPUs like this one).
function(_ansor_set_library_properties lib def out_dir)
  set(step_targets)
  set(native_targets)
  foreach(vlib IN LISTS ANSOR_KERNEL_VARIANT_LIBS)
    list(APPEND step_targets "${ANSOR_KERNEL_STEP_TARGET_${vlib}}")
    if(ANSOR_KERNEL_FLAGS_${vlib} MATCHES "(^|;)-m(arch|cpu)=native(;|$)")
      list(APPEND native_targets "${ANSOR_KERNEL_STEP_TARGET_${vlib}}")
    endif()
  endforeach()
  set_property(TARGET ${lib} PROPERTY ANSOR_DEF "${def}")
  set_property(TARGET ${lib} PROPERTY ANSOR_KERNELS "${ANSOR_KERNEL_NAMES}")
  set_property(TARGET ${lib} PROPERTY ANSOR_HEADER "${out_dir}/${lib}.h")
  set_property(TARGET ${lib} PROPERTY ANSOR_TARGETS "${step_targets}")
  set_property(TARGET ${lib} PROPERTY ANSOR_NATIVE_TARGETS "${native_targets}")
endfunction()

# With records to replay, every build asks the generator which records each kernel would
# replay (well under a second); a kernel's stamp file changes only when they do (new or better
# records: a tuning run, `<lib>_tune`, a colleague's cache), and then that kernel alone is
# generated again, and compiled again if its source changed.
function(_ansor_add_records_check lib)
  if(NOT stamps)
    return()
  endif()
  add_custom_target(${lib}_records
    ${stamp_commands}
    BYPRODUCTS ${stamps}
    DEPENDS ${gen_deps}
    COMMENT "ansor: checking the records of ${lib}"
    VERBATIM)
  add_dependencies(${lib} ${lib}_records)
endfunction()

# `cmake --build . --target <lib>_tune` tunes every kernel as an explicit step (before a
# parallel build, say), the task scheduler sharing TRIALS per kernel (64 with TRIALS 0) among
# them; for several targets, each target the host's CPU runs in turn. With
# -DANSOR_TUNE_SHARD=I/N (or inside a Slurm array or an Indexed Job, whose variables ansor-gen
# reads) it tunes one shard of the kernels, for `ansor-gen cache merge` to pool afterwards.
function(_ansor_add_tune_target lib)
  if(NOT cache_args)
    return()
  endif()
  add_custom_target(${lib}_tune
    ${tune_commands}
    DEPENDS ${gen_deps}
    COMMENT "ansor: tuning ${lib}"
    USES_TERMINAL VERBATIM)
endfunction()

function(ansor_add_kernels lib)
  cmake_parse_arguments(ARG "" "DEF;CACHE_DIR;TARGET;TRIALS;SCHEDULE;COMPILER" "FLAGS;TARGETS" ${ARGN})
  _ansor_check_arguments(${lib})
  _ansor_generator(gen)
  _ansor_kernel_compiler(compiler "${ARG_COMPILER}")
  set(flags ${ARG_FLAGS})
  if(NOT flags)
    set(flags ${ANSOR_KERNEL_FLAGS})
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/ansor/${lib}")
  _ansor_run_configure(${lib} "${gen}" "${def}" "${out_dir}" "${compiler}" "${flags}" ${targets})
  # The kernel names, the backend, and per variant its step target, flags and compile command.
  include("${out_dir}/${lib}_kernels.cmake")
  include("${CMAKE_CURRENT_FUNCTION_LIST_DIR}/AnsorKernels${ANSOR_KERNEL_BACKEND}.cmake")
  list(GET targets 0 first_target)
  cmake_language(CALL _ansor_kernels_${ANSOR_KERNEL_BACKEND}_prepare ${lib} ${first_target})
  _ansor_generator_command("${gen}")

  set(parts)
  set(stamps)
  set(stamp_commands)
  set(tune_commands)
  foreach(vlib IN LISTS ANSOR_KERNEL_VARIANT_LIBS)
    _ansor_add_variant(${lib} ${vlib})
  endforeach()
  if(DEFINED ANSOR_KERNEL_DISPATCH_COMPILE)
    _ansor_runtime_include_dir(runtime_include)
    file(GLOB runtime_headers LIST_DIRECTORIES false "${runtime_include}/ansor/*.h")
    cmake_language(CALL _ansor_kernels_${ANSOR_KERNEL_BACKEND}_source part ANSOR_KERNEL_DISPATCH_COMPILE
                   "${out_dir}/${lib}_dispatch${ANSOR_KERNEL_SOURCE_EXTENSION}" "ansor: compiling ${lib} dispatcher" "${out_dir}/${lib}.h"
                   ${runtime_headers})
    list(APPEND parts "${part}")
  endif()
  cmake_language(CALL _ansor_kernels_${ANSOR_KERNEL_BACKEND}_library ${lib} ${parts})
  target_include_directories(${lib} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${lib} PUBLIC Ansor::runtime)
  _ansor_set_library_properties(${lib} "${def}" "${out_dir}")
  _ansor_add_records_check(${lib})
  _ansor_add_tune_target(${lib})
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
  # What the library's backend links beyond the runtime (CUDA::cudart, from the consumer's CUDA
  # toolkit).
  get_target_property(dependencies ${lib} ANSOR_PACKAGE_DEPENDENCIES)
  set(backend_dependencies "")
  foreach(dependency IN LISTS dependencies)
    if(dependency)
      string(APPEND backend_dependencies "${dependency}\n")
    endif()
  endforeach()
  file(WRITE "${config}"
       "# Package configuration of the pretuned kernel library ${lib}, generated by ansor_install_kernels().\n"
       "include(CMakeFindDependencyMacro)\n"
       "find_dependency(Ansor COMPONENTS runtime)\n"
       "${backend_dependencies}"
       "include(\"\${CMAKE_CURRENT_LIST_DIR}/${lib}Targets.cmake\")\n")
  install(FILES "${config}" DESTINATION ${ARG_DESTINATION} COMPONENT ${ARG_COMPONENT})
endfunction()
