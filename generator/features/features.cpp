// The rows of a loop program: every store is analysed first (its accesses and the regions its
// loops sweep), then reuse compares the stores sharing a loop.
#include "features/features.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "features/buffer_access.h"
#include "features/op_counts.h"
#include "features/store_sites.h"
#include "ir/arith.h"
#include "lower/lower.h"

namespace ansor {

namespace {

constexpr int at(Feature f) { return static_cast<int>(f); }

// The row assembly below indexes blocks of the table by offsets; the table must keep them.
static_assert(at(Feature::IntMad) - at(Feature::FloatMad) == kNumArithKinds && at(Feature::BoolOp) == at(Feature::IntMad) + kNumArithKinds &&
              at(Feature::SelectOp) == at(Feature::BoolOp) + 1);
static_assert(at(Feature::UnrollNum) - at(Feature::VecNum) == at(Feature::ParallelNum) - at(Feature::UnrollNum) &&
              at(Feature::VecPosNone) == at(Feature::VecNum) + 3 && at(Feature::VecPosMixed) == at(Feature::VecPosNone) + 7);
static_assert(kBufferSlotFeatures == 18 && at(Feature::B4Stride) == at(Feature::B0AccRead) + kMaxBufferSlots * kBufferSlotFeatures - 1);
static_assert(at(Feature::ArithIntensity9) - at(Feature::ArithIntensity0) == kArithIntensitySamples - 1);

// Where an annotated loop sits for the store it encloses (the order of the one-hot features).
enum class LoopPosition : uint8_t { None, InnerSpatial, MiddleSpatial, OuterSpatial, InnerReduce, MiddleReduce, OuterReduce, Mixed };

enum class ReuseType : uint8_t { LoopMultipleRead, SerialMultipleReadWrite, NoReuse };

float log2p(double x) { return static_cast<float>(x < 0 ? -std::log2(1 - x) : std::log2(1 + x)); }

struct StoreAnalysis {
  std::vector<const ForNode*> loops;  // outermost first
  std::vector<double> extents;        // per loop, the iterations it adds (see analyze)
  std::vector<BufferAccess> accesses;
  TouchedRegions touched;
  OpCounts ops;
  double outer_prod = 1;  // iterations of the store
};

struct AccessFeatures {
  AccessType type = AccessType::Read;
  double bytes = 0, unique_bytes = 0, lines = 0, unique_lines = 0;
  ReuseType reuse = ReuseType::NoReuse;
  double reuse_dis_iter = 0, reuse_dis_bytes = 0, reuse_ct = 0;
  double stride = 0;
};

class FeatureExtractor {
 public:
  FeatureExtractor(const LoweredKernel& kernel, const FeatureOptions& options)
      : kernel_(kernel), options_(options), program_(collect_stores(kernel.body)) {}

  std::vector<StoreFeatures> run() {
    for (const StoreSite& site : program_.stores) stores_.push_back(analyze(site));
    summarize_loops();
    std::vector<StoreFeatures> rows;
    rows.reserve(stores_.size());
    for (size_t s = 0; s < stores_.size(); ++s) {
      FeatureRow row{};
      computation(row, s);
      buffer_access(row, s);
      arithmetic_intensity(row, s);
      allocation(row, s);
      outer_scope(row, s);
      tensor_intrinsic(row, s);
      if (options_.log_scale)
        for (int i = 0; i < kNumFeatures; ++i)
          if (feature_is_log_scaled(i)) row[i] = log2p(row[i]);
      rows.push_back({program_.stores[s].store->buffer, row});
    }
    return rows;
  }

 private:
  StoreAnalysis analyze(const StoreSite& site) const {
    StoreAnalysis a;
    for (int l : site.loops) {
      const ForNode* f = program_.loops[l];
      a.loops.push_back(f);
      a.extents.push_back(static_cast<double>(f->extent));
      // A loop bound to the GPU index of an enclosing loop does not iterate: each thread takes
      // its index once (lower/interpreter.h), so the pair runs the smaller extent's threads.
      if (f->for_kind != ForKind::ThreadBinding || f->binding == IterAnnotation::VThread) continue;
      for (size_t m = 0; m + 1 < a.loops.size(); ++m) {
        if (a.loops[m]->for_kind == ForKind::ThreadBinding && a.loops[m]->binding == f->binding) {
          a.extents[m] = std::min(a.extents[m], a.extents.back());
          a.extents.back() = 1;
          break;
        }
      }
    }
    for (double e : a.extents) a.outer_prod *= e;
    a.accesses = store_accesses(kernel_, *site.store);
    a.touched = touched_regions(a.accesses, a.loops);
    a.ops = count_ops(*site.store);
    return a;
  }

