// Rendering of CompileError in the compiler-style `file:line:col: error:` form.
#include "support/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>

namespace ansor {

size_t line_break_length(const std::string& text, size_t pos) {
  if (pos >= text.size()) return 0;
  if (text[pos] == '\n') return 1;
  if (text[pos] != '\r') return 0;
  return pos + 1 < text.size() && text[pos + 1] == '\n' ? 2 : 1;
}

std::string SourceFile::line_text(int line) const {
  if (line < 1) return {};
  int current = 1;
  size_t begin = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t brk = line_break_length(text, pos);
    if (brk == 0) {
      ++pos;
      continue;
    }
    if (current == line) return text.substr(begin, pos - begin);
    ++current;
    pos += brk;
    begin = pos;
  }
  return current == line ? text.substr(begin) : std::string();
}

int SourceFile::line_count() const {
  int lines = 1;
  for (size_t pos = 0; pos < text.size();) {
    size_t brk = line_break_length(text, pos);
    lines += brk > 0;
    pos += std::max<size_t>(brk, 1);
  }
  return lines;
}

CompileError::CompileError(SourceLoc loc, const std::string& message)
    : std::runtime_error(message), loc_(std::move(loc)), message_(message) {}

std::string CompileError::render() const {
  if (!loc_.valid()) return fmt::format("error: {}", message_);
  std::string out = fmt::format("{}:{}:{}: error: {}", loc_.file->path, loc_.line, loc_.column, message_);
  std::string line = loc_.file->line_text(loc_.line);
  out += "\n" + line + "\n";
  // Keep tabs in the caret's indentation so that it lines up however tabs are displayed.
  int width = std::max(0, std::min<int>(loc_.column - 1, static_cast<int>(line.size())));
  for (int i = 0; i < width; ++i) out += line[i] == '\t' ? '\t' : ' ';
  out += '^';
  return out;
}

}  // namespace ansor
