// Library emission: header, registry, kernel sources, fragments.
#include "driver/library_emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "backend/backend_registry.h"
#include "backend/cmake_text.h"
#include "codegen/code_generator.h"
#include "codegen/kernel_signature.h"
#include "driver/library_dispatch.h"
#include "lower/lower.h"
#include "sampler/default_schedule.h"
#include "sampler/annotation.h"
#include "support/file_util.h"
#include "support/stable_hash.h"
#include "support/version.h"
#include "target/target.h"

namespace ansor {

namespace {

// Text inside a C string literal.
std::string escape_c_string(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') out += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\{:03o}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string shape_text(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// A kernel's schedule and its loop program, lowered once: what the source prints.
struct ChosenSchedule {
  State state;
  LoweredKernel lowered;
  std::string origin;
  std::string note;
};

std::string kernel_symbol(const EmitOptions& options, const Kernel& kernel) { return options.lib_name + "_" + kernel.name; }

// Lowers a schedule as the kernel's symbol and checks it against the target's limits: throws
// InvalidState for a schedule that does not lower or exceeds them.
using CheckedLowering = std::function<LoweredKernel(const State&)>;

ChosenSchedule lowered_choice(State state, const CheckedLowering& lower, std::string origin, std::string note) {
  LoweredKernel lowered = lower(state);
  return {std::move(state), std::move(lowered), std::move(origin), std::move(note)};
}

// Tuned records store and replay; lowering finds the ones whose schedule does not lower (or, on
// a GPU, exceeds this device's limits). The first of the k best that lowers, with its program,
// and a warning for each one passed over.
std::optional<std::pair<ReplayedRecord, LoweredKernel>> first_that_lowers(std::vector<ReplayedRecord>& best, const CheckedLowering& lower,
                                                                          std::vector<std::string>& notes) {
  for (ReplayedRecord& r : best) {
    try {
      LoweredKernel lowered = lower(r.state);
      return std::make_pair(std::move(r), std::move(lowered));
    } catch (const InvalidState& e) {
      notes.push_back(fmt::format("a tuned record ({:.3f} ms) does not lower and is passed over: {}", r.record.seconds * 1e3, e.what()));
    }
  }
  return std::nullopt;
}

ChosenSchedule choose_schedule(const Kernel& kernel, const EmitOptions& options, TuningSession& session, const CodeGenerator& generator,
                               std::ostream& progress) {
  auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
  const std::string symbol = kernel_symbol(options, kernel);
  const CheckedLowering lower = [&](const State& state) {
    LowerOptions options;
    options.target = session.target();
    LoweredKernel lowered = lower_state(state, symbol, options);
    generator.check(lowered, session.target());
    return lowered;
  };
  switch (options.schedule) {
    case ScheduleKind::Naive: break;
    case ScheduleKind::Random: {
      State random = random_program(dag, session.sampler_context(), random_schedule_seed(options.seed, kernel.name));
      return lowered_choice(random, lower, fmt::format("random(seed {})", options.seed), fmt::format("random schedule, seed {}", options.seed));
    }
    case ScheduleKind::Sampled: {
      State sampled = sampled_program(dag, session.sampler_context(), random_schedule_seed(options.seed, kernel.name));
      return lowered_choice(sampled, lower, fmt::format("sampled(seed {})", options.seed),
                            fmt::format("program sampled from the sketches, seed {}", options.seed));
    }
    case ScheduleKind::Default: return lowered_choice(default_schedule(dag, session.sampler_context()), lower, "default", "default schedule (not tuned)");
    case ScheduleKind::Best: {
      std::vector<std::string> notes;
      std::vector<ReplayedRecord> found = session.best(kernel, kBestRecordsTried, notes);
      // A kernel's own budget applies when the build tunes at all (TRIALS 0 turns tuning off).
      int trials = options.trials == 0 ? 0 : static_cast<int>(kernel.attrs.trials.value_or(options.trials));
      if (found.empty() && trials > 0 && !options.session.cache_dir.empty()) {
        if (!session.cannot_measure().empty()) {
          notes.push_back("not tuned: " + session.cannot_measure());
        } else {
          TuneOptions tune;
          tune.trials = trials;
          session.tune(kernel, tune, progress);
          found = session.best(kernel, kBestRecordsTried, notes);
        }
      }
      std::optional<std::pair<ReplayedRecord, LoweredKernel>> best = first_that_lowers(found, lower, notes);
      std::string warnings;
      for (auto& n : notes) warnings += "\n  " + n;
      if (best) {
        auto& [record, lowered] = *best;
        // Which generator measured the record: records of older ones still replay (docs/records.md).
        const std::string& made_by = record.record.generator_version;
        std::string note = fmt::format("tuned record, {:.3f} ms{}{}", record.record.seconds * 1e3,
                                       made_by.empty() ? "" : ", measured by ansor-gen " + made_by, warnings);
        return {std::move(record.state), std::move(lowered), "tuned", std::move(note)};
      }
      return lowered_choice(default_schedule(dag, session.sampler_context()), lower, "default", "no tuned record: default schedule" + warnings);
    }
  }
  return lowered_choice(State(dag), lower, "naive", "naive reference schedule");
}

// The source file of one kernel: the chosen schedule's program, printed.
std::string kernel_source(const Kernel& kernel, const ChosenSchedule& chosen, const CodeGenerator& generator) {
  const std::string& symbol = chosen.lowered.name;
  std::string out = fmt::format("// Generated by ansor-gen {} for kernel '{}'. Do not edit.\n// workload {}; schedule: {}\n{}\n",
                                kGeneratorVersion, kernel.name, kernel.dag.workload_key(), chosen.origin, steps_comment(chosen.state));
  out += generator.source_prelude() + "\n";
  out += generator.kernel_definitions(chosen.lowered, chosen.state.dag(), kernel.name, symbol, chosen.origin);
  return out;
}

void record(EmitReport& report, const std::string& path, bool changed) {
  (changed ? report.written : report.unchanged).push_back(path);
}

std::vector<const Kernel*> selected_kernels(const Program& program, const std::vector<std::string>& names) {
  std::vector<const Kernel*> out;
  if (names.empty()) {
    for (auto& k : program.kernels) out.push_back(&k);
    return out;
  }
  for (auto& n : names) {
    const Kernel* k = program.find(n);
    if (!k) throw CompileError(SourceLoc{}, fmt::format("no kernel named '{}' in {}", n, program.source->path));
    out.push_back(k);
  }
  return out;
}

}  // namespace

std::string kernel_source_name(const std::string& lib_name, const std::string& kernel, const CodeGenerator& generator) {
  return lib_name + "_" + kernel + generator.source_extension();
}

uint64_t random_schedule_seed(uint64_t seed, const std::string& kernel_name) { return seed ^ stable_hash64(kernel_name); }

namespace {

// Every external symbol of the library, so that a kernel named `k_pack_W` cannot collide with
// the pack function of input W of kernel k.
void check_symbols_unique(const Program& program, const std::string& lib) {
  std::map<std::string, std::string> owner;
  auto claim = [&](const std::string& symbol, const Kernel& k) {
    auto [it, inserted] = owner.emplace(symbol, k.name);
    if (!inserted)
      throw CompileError(k.loc, fmt::format("kernel '{}' and kernel '{}' would both define the C function '{}'; rename one", it->second,
                                            k.name, symbol));
  };
  claim(lib + "_kernels", program.kernels.front());
  for (const Kernel& k : program.kernels) {
    std::string symbol = lib + "_" + k.name;
    claim(symbol, k);
    claim(symbol + "_packed", k);
    claim(symbol + "_info", k);
    for (const ParamDecl& p : kernel_params(k.dag)) {
      if (!p.is_const) continue;
      claim(fmt::format("{}_pack_{}", symbol, p.tensor), k);
      claim(fmt::format("{}_{}_packed_elements", symbol, p.tensor), k);
    }
  }
}

}  // namespace

std::string library_header(const Program& program, const std::string& lib, const std::string& target) {
  check_symbols_unique(program, lib);
  const Backend& backend = emit_backend(target);
  std::string guard = upper(lib) + "_H_";
  std::string out = fmt::format(
      "/* Generated by ansor-gen {} from {}. Do not edit. */\n"
      "#ifndef {}\n#define {}\n\n#include <stdbool.h>\n#include <stdint.h>\n\n#include <ansor/runtime.h>\n{}\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
      kGeneratorVersion, std::filesystem::path(program.source->path).filename().string(), guard, guard,
      backend.header_includes());
  out += backend.header_interface_comment();
  for (const Kernel& k : program.kernels) {
    std::vector<ParamDecl> params = kernel_params(k.dag);
    std::vector<std::string> ins, outs;
    for (auto& p : params)
      (p.is_output ? outs : ins).push_back(fmt::format("{} {}{}", p.tensor, dtype_name(p.dtype), shape_text(p.shape)));
    std::string symbol = lib + "_" + k.name;
    out += fmt::format("/* {}({}) -> {}; {:.6g} FLOPs */\n", k.name, fmt::join(ins, ", "), fmt::join(outs, ", "), k.dag.flop_count());
    out += c_prototype(params, symbol, false) + ";\n";
    out += backend.entry_point_companions(params, symbol);
    bool has_const = false;
    for (auto& p : params) {
      if (!p.is_const) continue;
      if (!has_const) out += "/* With const inputs in the layout the schedule reads them in, packed once by the pack functions. */\n";
      has_const = true;
      std::vector<ParamDecl> pack_params = {p, p};
      pack_params[1].name = p.name + "_packed";
      pack_params[1].is_output = true;
      out += fmt::format("int64_t {}_{}_packed_elements(void);\n", symbol, p.tensor);
      out += c_prototype(pack_params, fmt::format("{}_pack_{}", symbol, p.tensor), false) + ";\n";
    }
    if (has_const) out += c_prototype(params, symbol + "_packed", false) + ";\n";
    if (has_const) out += backend.entry_point_companions(params, symbol + "_packed");
    out += "\n";
  }
  out += fmt::format("/* The kernels of this library, for programs that handle kernels generically. */\n"
                     "const ansor_kernel_info* {0}_kernels(int* count);\n"
                     "/* The target the kernels run for, as the build named it (host, x86-64-v3, ...): a library built\n"
                     " * for several picks one at the first call (ANSOR_KERNEL_TARGET forces one); \"none\" when this\n"
                     " * CPU runs none of them. */\n"
                     "const char* {0}_target(void);\n\n",
                     lib);
  out += "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out;
}

std::string library_registry(const Program& program, const std::string& lib, const std::string& target) {
  std::string out = fmt::format("// Generated by ansor-gen {}. Do not edit.\n#include \"{}.h\"\n\nextern \"C\" {{\n", kGeneratorVersion, lib);
  for (const Kernel& k : program.kernels) out += fmt::format("extern const ansor_kernel_info {}_{}_info;\n", lib, k.name);
  out += fmt::format("\nconst ansor_kernel_info* {}_kernels(int* count) {{\n  static const ansor_kernel_info table[] = {{\n", lib);
  for (const Kernel& k : program.kernels) out += fmt::format("      {}_{}_info,\n", lib, k.name);
  out += fmt::format("  }};\n  if (count) *count = {};\n  return table;\n}}\n\n", program.kernels.size());
  out += fmt::format("const char* {}_target(void) {{ return \"{}\"; }}\n\n}}\n", lib, escape_c_string(target));
  return out;
}

const Backend& emit_backend(const std::string& target) {
  try {
    return backend_named(target);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("cannot emit kernels for '{}': {}", target, e.what()));
  }
}

namespace {

// What a library's kernels may run on, for the message of a kernel that targets another kind.
std::string kinds_of_device() {
  std::vector<std::string> devices;
  for (const Backend* b : backends()) devices.push_back(b->device_description());
  return fmt::format("all run on {}", fmt::join(devices, " or all on "));
}

// The code generator of a kernel's own target (its `target` attribute, else the run's); its
// error names the kernel.
const CodeGenerator& kernel_generator(const Kernel& kernel, const std::string& run_target) {
  const Backend& library = emit_backend(run_target);
  if (!kernel.attrs.target) return library.code_generator();
  const Backend* own = nullptr;
  try {
    own = &emit_backend(*kernel.attrs.target);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("kernel '{}': {}", kernel.name, e.what()));
  }
  // One library's kernels run on one kind of device: its header, sources and build are of that kind.
  if (own != &library)
    throw std::invalid_argument(fmt::format("kernel '{}' targets {}, but the library is built for {}: a library's kernels {}", kernel.name,
                                            *kernel.attrs.target, run_target, kinds_of_device()));
  return own->code_generator();
}

// What a kernel's emitted source depends on in the cache: the schedules of the records that
// `best` tries, in order.
std::string record_stamp(const Kernel& kernel, TuningSession& session) {
  std::vector<std::string> notes;
  std::string stamp = fmt::format("records ansor-gen {} would try for kernel '{}', best first\n", kGeneratorVersion, kernel.name);
  for (const ReplayedRecord& r : session.best(kernel, kBestRecordsTried, notes)) stamp += steps_comment(r.state) + "\n";
  return stamp;
}

}  // namespace