  // Bytes store s touches at `level` (touched_regions' levels).
  double touched_bytes(size_t s, size_t level) const {
    const StoreAnalysis& a = stores_[s];
    double bytes = 0;
    for (size_t i = 0; i < a.accesses.size(); ++i) bytes += a.touched.elements[level][i] * static_cast<double>(a.accesses[i].element_bytes());
    return bytes;
  }

  // The position of loop `loop` among the loops of store s.
  size_t level_of(size_t s, int loop) const {
    const std::vector<int>& loops = program_.stores[s].loops;
    return static_cast<size_t>(std::find(loops.begin(), loops.end(), loop) - loops.begin());
  }

  // Per loop: the bytes one of its iterations touches, and how many stores inside it access each
  // buffer.
  void summarize_loops() {
    size_t num_loops = program_.loops.size();
    iteration_bytes_.assign(num_loops, 0.0);
    buffer_accesses_.assign(num_loops, std::vector<int>(kernel_.buffers.size(), 0));
    for (size_t l = 0; l < num_loops; ++l) {
      for (int s : program_.loop_stores[l]) {
        size_t store = static_cast<size_t>(s);
        iteration_bytes_[l] += touched_bytes(store, level_of(store, static_cast<int>(l)) + 1);
        for (const BufferAccess& access : stores_[store].accesses) ++buffer_accesses_[l][access.buffer_index];
      }
    }
  }

  // ---- Group 1 ----------------------------------------------------------------------------------

  void computation(FeatureRow& row, size_t s) const {
    const StoreAnalysis& a = stores_[s];
    for (int k = 0; k < kNumArithKinds; ++k) {
      row[at(Feature::FloatMad) + k] = static_cast<float>(a.ops.float_ops[k] * a.outer_prod);
      row[at(Feature::IntMad) + k] = static_cast<float>(a.ops.int_ops[k] * a.outer_prod);
    }
    row[at(Feature::BoolOp)] = static_cast<float>(a.ops.bool_ops * a.outer_prod);
    row[at(Feature::SelectOp)] = static_cast<float>(a.ops.select_ops * a.outer_prod);
    const StoreNode& store = *program_.stores[s].store;
    annotation(row, Feature::VecNum, s, store, [](ForKind k) { return k == ForKind::Vectorized || k == ForKind::VectorizeHint; });
    annotation(row, Feature::UnrollNum, s, store, [](ForKind k) { return k == ForKind::Unrolled; });
    annotation(row, Feature::ParallelNum, s, store, [](ForKind k) { return k == ForKind::Parallel; });

    row[at(Feature::IsGpu)] = program_.has_thread_binding ? 1.0f : 0.0f;
    // Outside any binding a program runs as one block of one thread.
    double block[3] = {1, 1, 1}, thread[3] = {1, 1, 1}, vthread = 1;
    for (const ForNode* f : a.loops) {
      if (f->for_kind != ForKind::ThreadBinding) continue;
      double extent = static_cast<double>(f->extent);
      switch (f->binding) {
        case IterAnnotation::BlockX: block[0] = extent; break;
        case IterAnnotation::BlockY: block[1] = extent; break;
        case IterAnnotation::BlockZ: block[2] = extent; break;
        case IterAnnotation::ThreadX: thread[0] = extent; break;
        case IterAnnotation::ThreadY: thread[1] = extent; break;
        case IterAnnotation::ThreadZ: thread[2] = extent; break;
        case IterAnnotation::VThread: vthread *= extent; break;
        default: break;
      }
    }
    for (int d = 0; d < 3; ++d) {
      row[at(Feature::BlockIdxXLen) + d] = static_cast<float>(block[d]);
      row[at(Feature::ThreadIdxXLen) + d] = static_cast<float>(thread[d]);
    }
    row[at(Feature::VthreadLen)] = static_cast<float>(vthread);
  }

