// Batched, parallel, time-limited compilation of candidates.
#include "measure/builder.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "lower/lower.h"
#include "measure/process.h"
#include "support/file_util.h"
#include "support/stable_hash.h"

namespace ansor {

namespace {

// A candidate with a fault: the real kernel under another name, and a descriptor whose packed
// call misbehaves. Only tests plant faults.
std::string faulty_definitions(const std::string& inner_definitions, const Candidate& c, const std::string& symbol) {
  std::string out = inner_definitions;
  std::string before, after;
  switch (c.fault) {
    case PlantedFault::CompileError: before = "#error \"planted compile error\"\n"; break;
    case PlantedFault::Crash: before = "  __builtin_trap();\n"; break;
    case PlantedFault::Hang: before = "  for (;;) __asm__ volatile(\"\");\n"; break;
    case PlantedFault::WrongResult: {
      // Flips a high bit (the exponent, for floats) of the first output's first element; the
      // outputs follow the inputs.
      const ComputeDAG& dag = c.state.dag();
      int bytes = dtype_bytes(dag.op(dag.outputs()[0]).dtype);
      after = fmt::format("  static_cast<unsigned char*>(args[{}])[{}] ^= 0x40;\n", dag.inputs().size(), bytes - 1);
      break;
    }
    case PlantedFault::None: break;
  }
  out += fmt::format(
      "namespace {0}_fault {{\nconst ansor_kernel_info& inner = {0}_inner_definitions::{0}_inner_info;\n"
      "int call_packed(void* const* args) {{\n{1}  int status = inner.call_packed(args);\n{2}  return status;\n}}\n}}\n"
      "extern \"C\" {{\nextern const ansor_kernel_info {0}_info;\n"
      "const ansor_kernel_info {0}_info = {{ANSOR_KERNEL_INFO_VERSION, {0}_fault::inner.name, {0}_fault::inner.workload_key, {0}_fault::inner.schedule,\n"
      "    {0}_fault::inner.flops, {0}_fault::inner.num_args, {0}_fault::inner.args, {0}_fault::inner.call, {0}_fault::call_packed,\n"
      "    {0}_fault::inner.pack, {0}_fault::inner.packed_elements, {0}_fault::inner.device}};\n}}\n",
      symbol, before, after);
  return out;
}

std::string first_lines(const std::string& text, int n) {
  size_t pos = 0;
  for (int i = 0; i < n && pos != std::string::npos; ++i) pos = text.find('\n', pos + 1);
  return pos == std::string::npos ? text : text.substr(0, pos);
}

// The identity of a printed program: its source with the candidate's symbol (unique to each
// candidate) replaced, hashed.
std::string program_identity(std::string source, const std::string& symbol) {
  for (size_t at = source.find(symbol); at != std::string::npos; at = source.find(symbol, at + 1)) source.replace(at, symbol.size(), "@");
  return fmt::format("{:016x}", stable_hash64(source));
}

UnitPlannerOptions planner_options(const KernelCompiler& compiler) {
  UnitPlannerOptions options;
  // Start-up is mostly parsing the runtime headers, unless clang reads them precompiled.
  if (!compiler.is_clang()) options.startup_seconds = 0.5;
  return options;
}

}  // namespace

Builder::Builder(KernelCompiler compiler, Target target, const CodeGenerator& generator, BuildOptions options)
    : compiler_(std::move(compiler)),
      target_(std::move(target)),
      generator_(generator),
      options_(std::move(options)),
      planner_(planner_options(compiler_)) {
  std::filesystem::create_directories(options_.work_dir);
}

namespace {

// The last write time of the newest file under the runtime's include directory.
std::filesystem::file_time_type newest_header_time(const std::string& include_dir) {
  auto newest = std::filesystem::file_time_type::min();
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(include_dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) newest = std::max(newest, it->last_write_time(ec));
  }
  return newest;
}

}  // namespace

const std::string& Builder::precompiled_prelude() {
  if (!options_.precompile_prelude || !compiler_.is_clang()) return prelude_pch_;
  const std::filesystem::file_time_type headers_time = newest_header_time(options_.runtime_include);
  if (prelude_tried_ && headers_time == prelude_headers_time_) return prelude_pch_;
  prelude_tried_ = true;
  prelude_headers_time_ = headers_time;
  prelude_pch_.clear();
  std::filesystem::path header = std::filesystem::path(options_.work_dir) / "candidate_prelude.h";
  std::string pch = header.string() + ".pch";
  write_file_if_changed(header.string(), generator_.source_prelude());
  auto start = std::chrono::steady_clock::now();
  std::vector<ProcessResult> runs = run_processes({generator_.compile_command(compiler_.path, compiler_.flags, options_.runtime_include,
                                                                              header.string(), pch, CompileOutput::PrecompiledPrelude)},
                                                  1, options_.timeout_seconds);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cpu_seconds_ += runs[0].cpu_seconds;
  // Without it, units parse the headers themselves: slower, not wrong.
  if (runs[0].ok()) prelude_pch_ = pch;
  return prelude_pch_;
}

