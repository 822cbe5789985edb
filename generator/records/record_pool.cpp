// Merging, distilling and summarising record files.
#include "records/record_pool.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "dag/dag_text.h"
#include "records/cache.h"
#include "records/record_file.h"
#include "support/file_lock.h"

namespace ansor {

namespace fs = std::filesystem;

namespace {

size_t bytes_of(const std::vector<std::string>& lines) {
  size_t n = 0;
  for (const std::string& line : lines) n += line.size() + 1;
  return n;
}

}  // namespace

std::vector<std::string> record_files_of(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& entry : fs::directory_iterator(input))
        if (entry.path().extension() == ".jsonl" && entry.is_regular_file()) in_dir.push_back(entry.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(input, ec)) {
      files.push_back(input);
    } else {
      throw std::runtime_error(fmt::format("'{}' is neither a cache directory nor a record file", input));
    }
  }
  return files;
}

MergeReport merge_records(const std::string& out_dir, const std::vector<std::string>& inputs) {
  MergeReport report;
  // Per target, the inputs' lines not seen before, with their normalised form.
  struct Incoming {
    std::vector<std::pair<std::string, std::string>> lines;  // normalised, as written
    std::set<std::string> seen;
  };
  std::map<std::string, Incoming> incoming;
  for (const std::string& file : record_files_of(inputs)) {
    std::optional<RecordFileContents> contents = read_record_file(file);
    if (!contents) throw std::runtime_error(fmt::format("'{}' was removed while it was read", file));
    report.skipped.insert(report.skipped.end(), contents->warnings.begin(), contents->warnings.end());
    for (const RecordLine& line : contents->lines) {
      ++report.read;
      Incoming& in = incoming[line.record.target];
      std::string normalised = record_to_line(line.record);
      if (!in.seen.insert(normalised).second) {
        ++report.duplicates;
        continue;
      }
      in.lines.emplace_back(std::move(normalised), line.text);
    }
  }
  fs::create_directories(out_dir);
  const TuningCache out(out_dir);
  for (const auto& [target, in] : incoming) {
    const std::string path = out.file_for(target);
    LockedFile file(path, O_RDWR | O_CREAT, LockedFile::Mode::Exclusive);
    RecordFileContents have = parse_record_text(read_open_file(file.fd(), path), path);
    std::set<std::string> present;
    std::vector<std::string> lines;
    for (const RecordLine& line : have.lines) {
      present.insert(record_to_line(line.record));
      lines.push_back(line.text);
    }
    size_t added = 0;
    for (const auto& [normalised, text] : in.lines) {
      if (present.count(normalised)) {
        ++report.duplicates;
        continue;
      }
      lines.push_back(text);
      ++added;
    }
    if (added == 0) continue;
    report.skipped.insert(report.skipped.end(), have.warnings.begin(), have.warnings.end());
    replace_record_file(path, lines);
    report.added += added;
    report.added_by_file[path] = added;
  }
  return report;
}

