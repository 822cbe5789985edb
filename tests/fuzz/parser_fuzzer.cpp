// libFuzzer target for the kernels.def front end: what `ansor-gen check` runs on a file.
//
// Any input must either load or be rejected with a CompileError that names a place in the file;
// anything else escaping (another exception, a crash, a sanitizer report, a hang) is a bug. For
// inputs that load, the cheap per-kernel results are computed too, and each kernel's fragment
// (the text a build step depends on) must load on its own to the same workload key.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "lang/program.h"

namespace {

std::shared_ptr<const ansor::SourceFile> make_file(std::string path, std::string text) {
  auto file = std::make_shared<ansor::SourceFile>();
  file->path = std::move(path);
  file->text = std::move(text);
  return file;
}

// An error must point into the file: a line that exists and a column at most one past its end.
void check_error_location(const ansor::CompileError& error) {
  const ansor::SourceLoc& loc = error.loc();
  if (!loc.valid() || loc.column < 1) std::abort();
  if (loc.line > loc.file->line_count()) std::abort();
  if (loc.column > static_cast<int>(loc.file->line_text(loc.line).size()) + 1) std::abort();
  if (error.render().empty()) std::abort();
}

void check_kernel(const ansor::Kernel& kernel) {
  if (kernel.dag.canonical_text().empty() || kernel.dag.workload_key().size() != 32) std::abort();
  ansor::Program alone = ansor::load_program(make_file("fragment.def", kernel.fragment));
  if (alone.kernels.size() != 1 || alone.kernels[0].dag.workload_key() != kernel.dag.workload_key()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = make_file("fuzz.def", std::string(reinterpret_cast<const char*>(data), size));
  ansor::Program program;
  try {
    program = ansor::load_program(file);
  } catch (const ansor::CompileError& error) {
    check_error_location(error);
    return 0;
  }
  for (const ansor::Kernel& kernel : program.kernels) check_kernel(kernel);
  return 0;
}
