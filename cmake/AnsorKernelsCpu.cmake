# The CPU backend's part of ansor_add_kernels() (generator/backend/cpu_backend.h): each source
# is compiled into an object by the kernel compiler, with the command `ansor-gen configure`
# wrote for its variant (ANSOR_KERNEL_COMPILE_<variant>), and the objects form the library.
include_guard(GLOBAL)

# The kernel compiler was named to the generator, which wrote it as ANSOR_KERNEL_BUILD_COMPILER.
function(_ansor_kernels_Cpu_prepare lib target)
endfunction()

# The object of `source`, compiled by the command in the variable `command_var` (its <SOURCE>
# and <OUTPUT> filled in) and the build's extra flags (sanitisers) after its own, which they
# override; it depends on the source and the further files given.
function(_ansor_kernels_Cpu_source out_var command_var source comment)
  get_filename_component(dir "${source}" DIRECTORY)
  get_filename_component(name "${source}" NAME_WLE)
  set(object "${dir}/${name}.o")
  set(command ${${command_var}})
  list(TRANSFORM command REPLACE "^<SOURCE>$" "${source}")
  list(TRANSFORM command REPLACE "^<OUTPUT>$" "${object}")
  if(ANSOR_KERNEL_EXTRA_FLAGS)
    list(APPEND command ${ANSOR_KERNEL_EXTRA_FLAGS})
  endif()
  add_custom_command(
    OUTPUT "${object}"
    COMMAND ${command}
    DEPENDS "${source}" ${ARGN}
    COMMENT "${comment}"
    VERBATIM)
  set(${out_var} "${object}" PARENT_SCOPE)
endfunction()

function(_ansor_kernels_Cpu_library lib)
  set_source_files_properties(${ARGN} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${lib} STATIC ${ARGN})
  set_target_properties(${lib} PROPERTIES LINKER_LANGUAGE CXX)
endfunction()
