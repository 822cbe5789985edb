// The file-name sanitiser.
#include "support/file_name.h"

#include <cctype>

namespace ansor {

std::string file_name_stem(std::string_view text) {
  std::string stem;
  stem.reserve(text.size());
  for (char c : text) stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '-';
  return stem;
}

}  // namespace ansor