  // Number, product of extents, innermost extent and position of the loops of one kind.
  template <class IsKind>
  void annotation(FeatureRow& row, Feature first, size_t s, const StoreNode& store, IsKind is_kind) const {
    const std::vector<const ForNode*>& loops = stores_[s].loops;
    double num = 0, prod = 1;
    size_t innermost = loops.size();
    for (size_t l = 0; l < loops.size(); ++l) {
      if (!is_kind(loops[l]->for_kind)) continue;
      ++num;
      prod *= static_cast<double>(loops[l]->extent);
      innermost = l;
    }
    bool any = innermost < loops.size();
    int base = at(first);
    row[base] = static_cast<float>(num);
    row[base + 1] = static_cast<float>(any ? prod : 0.0);
    row[base + 2] = static_cast<float>(any ? loops[innermost]->extent : 0);
    LoopPosition pos = any ? position(innermost, store, loops, program_.stores[s].loops_outside_allocation) : LoopPosition::None;
    row[base + 3 + static_cast<int>(pos)] = 1.0f;
  }

  // Spatial: the loop indexes one dimension of the stored element (the last: inner, the first:
  // outer); mixed: several. Reduce: it indexes none but the value reads through it; its place
  // among such loops of the store. A loop the store does not use at all, or one outside the
  // allocation of its buffer, is a loop of a consumer computing the stage inside it: outer
  // spatial.
  static LoopPosition position(size_t loop, const StoreNode& store, const std::vector<const ForNode*>& loops, int loops_outside_allocation) {
    size_t own = static_cast<size_t>(std::max(loops_outside_allocation, 0));
    if (loop < own) return LoopPosition::OuterSpatial;
    const VarNode* var = loops[loop]->var.get();
    int dims = 0;
    size_t dim = 0;
    for (size_t d = 0; d < store.indices.size(); ++d) {
      if (uses_var(store.indices[d], var)) {
        ++dims;
        dim = d;
      }
    }
    if (dims > 1) return LoopPosition::Mixed;
    if (dims == 1) {
      if (dim + 1 == store.indices.size()) return LoopPosition::InnerSpatial;
      return dim == 0 ? LoopPosition::OuterSpatial : LoopPosition::MiddleSpatial;
    }
    std::vector<const VarNode*> reduce;
    for (size_t l = own; l < loops.size(); ++l) {
      const VarNode* v = loops[l]->var.get();
      bool indexes = std::any_of(store.indices.begin(), store.indices.end(), [v](const Expr& e) { return uses_var(e, v); });
      if (!indexes && uses_var(store.value, v)) reduce.push_back(v);
    }
    auto it = std::find(reduce.begin(), reduce.end(), var);
    if (it == reduce.end()) return LoopPosition::OuterSpatial;
    if (it + 1 == reduce.end()) return LoopPosition::InnerReduce;
    return it == reduce.begin() ? LoopPosition::OuterReduce : LoopPosition::MiddleReduce;
  }

  // ---- Group 2 ----------------------------------------------------------------------------------

