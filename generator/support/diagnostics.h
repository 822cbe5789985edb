// Diagnostics for kernels.def: a position in a source file and errors that name it.
//
// Every user-facing error of the generator is a CompileError carrying a SourceLoc, rendered as
// `file:line:col: error: message` followed by the offending line and a caret under the column,
// the form compilers use and editors understand.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ansor {

// A source file's name and text, shared by every location that points into it.
struct SourceFile {
  std::string path;
  std::string text;

  // The text of a 1-based line, without its line terminator; empty when out of range.
  std::string line_text(int line) const;
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
