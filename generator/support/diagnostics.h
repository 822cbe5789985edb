// Diagnostics for kernels.def: a position in a source file and errors that name it.
//
// Every user-facing error of the generator is a CompileError carrying a SourceLoc, rendered as
// `file:line:col: error: message` followed by the offending line and a caret under the column,
// the form compilers use and editors understand.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ansor {

// The length of the line break that starts at `pos` in `text`: 2 for "\r\n", 1 for a lone "\n"
// or a lone "\r" (old Mac files, and what a fuzzer writes), 0 where no line break starts. The
// lexer, the caret renderer and every other line count use this one definition so that a
// position always names a line that exists.
size_t line_break_length(const std::string& text, size_t pos);

// A source file's name and text, shared by every location that points into it.
struct SourceFile {
  std::string path;
  std::string text;

  // The text of a 1-based line, without its line break; empty when out of range.
  std::string line_text(int line) const;

  // How many lines the text has: one more than its line breaks.
  int line_count() const;
};

// A 1-based line and column in a source file. A default location means "no position".
struct SourceLoc {
  std::shared_ptr<const SourceFile> file;
  int line = 0;
  int column = 0;

  bool valid() const { return file != nullptr && line > 0; }
};

// An error in the user's input, with the place it refers to.
class CompileError : public std::runtime_error {
 public:
  CompileError(SourceLoc loc, const std::string& message);

  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

  // `file:line:col: error: message`, the source line and a caret line.
  std::string render() const;

 private:
  SourceLoc loc_;
  std::string message_;
};

}  // namespace ansor