  void buffer_access(FeatureRow& row, size_t s) const {
    const StoreAnalysis& a = stores_[s];
    std::vector<AccessFeatures> features;
    for (size_t i = 0; i < a.accesses.size(); ++i) features.push_back(access_features(s, i));
    std::vector<size_t> order(features.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      if (features[x].lines != features[y].lines) return features[x].lines > features[y].lines;
      return features[x].bytes > features[y].bytes;
    });
    for (size_t slot = 0; slot < order.size() && slot < kMaxBufferSlots; ++slot) {
      const AccessFeatures& f = features[order[slot]];
      float* out = row.data() + at(Feature::B0AccRead) + slot * kBufferSlotFeatures;
      auto set = [&](Feature field, double value) { out[at(field) - at(Feature::B0AccRead)] = static_cast<float>(value); };
      set(f.type == AccessType::Read ? Feature::B0AccRead : f.type == AccessType::Write ? Feature::B0AccWrite : Feature::B0AccReadWrite, 1);
      set(Feature::B0Bytes, f.bytes);
      set(Feature::B0UniqueBytes, f.unique_bytes);
      set(Feature::B0Lines, f.lines);
      set(Feature::B0UniqueLines, f.unique_lines);
      set(f.reuse == ReuseType::LoopMultipleRead          ? Feature::B0ReuseLoopMultipleRead
          : f.reuse == ReuseType::SerialMultipleReadWrite ? Feature::B0ReuseSerialMultipleReadWrite
                                                          : Feature::B0ReuseNone,
          1);
      set(Feature::B0ReuseDisIter, f.reuse_dis_iter);
      set(Feature::B0ReuseDisBytes, f.reuse_dis_bytes);
      set(Feature::B0ReuseCt, f.reuse_ct);
      // Without reuse, as if reused half a time (the data comes twice as dear).
      double per_reuse = std::max(f.reuse_ct, 0.5);
      set(Feature::B0BytesDReuseCt, f.bytes / per_reuse);
      set(Feature::B0UniqueBytesDReuseCt, f.unique_bytes / per_reuse);
      set(Feature::B0LinesDReuseCt, f.lines / per_reuse);
      set(Feature::B0UniqueLinesDReuseCt, f.unique_lines / per_reuse);
      set(Feature::B0Stride, f.stride);
    }
  }

  AccessFeatures access_features(size_t s, size_t i) const {
    const StoreAnalysis& a = stores_[s];
    const BufferAccess& access = a.accesses[i];
    const std::vector<const ForNode*>& loops = a.loops;
    double element = static_cast<double>(access.element_bytes());
    double line = static_cast<double>(options_.cache_line_bytes);
    AccessFeatures f;
    f.type = access.type;
    f.bytes = a.outer_prod * static_cast<double>(access.indices.size()) * element;
    f.unique_bytes = a.touched.elements[0][i] * element;

    // Cache lines: the innermost loop that moves the access fetches min(1, stride / line) of a
    // line per iteration; loops inside it that do not move it reuse the same line.
    int64_t stride = 0;
    double repeat = 1;
    size_t moving = loops.size();
    for (size_t l = loops.size(); l-- > 0;) {
      stride = loop_stride(access, *loops[l], loops);
      if (stride != 0) {
        moving = l;
        break;
      }
      repeat *= a.extents[l];
    }
    f.lines = std::max(1.0, a.outer_prod / repeat * std::min(1.0, static_cast<double>(stride) * element / line));
    f.stride = moving + 1 == loops.size() ? static_cast<double>(stride) : 0.0;
    double run = static_cast<double>(contiguous_elements(*access.buffer, a.touched.outermost[i])) * element;
    f.unique_lines = std::max(1.0, f.unique_bytes / std::min(run, line));

    // Reuse: from the innermost loop out, the first loop that does not move the access reuses
    // its data on every iteration; before it, a loop in which other stores access the buffer
    // too reuses it between the statements.
    double iterations = 1;
    for (size_t l = loops.size(); l-- > 0;) {
      int loop = program_.stores[s].loops[l];
      int accesses_in_loop = buffer_accesses_[loop][access.buffer_index];
      bool moves = access.uses(loops[l]->var.get());
      if (!moves || accesses_in_loop > 1) {
        f.reuse = moves ? ReuseType::SerialMultipleReadWrite : ReuseType::LoopMultipleRead;
        f.reuse_dis_iter = iterations;
        f.reuse_dis_bytes = iteration_bytes_[loop];
        f.reuse_ct = moves ? accesses_in_loop - 1 : a.extents[l];
        break;
      }
      iterations *= a.extents[l];
    }
    return f;
  }

  // ---- Group 3 ----------------------------------------------------------------------------------

