// The shape-free key of a computation.
#include "dag/computation_key.h"

#include <cctype>

namespace ansor {

std::string abstract_numbers(std::string_view text, AbstractedNumbers which) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && word_char(text[i - 1]))) {
      out += text[i];
      continue;
    }
    // The whole number: digits, fraction, exponent with its sign.
    size_t end = i + 1;
    while (end < text.size() && (word_char(text[end]) || text[end] == '.' ||
                                 ((text[end] == '-' || text[end] == '+') && (text[end - 1] == 'e' || text[end - 1] == 'E'))))
      ++end;
    std::string_view number = text.substr(i, end - i);
    bool real = number.find_first_of(".eE") != std::string_view::npos;
    out += which == AbstractedNumbers::All || !real ? std::string_view("#") : number;
    i = end - 1;
  }
  return out;
}

std::string computation_key(std::string_view canonical_text) {
  return hash_hex(abstract_numbers(canonical_text, AbstractedNumbers::Integers));
}

}  // namespace ansor
