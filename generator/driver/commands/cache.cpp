// ansor-gen cache: records as a shared asset. `merge` pools caches (of shards, of machines),
// `distill` trims one to what builds and the cost model use, `stats` says what one holds, and
// `key` names the records a kernels.def needs on a target, for a CI system's own cache.
#include "driver/commands/subcommand.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <ostream>
#include <set>

#include "records/record_pool.h"
#include "support/file_name.h"
#include "support/stable_hash.h"

namespace ansor::cli {

namespace {

struct CacheCommand {
  std::string out_dir;
  std::vector<std::string> inputs;
  std::string distill_dir, distill_out;
  DistillOptions distill;
  std::vector<std::string> stats_inputs;
  bool json = false;
  SessionOptions session;
  std::string flags_text;
};

void print_skipped(const std::vector<std::string>& skipped, std::ostream& out) {
  for (const std::string& line : skipped) fmt::print(out, "  {}\n", line);
}

void run_merge(const CacheCommand& c, std::ostream& out) {
  MergeReport report = merge_records(c.out_dir, c.inputs);
  fmt::print(out, "[merge] {} records read from {} input(s): {} added to {}, {} duplicates, {} unreadable lines skipped\n", report.read,
             c.inputs.size(), report.added, c.out_dir, report.duplicates, report.skipped.size());
  for (const auto& [file, added] : report.added_by_file) fmt::print(out, "  {}: +{}\n", file, added);
  print_skipped(report.skipped, out);
}

void run_distill(const CacheCommand& c, std::ostream& out) {
  DistillReport report = distill_records(c.distill_dir, c.distill_out, c.distill);
  size_t before = 0, after = 0;
  for (const DistilledFile& f : report.files) {
    fmt::print(out, "[distill] {}: {} workloads, {} -> {} records, {} -> {} bytes ({:.0f}% smaller){}\n", f.file, f.workloads,
               f.records_before, f.records_after, f.bytes_before, f.bytes_after,
               f.bytes_before ? 100.0 * (1.0 - static_cast<double>(f.bytes_after) / static_cast<double>(f.bytes_before)) : 0.0,
               f.unchecked ? fmt::format(", {} kept unchecked (their DAGs do not parse here)", f.unchecked) : "");
    before += f.bytes_before;
    after += f.bytes_after;
  }
  fmt::print(out, "[distill] {} files: {} -> {} bytes ({:.0f}% smaller); kept per workload: the {} fastest schedules and {} more for the cost model\n",
             report.files.size(), before, after, before ? 100.0 * (1.0 - static_cast<double>(after) / static_cast<double>(before)) : 0.0,
             c.distill.keep, c.distill.train);
  print_skipped(report.skipped, out);
}

std::string versions_text(const std::set<std::string>& versions) { return versions.empty() ? "-" : fmt::format("{}", fmt::join(versions, ",")); }

std::optional<double> gflops(const WorkloadStats& w) {
  if (!w.best_seconds || w.flops <= 0) return std::nullopt;
  return w.flops / *w.best_seconds * 1e-9;
}

void run_stats(const CacheCommand& c, std::ostream& out) {
  std::vector<TargetStats> targets = cache_stats(c.stats_inputs);
  if (c.json) {
    nlohmann::json doc = nlohmann::json::array();
    for (const TargetStats& t : targets) {
      nlohmann::json jt{{"target", t.target}, {"files", t.files}, {"kernels", t.workloads.size()}, {"trials", t.trials},
                        {"failed", t.failed}, {"generator_versions", t.versions}, {"unreadable_lines", t.skipped}};
      for (const WorkloadStats& w : t.workloads) {
        nlohmann::json jw{{"kernel", w.kernel}, {"workload_key", w.workload_key}, {"trials", w.trials}, {"failed", w.failed},
                          {"remeasures", w.remeasures}, {"generator_versions", w.versions}};
        if (w.best_seconds) jw["best_seconds"] = *w.best_seconds;
        if (std::optional<double> g = gflops(w)) jw["best_gflops"] = *g;
        jt["workloads"].push_back(jw);
      }
      doc.push_back(jt);
    }
    out << doc.dump(2) << "\n";
    return;
  }
  if (targets.empty()) fmt::print(out, "no records\n");
  for (const TargetStats& t : targets) {
    fmt::print(out, "{}\n  {} kernels, {} trials ({} failed), made by ansor-gen {}; {}{}\n", t.target, t.workloads.size(), t.trials, t.failed,
               versions_text(t.versions), fmt::join(t.files, ", "), t.skipped ? fmt::format("; {} unreadable lines", t.skipped) : "");
    fmt::print(out, "  {:<28} {:>7} {:>7} {:>10} {:>10}  {}\n", "kernel", "trials", "failed", "best ms", "GFLOP/s", "versions");
    for (const WorkloadStats& w : t.workloads) {
      std::optional<double> g = gflops(w);
      fmt::print(out, "  {:<28} {:>7} {:>7} {:>10} {:>10}  {}\n", w.kernel, w.trials, w.failed,
                 w.best_seconds ? fmt::format("{:.4f}", *w.best_seconds * 1e3) : "-", g ? fmt::format("{:.1f}", *g) : "-",
                 versions_text(w.versions));
    }
  }
}

// The workloads of the file with the target each is tuned for, hashed: the same file and
// target give the same key on any machine, and any kernel added, removed or changed, another.
void run_key(const Program& program, CacheCommand& c, std::ostream& out) {
  c.session.flags = split_flags(c.flags_text);
  c.session.cache_dir.clear();
  TuningSessions sessions(c.session);
  std::set<std::string> lines;
  std::string run_target;
  for (const Kernel& k : program.kernels) {
    const std::string target = sessions.for_kernel(k).target().to_string();
    if (run_target.empty() && !k.attrs.target) run_target = target;
    lines.insert(k.dag.workload_key() + " " + target);
  }
  if (run_target.empty() && !program.kernels.empty()) run_target = sessions.for_kernel(program.kernels.front()).target().to_string();
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  fmt::print(out, "ansor-{}-{:016x}\n", file_name_stem(run_target), stable_hash64(text));
}

}  // namespace

Subcommand add_cache(CLI::App& app, Input& input) {
  CLI::App* cmd = app.add_subcommand("cache", "Pool, trim, inspect and key tuning records (cache directories of <target>.jsonl files)");
  cmd->require_subcommand(1);
  auto c = std::make_shared<CacheCommand>();

  CLI::App* merge = cmd->add_subcommand(
      "merge", "Add to the cache OUT every record of the inputs it does not hold (atomically, under the cache's lock: a tuner may be writing)");
  merge->add_option("OUT", c->out_dir, "the cache directory written")->required();
  merge->add_option("IN", c->inputs, "cache directories or record files")->required();

  CLI::App* distill = cmd->add_subcommand(
      "distill", "Keep of a cache the records builds choose among, and a spread of the rest for the cost model; say how much smaller it is");
  distill->add_option("DIR", c->distill_dir, "the cache directory")->required()->check(CLI::ExistingDirectory);
  distill->add_option("--out", c->distill_out, "write the distilled cache here (default: replace DIR's files)");
  distill->add_option("--keep", c->distill.keep, "fastest schedules kept per workload, target and compiler (a build tries that many)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  distill->add_option("--train", c->distill.train, "further schedules kept per workload for the cost model, spread over the times")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();

  CLI::App* stats = cmd->add_subcommand("stats", "Per target: kernels, trials, best time and GFLOP/s, the generator versions of the records");
  stats->add_option("IN", c->stats_inputs, "cache directories or record files")->required();
  stats->add_flag("--json", c->json, "print JSON");

  CLI::App* key = cmd->add_subcommand("key", "Print a stable key of the records a kernels.def needs on a target, for a CI system's cache");
  key->add_option("DEF", input.def_path, "the kernels.def file")->required();
  key->add_option("--target", c->session.target, "host or a target string (cpu:ARCH:CPU:ISA:tTHREADS)")->capture_default_str();
  key->add_option("--compiler", c->session.compiler, "C++ compiler of the kernels (default clang++): it tells a host target's features");
  key->add_option("--flags", c->flags_text, "kernel compiler flags, space separated (default: -O3 -march=native ...)");

  return {cmd, [=, &input](std::ostream& out) {
            if (merge->parsed()) run_merge(*c, out);
            if (distill->parsed()) run_distill(*c, out);
            if (stats->parsed()) run_stats(*c, out);
            if (key->parsed()) run_key(load_program_file(input.def_path), *c, out);
          }};
}

}  // namespace ansor::cli
