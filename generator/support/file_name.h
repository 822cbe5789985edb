// File names derived from free text (a target string names its cache file and its measurement
// lock): one mapping, so that every part finds the same file.
#pragma once

#include <string>
#include <string_view>

namespace ansor {

// `text` with every character but letters, digits, '_', '.' and '-' replaced by '-'
// (`cpu:x86_64:znver4:avx512:t2` → `cpu-x86_64-znver4-avx512-t2`).
std::string file_name_stem(std::string_view text);

}  // namespace ansor
