// Records of the same computation at other shapes, mapped onto a kernel's DAG.
#include "records/record_transfer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "dag/computation_key.h"
#include "dag/dag_text.h"
#include "records/record_match.h"
#include "target/target.h"
#include "schedule/shape_transfer.h"

namespace ansor {

namespace {

// A shape of the computation found in the cache, with its successful records.
struct SourceShape {
  double flops = 0;
  double distance = 0;
  std::vector<const Record*> records;  // fastest first
};

double shape_distance(const ComputeDAG& a, const ComputeDAG& b) {
  double distance = 0;
  for (int i = 0; i < std::min(a.num_ops(), b.num_ops()); ++i) {
    const std::vector<int64_t>& x = a.op(i).shape;
    const std::vector<int64_t>& y = b.op(i).shape;
    for (size_t d = 0; d < std::min(x.size(), y.size()); ++d)
      if (x[d] > 0 && y[d] > 0) distance += std::abs(std::log(static_cast<double>(x[d]) / static_cast<double>(y[d])));
  }
  return distance;
}

// The target's records of the scope's computation at other shapes, by shape, closest first.
std::vector<SourceShape> source_shapes(const std::vector<Record>& records, const RecordScope& scope) {
  const std::string key = computation_key(*scope.dag);
  std::map<std::string_view, std::optional<SourceShape>> by_dag;  // nullopt: another computation, or a DAG that does not parse
  for (const Record& r : records) {
    if (r.workload_key == scope.dag->workload_key() || result_rejection(r)) continue;
    auto [it, added] = by_dag.try_emplace(r.dag);
    if (added && computation_key(r.dag) == key) {
      try {
        ComputeDAG dag = parse_canonical_dag(r.dag);
        it->second = SourceShape{dag.flop_count(), shape_distance(dag, *scope.dag), {}};
      } catch (const std::exception&) {
        // A DAG this generator cannot read serves nothing.
      }
    }
    if (it->second) it->second->records.push_back(&r);
  }
  std::vector<SourceShape> shapes;
  for (auto& [dag, shape] : by_dag)
    if (shape) {
      std::stable_sort(shape->records.begin(), shape->records.end(), [](const Record* a, const Record* b) { return a->seconds < b->seconds; });
      shapes.push_back(std::move(*shape));
    }
  std::stable_sort(shapes.begin(), shapes.end(), [](const SourceShape& a, const SourceShape& b) { return a.distance < b.distance; });
  return shapes;
}

}  // namespace

std::vector<TransferredRecord> transferred_records(const TuningCache& cache, const RecordScope& scope, size_t k) {
  std::vector<TransferredRecord> out;
  // Vectors keep the run's full width along the axis they run on (a CPU's; GPUs have none).
  const Target run_target = parse_target(scope.target);
  const int64_t vector_lanes = run_target.kind == Target::Kind::Cuda ? 0 : run_target.vector_bits() / 32;
  for (const std::string& target : serving_targets(cache.targets(), scope.target)) {
    std::vector<Record> records = cache.load(target).records;
    std::vector<SourceShape> shapes = source_shapes(records, scope);
    if (shapes.empty()) continue;
    std::set<std::string> schedules;
    std::vector<size_t> next(shapes.size(), 0);
    for (bool more = true; more && out.size() < k;) {
      more = false;
      for (size_t s = 0; s < shapes.size() && out.size() < k; ++s) {
        // The shape's fastest record not yet taken that maps to a new schedule.
        while (next[s] < shapes[s].records.size()) {
          const Record& r = *shapes[s].records[next[s]++];
          size_t before = out.size();
          for (SplitFit fit : {SplitFit::Divisors, SplitFit::KeepInner}) {
            std::string why;
            std::optional<State> state = map_schedule(r.steps, scope.dag, fit, why, vector_lanes);
            if (state && out.size() < k && schedules.insert(state->signature()).second)
              out.push_back({r, std::move(*state), shapes[s].flops / r.seconds / 1e9});
          }
          if (out.size() > before) break;
        }
        more = more || next[s] < shapes[s].records.size();
      }
    }
    return out;
  }
  return out;
}

}  // namespace ansor