DistillReport distill_records(const std::string& dir, const std::string& out_dir, const DistillOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(fmt::format("'{}' is not a cache directory", dir));
  const bool in_place = out_dir.empty() || (fs::exists(out_dir, ec) && fs::equivalent(dir, out_dir, ec));
  if (!in_place) fs::create_directories(out_dir);
  DistillReport report;
  for (const std::string& path : record_files_of({dir})) {
    std::optional<LockedFile> source =
        LockedFile::open_existing(path, in_place ? O_RDWR : O_RDONLY, in_place ? LockedFile::Mode::Exclusive : LockedFile::Mode::Shared);
    if (!source) continue;
    const std::string text = read_open_file(source->fd(), path);
    RecordFileContents contents = parse_record_text(text, path);
    report.skipped.insert(report.skipped.end(), contents.warnings.begin(), contents.warnings.end());

    DistilledFile done;
    done.file = in_place ? path : (fs::path(out_dir) / fs::path(path).filename()).string();
    done.records_before = contents.lines.size();
    done.bytes_before = text.size();
    // The records a build ranks together: one workload (and DAG), target and compiler.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<size_t>> groups;
    for (size_t i = 0; i < contents.lines.size(); ++i) {
      const Record& r = contents.lines[i].record;
      groups[{r.target, r.workload_key, r.dag, r.compiler}].push_back(i);
    }
    std::vector<bool> kept(contents.lines.size(), false);
    std::set<std::string> workloads;
    for (const auto& [key, members] : groups) {
      const auto& [target, workload, dag_text, compiler] = key;
      workloads.insert(workload);
      std::shared_ptr<const ComputeDAG> dag;
      try {
        dag = std::make_shared<const ComputeDAG>(parse_canonical_dag(dag_text, path));
      } catch (const std::exception&) {
        // Made by a generator that reads DAGs this one does not: not ours to judge.
        for (size_t i : members) kept[i] = true;
        done.unchecked += members.size();
        continue;
      }
      std::vector<Record> records;
      for (size_t i : members) records.push_back(contents.lines[i].record);
      std::vector<std::string> warnings;
      std::vector<ReplayedRecord> ranked =
          best_records(records, RecordScope{dag, target, compiler}, std::numeric_limits<size_t>::max(), warnings);
      for (const std::string& w : warnings) report.skipped.push_back(fmt::format("{}: {}", path, w));
      std::set<std::string> schedules;
      const size_t best = std::min(options.keep, ranked.size());
      for (size_t i = 0; i < best; ++i) schedules.insert(schedule_key(ranked[i].record));
      const size_t rest = ranked.size() - best, spread = std::min(options.train, rest);
      for (size_t j = 0; j < spread; ++j) schedules.insert(schedule_key(ranked[best + (spread == 1 ? 0 : j * (rest - 1) / (spread - 1))].record));
      for (size_t i : members)
        if (!result_rejection(contents.lines[i].record) && schedules.count(schedule_key(contents.lines[i].record))) kept[i] = true;
    }
    std::vector<std::string> lines;
    for (size_t i = 0; i < contents.lines.size(); ++i)
      if (kept[i]) lines.push_back(contents.lines[i].text);
    done.records_after = lines.size();
    done.bytes_after = bytes_of(lines);
    done.workloads = workloads.size();
    if (in_place) {
      replace_record_file(path, lines);
    } else {
      LockedFile out(done.file, O_RDWR | O_CREAT, LockedFile::Mode::Exclusive);
      replace_record_file(done.file, lines);
    }
    report.files.push_back(std::move(done));
  }
  return report;
}

std::vector<TargetStats> cache_stats(const std::vector<std::string>& inputs) {
  struct Workload {
    WorkloadStats stats;
    std::string dag;
    int64_t latest = std::numeric_limits<int64_t>::min();
    std::map<std::string, std::vector<double>> times;  // by schedule
  };
  std::map<std::string, TargetStats> targets;
  std::map<std::pair<std::string, std::string>, Workload> workloads;  // by target and workload key
  for (const std::string& path : record_files_of(inputs)) {
    std::optional<RecordFileContents> contents = read_record_file(path);
    if (!contents) continue;
    std::set<std::string> in_file;
    for (const RecordLine& line : contents->lines) {
      const Record& r = line.record;
      TargetStats& t = targets[r.target];
      t.target = r.target;
      if (in_file.insert(r.target).second) t.files.push_back(path);
      Workload& w = workloads[{r.target, r.workload_key}];
      w.stats.workload_key = r.workload_key;
      w.dag = r.dag;
      if (r.timestamp >= w.latest) {
        w.latest = r.timestamp;
        w.stats.kernel = r.kernel;
      }
      if (r.remeasure) {
        ++w.stats.remeasures;
      } else {
        ++w.stats.trials;
        ++t.trials;
        if (!r.ok()) {
          ++w.stats.failed;
          ++t.failed;
        }
      }
      if (!result_rejection(r)) w.times[schedule_key(r)].push_back(r.seconds);
      if (!r.generator_version.empty()) {
        w.stats.versions.insert(r.generator_version);
        t.versions.insert(r.generator_version);
      }
    }
    for (const std::string& target : in_file) targets[target].skipped += contents->warnings.size();
  }
  for (auto& [key, w] : workloads) {
    for (const auto& [schedule, seconds] : w.times) {
      double median = median_of(seconds);
      if (!w.stats.best_seconds || median < *w.stats.best_seconds) w.stats.best_seconds = median;
    }
    try {
      w.stats.flops = parse_canonical_dag(w.dag).flop_count();
    } catch (const std::exception&) {
      w.stats.flops = 0;
    }
    targets[key.first].workloads.push_back(std::move(w.stats));
  }
  std::vector<TargetStats> out;
  for (auto& [name, t] : targets) {
    std::sort(t.workloads.begin(), t.workloads.end(),
              [](const WorkloadStats& a, const WorkloadStats& b) { return std::tie(a.kernel, a.workload_key) < std::tie(b.kernel, b.workload_key); });
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace ansor