EmitReport emit_library(const Program& program, const EmitOptions& options, std::ostream& progress) {
  std::vector<const Kernel*> kernels = selected_kernels(program, options.kernels);
  if (options.stamps_only) {
    EmitReport report;
    TuningSessions sessions(options.session);
    std::vector<std::string> untuned;
    for (const Kernel* k : kernels) {
      std::filesystem::path path = std::filesystem::path(options.out_dir) / "stamps" / (options.lib_name + "_" + k->name + ".stamp");
      TuningSession& session = sessions.for_kernel(*k);
      std::vector<std::string> notes;
      if (session.best(*k, 1, notes).empty()) untuned.push_back(k->name);
      bool changed = write_file_if_changed(path.string(), record_stamp(*k, session));
      record(report, path.string(), changed);
      if (changed) report.notes.push_back(fmt::format("{}: its records changed", k->name));
    }
    // A build that does not tune says, in one line, which kernels run untuned and how to tune them.
    if (!untuned.empty() && options.trials == 0)
      report.notes.push_back(fmt::format(
          "warning: {} kernel{} of {} without a tuning record use{} the default schedule ({}); tune {} with: {}", untuned.size(),
          untuned.size() == 1 ? "" : "s", options.lib_name, untuned.size() == 1 ? "s" : "", fmt::join(untuned, ", "),
          untuned.size() == 1 ? "it" : "them",
          options.tune_hint.empty() ? fmt::format("ansor-gen tune {} --cache {}", program.source->path, options.session.cache_dir)
                                    : options.tune_hint));
    return report;
  }
  if (!options.header_only) {
    emit_backend(options.session.target);
    for (const Kernel* k : kernels) kernel_generator(*k, options.session.target);
  }
  std::vector<std::pair<std::string, std::string>> files;
  EmitReport report;
  std::filesystem::path dir(options.out_dir);
  if (options.header_only || options.kernels.empty()) {
    files.push_back({(dir / (options.lib_name + ".h")).string(), library_header(program, options.lib_name, options.session.target)});
    files.push_back({(dir / (options.lib_name + "_registry.cpp")).string(), library_registry(program, options.lib_name, options.session.target)});
  }
  if (!options.header_only) {
    TuningSessions sessions(options.session);
    for (const Kernel* k : kernels) {
      const CodeGenerator& generator = kernel_generator(*k, options.session.target);
      TuningSession& session = sessions.for_kernel(*k);
      ChosenSchedule chosen = choose_schedule(*k, options, session, generator, progress);
      report.notes.push_back(fmt::format("{}: {}", k->name, chosen.note));
      // The stamp of the records just used (tuning may have added them), written before the
      // source, so that the build's next stamp check finds it current and the source newer.
      if (options.schedule == ScheduleKind::Best && !options.session.cache_dir.empty())
        write_file_if_changed((dir / "stamps" / (options.lib_name + "_" + k->name + ".stamp")).string(), record_stamp(*k, session));
      files.push_back({(dir / kernel_source_name(options.lib_name, k->name, generator)).string(),
                       kernel_source(*k, chosen, generator)});
    }
  }
  for (auto& [path, content] : files) record(report, path, write_file_if_changed(path, content));
  return report;
}