  // Operations per byte touched, against operations, from the innermost loop out (one point per
  // loop level; a store in no loop has the one point of itself), sampled at 10%, ..., 100% of
  // the store's operations with linear interpolation between the points.
  void arithmetic_intensity(FeatureRow& row, size_t s) const {
    const StoreAnalysis& a = stores_[s];
    const Buffer& stored = *a.accesses.front().buffer;
    double ops = dtype_is_float(stored.dtype) ? a.ops.float_flops() : a.ops.int_flops();
    std::vector<double> xs, ys;
    size_t n = a.loops.size();
    if (n == 0) {
      xs.push_back(ops);
      ys.push_back(ops / touched_bytes(s, 0));
    }
    for (size_t l = n; l-- > 0;) {
      ops *= a.extents[l];
      xs.push_back(ops);
      ys.push_back(ops / touched_bytes(s, l));
    }
    double total = xs.back();
    if (total <= 0) return;
    size_t p = 0;
    for (int k = 0; k < kArithIntensitySamples; ++k) {
      double x = total * (k + 1) / kArithIntensitySamples;
      while (p + 1 < xs.size() && xs[p] < x * (1 - 1e-9)) ++p;
      double y = p == 0 ? ys[0] : ys[p - 1] + (ys[p] - ys[p - 1]) * (x - xs[p - 1]) / (xs[p] - xs[p - 1]);
      row[at(Feature::ArithIntensity0) + k] = static_cast<float>(y);
    }
  }

  // ---- Groups 4 and 5 -----------------------------------------------------------------------------

  // The stored buffer's allocation: kernel arguments have none; a workspace is allocated once
  // per call; a local buffer once per iteration of the loops outside its Allocate, a shared
  // buffer once per iteration of those that are no thread's own (its block's threads share it).
  void allocation(FeatureRow& row, size_t s) const {
    const StoreAnalysis& a = stores_[s];
    const Buffer& stored = *a.accesses.front().buffer;
    if (stored.scope == BufferScope::Param) return;
    double elements = static_cast<double>(stored.num_elements());
    double outer = 1;
    int outside = program_.stores[s].loops_outside_allocation;
    for (int l = 0; l < outside; ++l) {
      const ForNode& loop = *a.loops[static_cast<size_t>(l)];
      bool per_thread = loop.for_kind == ForKind::ThreadBinding && thread_axis(loop.binding) >= 0;
      if (stored.scope != BufferScope::Shared || !per_thread) outer *= a.extents[static_cast<size_t>(l)];
    }
    row[at(Feature::AllocSize)] = static_cast<float>(elements * dtype_bytes(stored.dtype));
    row[at(Feature::AllocProd)] = static_cast<float>(elements * outer);
    row[at(Feature::AllocOuterProd)] = static_cast<float>(outer);
    row[at(Feature::AllocInnerProd)] = static_cast<float>(a.outer_prod / outer);
  }

  void outer_scope(FeatureRow& row, size_t s) const {
    const StoreAnalysis& a = stores_[s];
    row[at(Feature::OuterProd)] = static_cast<float>(a.outer_prod);
    row[at(Feature::NumLoops)] = static_cast<float>(a.loops.size());
    row[at(Feature::AutoUnrollMaxStep)] = static_cast<float>(kernel_.auto_unroll_max_step(program_.stores[s].store->buffer));
    if (const MemoryHints* hints = kernel_.find_memory_hints(program_.stores[s].store->buffer)) {
      row[at(Feature::PrefetchBytes)] = hints->prefetched.empty() ? 0.0f : static_cast<float>(hints->prefetch_bytes);
      row[at(Feature::StreamStores)] = hints->stream_stores ? 1.0f : 0.0f;
    }
    row[at(Feature::WastedLanes)] = static_cast<float>(wasted_lanes(a));
    if (program_.stores[s].ragged_guard) row[at(Feature::GuardedIters)] = static_cast<float>(a.outer_prod);
  }

