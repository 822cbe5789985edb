// Rendering of CompileError in the compiler-style `file:line:col: error:` form.
#include "support/diagnostics.h"

#include <fmt/format.h>

namespace ansor {

std::string SourceFile::line_text(int line) const {
  if (line < 1) return {};
  size_t begin = 0;
  for (int l = 1; l < line; ++l) {
    size_t nl = text.find('\n', begin);
    if (nl == std::string::npos) return {};
    begin = nl + 1;
  }
  size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  if (end > begin && text[end - 1] == '\r') --end;
  return text.substr(begin, end - begin);
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