EmitReport configure_library(const Program& program, const std::string& lib, const std::string& out_dir,
                             const std::vector<std::string>& targets, const std::string& compiler, const std::vector<std::string>& flags,
                             const std::string& runtime_include) {
  if (targets.empty()) throw std::invalid_argument("configure needs a target");
  const Backend& backend = emit_backend(targets.front());
  for (const std::string& t : targets) {
    // Its flags: a target no flags build for is refused before anything is written.
    emit_backend(t).kernel_flags({t, compiler, flags});
    for (const Kernel& k : program.kernels) kernel_generator(k, t);
  }
  const std::string include_dir = runtime_include.empty() ? default_runtime_include() : runtime_include;
  std::filesystem::path dir(out_dir);
  EmitReport report;
  auto write = [&](const std::filesystem::path& p, const std::string& content) {
    record(report, p.string(), write_file_if_changed(p.string(), content));
  };
  write(dir / (lib + ".h"), library_header(program, lib, targets.front()));
  std::string cmake = "# Generated by ansor-gen. Do not edit.\nset(ANSOR_KERNEL_NAMES";
  for (const Kernel& k : program.kernels) {
    write(dir / "defs" / (k.name + ".def"), k.fragment);
    cmake += "\n  " + k.name;
  }
  cmake += ")\n";
  // What the build asks of the target's backend instead of assuming a language, a compiler or flags.
  const CodeGenerator& generator = backend.code_generator();
  cmake += cmake_set("ANSOR_KERNEL_BACKEND", {backend.name()}) + cmake_set("ANSOR_KERNEL_SOURCE_EXTENSION", {generator.source_extension()});
  const bool dispatched = targets.size() > 1;
  if (!dispatched) {
    write(dir / (lib + "_registry.cpp"), library_registry(program, lib, targets.front()));
    cmake += cmake_set("ANSOR_KERNEL_VARIANT_LIBS", {lib}) + backend.cmake_variant({targets.front(), compiler, flags}, lib, include_dir);
  } else {
    // One complete library per target, and the dispatcher that defines this one's interface.
    std::vector<LibraryVariant> variants;
    std::set<std::string> names;
    std::string variant_lines;
    for (const std::string& t : targets) {
      const KernelBuildRequest request{t, compiler, flags};
      LibraryVariant v{t, variant_lib_name(lib, t), backend.variant_features(request)};
      if (!names.insert(v.lib).second) throw std::invalid_argument(fmt::format("target '{}' is named twice", t));
      write(dir / (v.lib + ".h"), library_header(program, v.lib));
      write(dir / (v.lib + "_registry.cpp"), library_registry(program, v.lib, t));
      variant_lines += backend.cmake_variant(request, v.lib, include_dir);
      variants.push_back(std::move(v));
    }
    std::vector<std::string> libs;
    for (const LibraryVariant& v : variants) libs.push_back(v.lib);
    cmake += cmake_set("ANSOR_KERNEL_VARIANT_LIBS", libs) + variant_lines;
    write(dir / (lib + "_dispatch" + generator.source_extension()), library_dispatcher(program, lib, variants));
  }
  cmake += backend.cmake_library({targets.front(), compiler, flags}, include_dir, dispatched);
  write(dir / (lib + "_kernels.cmake"), cmake);
  return report;
}

}  // namespace ansor
