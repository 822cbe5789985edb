// CMake text that backends write for the build (`ansor-gen configure`): `set()` lines whose
// values reach the CMake module verbatim.
#pragma once

#include <string>
#include <vector>

namespace ansor {

// `set(NAME "v1" "v2" ...)\n`, each value quoted so that spaces, quotes and `$`
// survive.
std::string cmake_set(const std::string& name, const std::vector<std::string>& values);

}  // namespace ansor
