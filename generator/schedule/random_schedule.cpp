// Random step sequences: proposals for every step kind, kept when they apply.
#include "schedule/random_schedule.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "schedule/bound_inference.h"
#include "schedule/steps.h"

namespace ansor {

namespace {

class Proposer {
 public:
  Proposer(const State& state, std::mt19937_64& rng, const RandomScheduleOptions& options) : s_(state), rng_(rng), options_(options) {}

  StepPtr propose() {
    // Weights of the step kinds, in the order of the switch below.
    static const int kWeights[] = {25, 4, 3, 10, 8, 16, 4, 3, 10, 8, 3, 3, 4, 4, 3};
    std::discrete_distribution<int> pick(std::begin(kWeights), std::end(kWeights));
    switch (pick(rng_)) {
      case 0: return split();
      case 1: return follow_split();
      case 2: return follow_fused_split();
      case 3: return reorder();
      case 4: return fuse();
      case 5: return annotate();
      case 6: return pragma();
      case 7: return storage_align();
      case 8: return compute_at();
      case 9: return with_stage([](int st) { return std::make_shared<ComputeInlineStep>(st); });
      case 10: return with_stage([](int st) { return std::make_shared<ComputeRootStep>(st); });
      case 11: return cache_read();
      case 12: return with_stage([&](int st) { return std::make_shared<CacheWriteStep>(st, MemoryScope::Local); });
      case 13: return rfactor();
      default: return layout_rewrite();
    }
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // A computed stage with loops, or -1.
  int loop_stage() {
    std::vector<int> candidates;
    for (int i = 0; i < s_.num_stages(); ++i)
      if (!s_.stage(i).is_placeholder() && s_.stage(i).location != ComputeLocation::Inlined && !s_.stage(i).leaves.empty())
        candidates.push_back(i);
    if (candidates.empty()) return -1;
    return candidates[uniform(0, static_cast<int>(candidates.size()) - 1)];
  }

  template <class F>
  StepPtr with_stage(F make) {
    int st = uniform(0, s_.num_stages() - 1);
    return make(st);
  }

  int64_t random_length(int64_t extent) {
    if (extent <= 1) return 1;
    if (chance(0.7)) {
      std::vector<int64_t> divisors;
      for (int64_t d = 1; d <= extent; ++d)
        if (extent % d == 0) divisors.push_back(d);
      return divisors[uniform(0, static_cast<int>(divisors.size()) - 1)];
    }
    return uniform(1, static_cast<int>(std::min<int64_t>(extent, 16)));
  }

  StepPtr split() {
    int st = loop_stage();
    if (st < 0) return nullptr;
    const Stage& stage = s_.stage(st);
    int iter = uniform(0, static_cast<int>(stage.leaves.size()) - 1);
    int64_t extent = stage.leaf(iter).extent;
    if (extent < 1) extent = 8;
    std::vector<int64_t> lengths;
    int parts = uniform(1, 3);
    int64_t rest = extent;
    for (int p = 0; p < parts; ++p) {
      int64_t l = random_length(rest);
      lengths.insert(lengths.begin(), l);
      rest = (rest + l - 1) / l;
    }
    return std::make_shared<SplitStep>(st, iter, lengths);
  }

  std::vector<int> split_steps() const {
    std::vector<int> ids;
    for (size_t i = 0; i < s_.steps().size(); ++i)
      if (s_.steps()[i]->kind() == StepKind::Split) ids.push_back(static_cast<int>(i));
    return ids;
  }

  StepPtr follow_split() {
    std::vector<int> ids = split_steps();
    int st = loop_stage();
    if (ids.empty() || st < 0) return nullptr;
    int src = ids[uniform(0, static_cast<int>(ids.size()) - 1)];
    auto* split = static_cast<const SplitStep*>(s_.steps()[src].get());
    int iter = uniform(0, static_cast<int>(s_.stage(st).leaves.size()) - 1);
    return std::make_shared<FollowSplitStep>(st, iter, src, uniform(1, static_cast<int>(split->lengths.size())));
  }

  StepPtr follow_fused_split() {
    std::vector<int> ids = split_steps();
    int st = loop_stage();
    if (ids.empty() || st < 0) return nullptr;
    std::vector<int> src = {ids[uniform(0, static_cast<int>(ids.size()) - 1)]};
    if (ids.size() > 1 && chance(0.5)) src.push_back(ids[uniform(0, static_cast<int>(ids.size()) - 1)]);
    int iter = uniform(0, static_cast<int>(s_.stage(st).leaves.size()) - 1);
    return std::make_shared<FollowFusedSplitStep>(st, iter, src, 0);
  }

  StepPtr reorder() {
    int st = loop_stage();
    if (st < 0) return nullptr;
    std::vector<int> order(s_.stage(st).leaves.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    return std::make_shared<ReorderStep>(st, order);
  }

  StepPtr fuse() {
    int st = loop_stage();
    if (st < 0) return nullptr;
    int n = static_cast<int>(s_.stage(st).leaves.size());
    if (n < 2) return nullptr;
    int first = uniform(0, n - 2);
    int count = uniform(2, std::min(3, n - first));
    std::vector<int> iters(count);
    std::iota(iters.begin(), iters.end(), first);
    return std::make_shared<FuseStep>(st, iters);
  }

  StepPtr annotate() {
    int st = loop_stage();
    if (st < 0) return nullptr;
    int n = static_cast<int>(s_.stage(st).leaves.size());
    int iter = uniform(0, n - 1);
    IterAnnotation a;
    switch (uniform(0, options_.gpu_bindings ? 4 : 2)) {
      case 0:
        a = IterAnnotation::Parallel;
        iter = uniform(0, std::min(1, n - 1));
        break;
      case 1:
        a = IterAnnotation::Vectorize;
        iter = chance(0.8) ? n - 1 : iter;
        break;
      case 2: a = IterAnnotation::Unroll; break;
      case 3: a = chance(0.5) ? IterAnnotation::BlockX : IterAnnotation::BlockY; break;
      default: a = chance(0.5) ? IterAnnotation::ThreadX : IterAnnotation::VThread; break;
    }
    // A reduction across threads lowers only in one loop structure, which the GPU sketches build.
    if (is_thread_binding(a) && s_.stage(st).leaf(iter).kind != IterKind::Spatial) return nullptr;
    return std::make_shared<AnnotateStep>(st, iter, a);
  }

  StepPtr pragma() {
    int st = loop_stage();
    if (st < 0) return nullptr;
    static const int64_t kSteps[] = {0, 16, 64, 512};
    return std::make_shared<PragmaStep>(st, 0, PragmaKind::AutoUnrollMaxStep, kSteps[uniform(0, 3)]);
  }

  StepPtr storage_align() {
    int st = loop_stage();
    if (st < 0 || s_.stage(st).num_spatial_roots() == 0) return nullptr;
    static const int64_t kFactors[] = {2, 4, 8, 16, 32};
    int64_t factor = kFactors[uniform(0, 4)];
    return std::make_shared<StorageAlignStep>(st, uniform(0, s_.stage(st).num_spatial_roots() - 1), factor, uniform(0, static_cast<int>(factor) - 1));
  }

  StepPtr compute_at() {
    int st = uniform(0, s_.num_stages() - 1);
    if (s_.stage(st).is_placeholder()) return nullptr;
    std::vector<int> consumers = s_.consumers(st);
    if (consumers.empty()) return nullptr;
    int target = consumers[uniform(0, static_cast<int>(consumers.size()) - 1)];
    if (s_.stage(target).location == ComputeLocation::Inlined || s_.stage(target).leaves.empty()) return nullptr;
    return std::make_shared<ComputeAtStep>(st, target, uniform(0, static_cast<int>(s_.stage(target).leaves.size()) - 1));
  }

  StepPtr cache_read() {
    int st = uniform(0, s_.num_stages() - 1);
    std::vector<int> readers = s_.readers(st);
    if (readers.empty()) return nullptr;
    std::shuffle(readers.begin(), readers.end(), rng_);
    readers.resize(uniform(1, static_cast<int>(readers.size())));
    std::sort(readers.begin(), readers.end());
    return std::make_shared<CacheReadStep>(st, chance(0.5) ? MemoryScope::Local : MemoryScope::Shared, readers);
  }

  StepPtr rfactor() {
    int st = loop_stage();
    if (st < 0 || !s_.stage(st).op->reduction()) return nullptr;
    const Stage& stage = s_.stage(st);
    std::vector<int> reduce_leaves;
    for (size_t p = 0; p < stage.leaves.size(); ++p)
      if (stage.leaf(static_cast<int>(p)).kind == IterKind::Reduce) reduce_leaves.push_back(static_cast<int>(p));
    if (reduce_leaves.empty()) return nullptr;
    return std::make_shared<RfactorStep>(st, reduce_leaves[uniform(0, static_cast<int>(reduce_leaves.size()) - 1)],
                                         uniform(0, stage.num_spatial_roots()));
  }

  StepPtr layout_rewrite() {
    std::vector<int> consts;
    for (int i = 0; i < s_.num_stages(); ++i)
      if (s_.stage(i).is_placeholder() && s_.stage(i).op->is_const) consts.push_back(i);
    if (consts.empty()) return nullptr;
    return std::make_shared<LayoutRewriteStep>(consts[uniform(0, static_cast<int>(consts.size()) - 1)]);
  }

  const State& s_;
  std::mt19937_64& rng_;
  const RandomScheduleOptions& options_;
};

}  // namespace

State random_schedule(const std::shared_ptr<const ComputeDAG>& dag, uint64_t seed, const RandomScheduleOptions& options) {
  std::mt19937_64 rng(seed);
  State state(dag);
  int applied = 0;
  for (int attempt = 0; applied < options.steps && attempt < options.steps * 30; ++attempt) {
    StepPtr step = Proposer(state, rng, options).propose();
    if (!step) continue;
    State next = state;
    try {
      next.apply(step);
    } catch (const StepError&) {
      continue;
    }
    // Extents where stages are computed now: later proposals split what the loops really are.
    infer_bounds(next);
    state = std::move(next);
    ++applied;
  }
  return state;
}

}  // namespace ansor
