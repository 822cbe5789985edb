# The CUDA backend's part of ansor_add_kernels() (generator/backend/cuda_backend.h): the
# project's CUDA compiler builds the generated sources as sources of the library, for the
# architecture `ansor-gen configure` wrote (ANSOR_KERNEL_CUDA_ARCHITECTURE) with its options
# (ANSOR_KERNEL_CUDA_OPTIONS), linked with CUDA::cudart.
include_guard(GLOBAL)

# The project must enable the CUDA language (enable_language() works at file scope only) and
# have the CUDA runtime: a clear configure error names what is missing. Records of CUDA kernels
# name the project's CUDA compiler.
function(_ansor_kernels_Cuda_prepare lib target)
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
  set(ANSOR_KERNEL_BUILD_COMPILER "${CMAKE_CUDA_COMPILER}" PARENT_SCOPE)
endfunction()

# A source is a source of the library: CMake's CUDA (or C++) language builds it.
function(_ansor_kernels_Cuda_source out_var command_var source comment)
  set(${out_var} "${source}" PARENT_SCOPE)
endfunction()

function(_ansor_kernels_Cuda_library lib)
  set_source_files_properties(${ARGN} PROPERTIES GENERATED TRUE)
  add_library(${lib} STATIC ${ARGN})
  set_target_properties(${lib} PROPERTIES CUDA_ARCHITECTURES ${ANSOR_KERNEL_CUDA_ARCHITECTURE} CUDA_STANDARD 17
                                          CUDA_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
  foreach(option IN LISTS ANSOR_KERNEL_CUDA_OPTIONS)
    target_compile_options(${lib} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${option}>")
  endforeach()
  target_link_libraries(${lib} PUBLIC CUDA::cudart)
  # An installed package finds the consumer's CUDA toolkit for CUDA::cudart.
  set_property(TARGET ${lib} PROPERTY ANSOR_PACKAGE_DEPENDENCIES "find_dependency(CUDAToolkit)")
endfunction()