double Builder::compile_limit(size_t members) const {
  const double per_candidate = planner_.candidate_seconds();
  if (per_candidate <= 0) return options_.timeout_seconds;
  const double expected = planner_.startup_seconds() + per_candidate * static_cast<double>(members);
  return std::min(options_.timeout_seconds, std::max(options_.min_timeout_seconds, options_.slow_compile_factor * expected));
}

void Builder::compile(std::vector<Unit>& units, std::vector<BuildResult>& results, bool retry_alone, const std::vector<std::string>& sources) {
  std::vector<std::vector<std::string>> commands;
  for (Unit& u : units) {
    write_file_if_changed(u.source, [&] {
      std::string text = generator_.source_prelude();
      for (size_t m : u.members) text += "\n" + sources[m];
      return text;
    }());
    commands.push_back(generator_.compile_command(compiler_.path, compiler_.flags, options_.runtime_include, u.source, u.library,
                                                  CompileOutput::SharedLibrary, precompiled_prelude()));
  }
  size_t largest = 0;
  for (const Unit& u : units) largest = std::max(largest, u.members.size());
  const double limit = compile_limit(largest);
  auto start = std::chrono::steady_clock::now();
  std::vector<ProcessResult> runs = run_processes(commands, options_.parallel, limit);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<Unit> retry;
  for (size_t i = 0; i < units.size(); ++i) {
    Unit& u = units[i];
    const ProcessResult& r = runs[i];
    cpu_seconds_ += r.cpu_seconds;
    if (!r.ok() && u.members.size() > 1 && retry_alone) {
      // One bad candidate fails its whole unit: compile each alone to find it.
      for (size_t m : u.members)
        retry.push_back({{m}, fmt::format("{}.{}{}", u.source, m, generator_.source_extension()), fmt::format("{}.{}.so", u.library, m)});
      continue;
    }
    for (size_t m : u.members) {
      BuildResult& res = results[m];
      res.library = u.library;
      if (r.timed_out) {
        res.error = MeasureError::CompileTimeout;
        res.message = fmt::format("compilation took longer than {:.3g} s", limit);
      } else if (!r.ok()) {
        res.error = MeasureError::CompileError;
        res.message = first_lines(r.output, 8);
      } else {
        ++built_;
      }
    }
    if (r.ok()) planner_.observe(u.members.size(), r.seconds);
  }
  if (!retry.empty()) compile(retry, results, false, sources);
}

std::string Builder::print(const Candidate& c, const std::string& symbol) const {
  LowerOptions options;
  options.target = target_;
  std::shared_ptr<const LoweredKernel> lowered =
      c.lowered ? c.lowered : std::make_shared<const LoweredKernel>(lower_state(c.state, symbol, options));
  // A program over the GPU's limits would build and then fail at every launch.
  generator_.check(*lowered, target_);
  return c.fault == PlantedFault::None
             ? generator_.kernel_definitions(*lowered, c.state.dag(), c.kernel_name, symbol, "candidate")
             : faulty_definitions(generator_.kernel_definitions(*lowered, c.state.dag(), c.kernel_name, symbol + "_inner", "candidate"), c,
                                  symbol);
}

std::string Builder::program_of(const Candidate& candidate) const {
  // Any symbol will do: the identity leaves it out.
  const std::string symbol = "ansor_candidate_identity";
  try {
    return program_identity(print(candidate, symbol), symbol);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

std::vector<BuildResult> Builder::build(const std::vector<Candidate>& candidates, const KnownProgram& known) {
  auto codegen_start = std::chrono::steady_clock::now();
  std::vector<BuildResult> results(candidates.size());
  std::vector<std::string> sources(candidates.size());
  std::vector<size_t> valid;
  for (size_t i = 0; i < candidates.size(); ++i) {
    // Unique in the process, whatever Builder built it: libraries are loaded by name.
    static std::atomic<int> serial{0};
    results[i].symbol = fmt::format("ansor_candidate_{}_{}", ::getpid(), serial++);
    try {
      const std::string& symbol = results[i].symbol;
      sources[i] = print(candidates[i], symbol);
      results[i].program = program_identity(sources[i], symbol);
      if (!known || candidates[i].remeasure || !known(results[i].program)) valid.push_back(i);
    } catch (const std::invalid_argument& e) {  // InvalidState, or a program the generator cannot print
      results[i].error = MeasureError::InvalidSchedule;
      results[i].message = e.what();
    }
  }
  codegen_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - codegen_start).count();
  std::vector<Unit> units;
  size_t per_unit = options_.per_unit > 0 ? static_cast<size_t>(options_.per_unit) : planner_.per_unit(valid.size(), options_.parallel);
  for (size_t begin = 0; begin < valid.size(); begin += per_unit) {
    Unit u;
    u.members.assign(valid.begin() + begin, valid.begin() + std::min(valid.size(), begin + per_unit));
    std::string stem = (std::filesystem::path(options_.work_dir) / results[u.members[0]].symbol).string();
    u.source = stem + generator_.source_extension();
    u.library = stem + ".so";
    units.push_back(std::move(u));
  }
  compile(units, results, true, sources);
  return results;
}

}  // namespace ansor