  // A store inside a tensorized nest: the calls (its iterations outside the nest), the bytes of
  // the operands one call reads (each load's elements that the nest's loops move through), and
  // the accumulator vectors of the register tile around the calls (the loops between the nest
  // and the first loop outside it that the stored element does not depend on, a reduction's).
  void tensor_intrinsic(FeatureRow& row, size_t s) const {
    const StoreAnalysis& a = stores_[s];
    const StoreNode& store = *program_.stores[s].store;
    size_t nest = a.loops.size();
    for (size_t l = 0; l < a.loops.size() && nest == a.loops.size(); ++l)
      if (a.loops[l]->for_kind == ForKind::Tensorized) nest = l;
    if (nest == a.loops.size()) return;
    auto indexes_store = [&](const ForNode* f) {
      return std::any_of(store.indices.begin(), store.indices.end(), [&](const Expr& i) { return uses_var(i, f->var.get()); });
    };
    double calls = 1, bytes = 0, accumulators = 1;
    for (size_t l = 0; l < nest; ++l) calls *= static_cast<double>(a.loops[l]->extent);
    for (const LoadNode* load : collect_loads(store.value)) {
      if (load->tensor == store.buffer) continue;
      double elements = 1;
      for (size_t l = nest; l < a.loops.size(); ++l)
        if (std::any_of(load->indices.begin(), load->indices.end(), [&](const Expr& i) { return uses_var(i, a.loops[l]->var.get()); }))
          elements *= static_cast<double>(a.loops[l]->extent);
      bytes += elements * dtype_bytes(load->dtype);
    }
    for (size_t l = nest; l-- > 0 && indexes_store(a.loops[l]);) accumulators *= static_cast<double>(a.loops[l]->extent);
    row[at(Feature::TensorCalls)] = static_cast<float>(calls);
    row[at(Feature::TensorCallBytes)] = static_cast<float>(bytes);
    row[at(Feature::TensorAccumulators)] = static_cast<float>(accumulators);
  }

  // The lanes of the store's masked vector loop that are masked off, over the whole program:
  // per combination of the loops its active count depends on (enumerated up to
  // kMaxEnumeratedCounts of them; beyond, the count's mean over its bounds), the lanes it
  // leaves, times the iterations of the other loops.
  static constexpr int64_t kMaxEnumeratedCounts = 4096;
  static double wasted_lanes(const StoreAnalysis& a) {
    const ForNode* lanes = a.loops.empty() ? nullptr : a.loops.back();
    if (!lanes || !lanes->masked()) return 0;
    std::vector<const ForNode*> used;
    double others = 1, combinations = 1;
    RangeMap ranges;
    for (size_t l = 0; l + 1 < a.loops.size(); ++l) {
      ranges[a.loops[l]->var.get()] = Interval::range(a.loops[l]->extent);
      if (uses_var(lanes->active_lanes, a.loops[l]->var.get())) {
        used.push_back(a.loops[l]);
        combinations *= static_cast<double>(a.loops[l]->extent);
      } else {
        others *= a.extents[l];
      }
    }
    auto left = [&](double active) { return static_cast<double>(lanes->extent) - std::clamp(active, 0.0, static_cast<double>(lanes->extent)); };
    if (combinations > kMaxEnumeratedCounts) {
      const Interval b = bound_of(lanes->active_lanes, ranges);
      return b.bounded() ? left((static_cast<double>(b.min) + static_cast<double>(b.max)) / 2) * combinations * others : 0;
    }
    double wasted = 0;
    std::vector<int64_t> at(used.size(), 0);
    for (int64_t k = 0; k < static_cast<int64_t>(combinations); ++k) {
      VarMap values;
      for (size_t u = 0; u < used.size(); ++u) values.emplace_back(used[u]->var.get(), int_imm(at[u]));
      const Expr active = simplify(substitute(lanes->active_lanes, values));
      const int64_t* n = as_const_int(active);
      wasted += n ? left(static_cast<double>(*n)) : 0;
      for (size_t u = used.size(); u-- > 0;) {
        if (++at[u] < used[u]->extent) break;
        at[u] = 0;
      }
    }
    return wasted * others;
  }

  const LoweredKernel& kernel_;
  const FeatureOptions& options_;
  LoopProgram program_;
  std::vector<StoreAnalysis> stores_;
  std::vector<double> iteration_bytes_;             // per loop
  std::vector<std::vector<int>> buffer_accesses_;  // per loop, per buffer
};

}  // namespace

std::vector<StoreFeatures> extract_features(const LoweredKernel& kernel, const FeatureOptions& options) {
  return FeatureExtractor(kernel, options).run();
}

LoweredKernel lower_for_features(const State& state) {
  LowerOptions options;
  options.expand_unrolled_loops = false;
  return lower_state(state, "features", options);
}

std::vector<StoreFeatures> extract_features(const State& state, const FeatureOptions& options) {
  return extract_features(lower_for_features(state), options);
}

}  // namespace ansor
