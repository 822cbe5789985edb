# The layering check: no source of the generator includes a header of a layer that is not below
# its own (README.md, "Layers").
#
#   cmake -DGRAPH=<build>/generator/layers.cmake -DROOT=<source>/generator -P check_layers.cmake
#
# GRAPH is the layer graph that generator/CMakeLists.txt writes at configure time; ROOT is a
# tree laid out like generator/ (one folder per layer). Every `#include "LAYER/..."` in
# ROOT/**/*.{h,cpp,def} is checked against the transitive closure of the including file's layer;
# each violation is printed as `ROOT_NAME/FILE:LINE: error: ...`, and any makes the script fail.
cmake_minimum_required(VERSION 3.20)

if(NOT GRAPH OR NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DGRAPH=<layers.cmake> -DROOT=<generator dir> -P check_layers.cmake")
endif()
include(${GRAPH})

# below_<layer>: every layer that <layer> may use, directly or through others.
foreach(layer IN LISTS ANSOR_LAYERS)
  set(below_${layer} "")
  set(todo ${ANSOR_LAYER_DEPENDS_${layer}})
  while(todo)
    list(POP_FRONT todo dep)
    if(NOT dep IN_LIST below_${layer})
      list(APPEND below_${layer} ${dep})
      list(APPEND todo ${ANSOR_LAYER_DEPENDS_${dep}})
    endif()
  endwhile()
endforeach()

get_filename_component(root_name ${ROOT} NAME)
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/*.h ${ROOT}/*.cpp ${ROOT}/*.def)
list(SORT files)
set(violations 0)
foreach(file IN LISTS files)
  string(REGEX MATCH "^[^/]+" from "${file}")
  if(from STREQUAL file)
    continue()  # not in a folder: no layer's source
  endif()
  if(NOT from IN_LIST ANSOR_LAYERS)
    message("${root_name}/${file}: error: folder '${from}' is no layer (declare it in generator/CMakeLists.txt)")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  file(READ ${ROOT}/${file} text)
  # One list element per line: characters that CMake lists treat specially never matter in an
  # include line, so they go first.
  string(REGEX REPLACE "[][;\\]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"(([^/\"]+)/[^\"]*)\"")
      continue()
    endif()
    set(header ${CMAKE_MATCH_1})
    set(to ${CMAKE_MATCH_2})
    if(to STREQUAL from OR to IN_LIST below_${from})
      continue()
    endif()
    if(to IN_LIST ANSOR_LAYERS)
      message("${root_name}/${file}:${number}: error: layer '${from}' may not include \"${header}\" (${to} is not below ${from})")
    else()
      message("${root_name}/${file}:${number}: error: \"${header}\" is in no layer")
    endif()
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()

list(LENGTH files checked)
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} layering violation(s) in ${checked} files")
endif()
message(STATUS "layers: ${checked} files, no violations")
