# Plants sources with known includes into a tree laid out like generator/ and runs the layering
# check on it: it must fail, naming exactly the upward include and the folder that is no layer.
#
#   cmake -DCHECKER=<check_layers.cmake> -DGRAPH=<layers.cmake> -DWORK_DIR=<dir> -P planted_violation_test.cmake
set(root ${WORK_DIR}/generator)
file(REMOVE_RECURSE ${WORK_DIR})
# Its own layer and one below are allowed; line 3 points upwards.
file(WRITE ${root}/schedule/planted.cpp
     "#include \"schedule/state.h\"\n#include \"dag/compute_dag.h\"\n#include \"driver/cli.h\"\n")
# Two layers down, through tune -> measure -> codegen -> lower.
file(WRITE ${root}/driver/allowed.h "#pragma once\n#include \"lower/lower.h\"\n")
file(WRITE ${root}/not_a_layer/model.h "#pragma once\n")

execute_process(COMMAND ${CMAKE_COMMAND} -DGRAPH=${GRAPH} -DROOT=${root} -P ${CHECKER}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(status EQUAL 0)
  message(FATAL_ERROR "the check passed a tree with an upward include:\n${output}")
endif()
set(expected
    "generator/not_a_layer/model.h: error: folder 'not_a_layer' is no layer"
    "generator/schedule/planted.cpp:3: error: layer 'schedule' may not include \"driver/cli.h\" (driver is not below schedule)")
foreach(line IN LISTS expected)
  string(FIND "${output}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check did not report\n  ${line}\nit said:\n${output}")
  endif()
endforeach()
string(REGEX MATCHALL "error: " errors "${output}")
list(LENGTH errors count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "expected 2 errors, the check reported ${count}:\n${output}")
endif()
message(STATUS "the planted violations were reported:\n${output}")
