# ansor_add_kernels(): turns a kernels.def into a static library of generated kernels.
#
#   ansor_add_kernels(<lib>
#     DEF        <kernels.def>
#     [CACHE_DIR <dir>]        # tuning records; commit it to ship them
#     [TARGET    host|<cpu target string>]  # cuda:sm_XX: refused until CUDA codegen exists
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

function(ansor_add_kernels lib)
  cmake_parse_arguments(ARG "" "DEF;CACHE_DIR;TARGET;TRIALS;SCHEDULE;COMPILER" "FLAGS" ${ARGN})
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
  if(NOT ARG_TARGET)
    set(ARG_TARGET host)
  endif()
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
  endif()

  _ansor_generator(gen)
  _ansor_kernel_compiler(cxx "${ARG_COMPILER}")
  if(ARG_FLAGS)
    set(flags ${ARG_FLAGS})
  else()
    set(flags ${ANSOR_KERNEL_FLAGS})
  endif()
  # Tuning measures with the compiler and optimisation flags that build the library; both are
  # part of every record's key.
  list(JOIN flags " " flags_text)
  set(tuning_args --trials "${ARG_TRIALS}" --compiler "${cxx}" --flags "${flags_text}")

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/ansor/${lib}")
  execute_process(
    COMMAND "${gen}" configure "${def}" --name "${lib}" --out "${out_dir}" --target "${ARG_TARGET}"
    RESULT_VARIABLE rv OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rv MATCHES "^[0-9]+$")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): cannot run the generator ${gen}: ${rv}")
  elseif(NOT rv EQUAL 0)
    # The diagnostics verbatim: FATAL_ERROR would re-wrap "file:line:col: error: ..." lines.
    message("${err}")
    message(FATAL_ERROR "ansor_add_kernels(${lib}): the generator rejects ${def} or TARGET ${ARG_TARGET} (errors above)")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${def}")
  # The kernel names, and what the target's code generator says its sources are and need.
  include("${out_dir}/${lib}_kernels.cmake")
  list(APPEND flags ${ANSOR_KERNEL_EXTRA_FLAGS} ${ANSOR_KERNEL_LANGUAGE_FLAGS})

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

  # With records to replay, every build asks the generator which records each kernel would
  # replay (well under a second); a kernel's stamp file changes only when they do (new or better
  # records: a tuning run, `<lib>_tune`, a colleague's cache), and then that kernel alone is
  # generated again, and compiled again if its source changed.
  set(stamp_deps)
  if(ARG_CACHE_DIR AND ARG_SCHEDULE STREQUAL "best")
    set(stamps)
    foreach(kernel IN LISTS ANSOR_KERNEL_NAMES)
      list(APPEND stamps "${out_dir}/stamps/${kernel}.stamp")
    endforeach()
    add_custom_target(${lib}_records
      COMMAND ${gen_command} emit "${def}" --name "${lib}" --out "${out_dir}" --stamps-only --target "${ARG_TARGET}" ${cache_args}
              --compiler "${cxx}" --flags "${flags_text}" --trials "${ARG_TRIALS}"
              --tune-hint "cmake --build ${CMAKE_BINARY_DIR} --target ${lib}_tune"
      BYPRODUCTS ${stamps}
      DEPENDS ${gen_deps}
      COMMENT "ansor: checking the records of ${lib}"
      VERBATIM)
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
  foreach(kernel IN LISTS ANSOR_KERNEL_NAMES)
    set(src "${out_dir}/${lib}_${kernel}${ANSOR_KERNEL_SOURCE_EXTENSION}")
    set(obj "${out_dir}/${lib}_${kernel}.o")
    set(stamp)
    if(TARGET ${lib}_records)
      set(stamp "${out_dir}/stamps/${kernel}.stamp")
    endif()
    add_custom_command(
      OUTPUT "${src}"
      COMMAND ${gen_command} emit "${out_dir}/defs/${kernel}.def" --name "${lib}" --out "${out_dir}" --kernel "${kernel}"
              --target "${ARG_TARGET}" --schedule "${ARG_SCHEDULE}" ${cache_args} ${tuning_args}
      DEPENDS "${out_dir}/defs/${kernel}.def" ${stamp} ${gen_deps}
      COMMENT "ansor: generating ${lib} kernel ${kernel}"
      ${measure_pool}
      VERBATIM)
    add_custom_command(
      OUTPUT "${obj}"
      COMMAND "${cxx}" ${flags} "${include_flags}" -c "${src}" -o "${obj}"
      DEPENDS "${src}" ${runtime_headers}
      COMMENT "ansor: compiling ${lib} kernel ${kernel}"
      VERBATIM)
    list(APPEND objects "${obj}")
  endforeach()
  set(registry_obj "${out_dir}/${lib}_registry.o")
  add_custom_command(
    OUTPUT "${registry_obj}"
    COMMAND "${cxx}" ${flags} "${include_flags}" -c "${out_dir}/${lib}_registry.cpp" -o "${registry_obj}"
    DEPENDS "${out_dir}/${lib}_registry.cpp" "${out_dir}/${lib}.h" ${runtime_headers}
    COMMENT "ansor: compiling ${lib} registry"
    VERBATIM)
  list(APPEND objects "${registry_obj}")

  set_source_files_properties(${objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${lib} STATIC ${objects})
  if(TARGET ${lib}_records)
    add_dependencies(${lib} ${lib}_records)
  endif()
  set_target_properties(${lib} PROPERTIES LINKER_LANGUAGE CXX)
  target_include_directories(${lib} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${lib} PUBLIC Ansor::runtime)
  set_property(TARGET ${lib} PROPERTY ANSOR_DEF "${def}")
  set_property(TARGET ${lib} PROPERTY ANSOR_KERNELS "${ANSOR_KERNEL_NAMES}")
  set_property(TARGET ${lib} PROPERTY ANSOR_HEADER "${out_dir}/${lib}.h")

  if(ARG_CACHE_DIR)
    # `cmake --build . --target <lib>_tune` tunes every kernel as an explicit step (before a
    # parallel build, say). TRIALS 0 only turns off tuning during the build.
    set(trials_args)
    if(NOT ARG_TRIALS EQUAL 0)
      set(trials_args --trials "${ARG_TRIALS}")
    endif()
    add_custom_target(${lib}_tune
      COMMAND ${gen_command} tune "${def}" --cache "${cache_dir}" --target "${ARG_TARGET}" --compiler "${cxx}" --flags "${flags_text}"
              ${trials_args}
      DEPENDS ${gen_deps}
      COMMENT "ansor: tuning ${lib}"
      USES_TERMINAL VERBATIM)
  endif()
endfunction()
