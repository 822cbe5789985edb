// Files the generator writes: whole or not at all, and untouched when unchanged so that build
// systems do not rebuild what did not change.
#pragma once

#include <optional>
#include <string>

namespace ansor {

// Writes through a temporary file and a rename. Returns true when the file changed. Throws
// std::runtime_error naming the path on failure.
bool write_file_if_changed(const std::string& path, const std::string& content);
std::optional<std::string> read_file(const std::string& path);

}  // namespace ansor
