// The record-compatibility rule.
#include "records/record_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "records/compiler_identity.h"
#include "target/target.h"

namespace ansor {

namespace {

std::optional<Target> parsed(const std::string& text) {
  try {
    return parse_target(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // written by a newer generator, or hand-edited: not ours to judge
  }
}

TargetMatch match_parsed(const Target& record, const Target& run) {
  if (!record.same_isa(run)) return TargetMatch::Other;
  return record.cpu == run.cpu ? TargetMatch::SameCpu : TargetMatch::SameIsa;
}

}  // namespace

TargetMatch match_target(const std::string& record_target, const std::string& run_target) {
  if (record_target == run_target) return TargetMatch::Exact;
  std::optional<Target> record = parsed(record_target), run = parsed(run_target);
  return record && run ? match_parsed(*record, *run) : TargetMatch::Other;
}

CompilerMatch match_compiler(std::string_view record_compiler, std::string_view run_compiler) {
  if (record_compiler == run_compiler) return CompilerMatch::Exact;
  CompilerIdentity record = parse_compiler_identity(record_compiler), run = parse_compiler_identity(run_compiler);
  if (normalized_flags(record.flags) != normalized_flags(run.flags)) return CompilerMatch::Other;
  if (record.version_line == run.version_line) return CompilerMatch::SameFlags;
  if (!record.family.empty() && record.family == run.family && record.major == run.major) return CompilerMatch::SameMajor;
  return CompilerMatch::Other;
}

std::vector<std::string> serving_targets(const std::vector<std::string>& targets, const std::string& target) {
  std::vector<std::string> out = {target};
  std::optional<Target> self = parsed(target);
  if (!self) return out;
  std::vector<std::tuple<TargetMatch, bool, std::string>> related;  // match, another thread count, name
  for (const std::string& other : targets) {
    if (other == target) continue;
    std::optional<Target> t = parsed(other);
    if (!t) continue;
    TargetMatch m = match_parsed(*t, *self);
    if (trains(m)) related.emplace_back(m, t->threads != self->threads, other);
  }
  std::sort(related.begin(), related.end());
  for (auto& r : related) out.push_back(std::get<2>(r));
  return out;
}

std::string step_down_note(const std::string& kernel, const std::string& run_target, const std::string& record_target,
                           std::string_view run_compiler, std::string_view record_compiler) {
  std::string compiler;
  if (CompilerMatch m = match_compiler(record_compiler, run_compiler); m == CompilerMatch::SameFlags) {
    compiler = "records tuned with the same flags in another order";
  } else if (m == CompilerMatch::SameMajor) {
    CompilerIdentity by = parse_compiler_identity(record_compiler), here = parse_compiler_identity(run_compiler);
    const bool same_name = by.short_name() == here.short_name();
    compiler = fmt::format("records of {} replayed under {} (same major version)", same_name ? by.version_line : by.short_name(),
                           same_name ? here.version_line : here.short_name());
  }
  if (record_target == run_target) return compiler.empty() ? "" : fmt::format("note: '{}': {}", kernel, compiler);
  std::string line = fmt::format("warning: no record of '{}' for {}: replaying those tuned for {} (same ISA)", kernel, run_target, record_target);
  return compiler.empty() ? line : line + "; " + compiler;
}

}  // namespace ansor
