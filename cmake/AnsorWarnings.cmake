# Warning flags for the project's own targets: -Wall -Wextra, and no warnings tolerated in CI.
function(ansor_enable_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports std::string concatenations inlined at -O3 as overlapping, oversized or
    # out-of-bounds memcpy (GCC bugs 105329, 105651, 105746): false positives in libstdc++.
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-stringop-overflow -Wno-array-bounds)
  endif()
  if(ANSOR_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
