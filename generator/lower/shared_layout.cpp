// Shared buffers padded or rotated against bank conflicts (see shared_layout.h).
#include "lower/shared_layout.h"

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/arith.h"
#include "lower/gpu_launch.h"
#include <ansor/scalar_support.h>

namespace ansor {

namespace {

constexpr int64_t kWarpLanes = 32, kBanks = 32, kBankBytes = 4;
// The widest access one lane makes (a vector of four floats); a row of banks is 128 bytes.
constexpr int64_t kMaxAccessBytes = 16, kBankRowBytes = kBanks * kBankBytes;
// A row of an 8 x 8 matrix of 16-bit elements that ldmatrix reads.
constexpr int64_t kMatrixRowBytes = 16;

using Values = std::unordered_map<const VarNode*, int64_t>;

// The value of an index expression, variables not in `values` at 0 (their loops' first
// iteration); nullopt where it reads memory or is not integer arithmetic.
std::optional<int64_t> evaluate(const Expr& e, const Values& values) {
  switch (e->kind) {
    case ExprKind::IntImm: return e->as<IntImmNode>()->value;
    case ExprKind::Var: {
      auto it = values.find(e->as<VarNode>());
      return it == values.end() ? 0 : it->second;
    }
    case ExprKind::Cast: {
      if (!dtype_is_int(e->dtype)) return std::nullopt;
      return evaluate(e->as<CastNode>()->value, values);
    }
    case ExprKind::Select: {
      auto* s = e->as<SelectNode>();
      std::optional<int64_t> c = evaluate(s->cond, values);
      if (!c) return std::nullopt;
      return evaluate(*c ? s->true_value : s->false_value, values);
    }
    case ExprKind::Binary: {
      auto* b = e->as<BinaryNode>();
      std::optional<int64_t> x = evaluate(b->a, values), y = evaluate(b->b, values);
      if (!x || !y) return std::nullopt;
      switch (b->op) {
        case BinaryOp::Add: return *x + *y;
        case BinaryOp::Sub: return *x - *y;
        case BinaryOp::Mul: return *x * *y;
        case BinaryOp::Div: return *y == 0 ? std::nullopt : std::optional<int64_t>(ansor_rt::floordiv(*x, *y));
        case BinaryOp::Mod: return *y == 0 ? std::nullopt : std::optional<int64_t>(ansor_rt::floormod(*x, *y));
        case BinaryOp::Min: return std::min(*x, *y);
        case BinaryOp::Max: return std::max(*x, *y);
        case BinaryOp::EQ: return *x == *y;
        case BinaryOp::NE: return *x != *y;
        case BinaryOp::LT: return *x < *y;
        case BinaryOp::LE: return *x <= *y;
        case BinaryOp::GT: return *x > *y;
        case BinaryOp::GE: return *x >= *y;
        case BinaryOp::And: return *x && *y;
        case BinaryOp::Or: return *x || *y;
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

// One access of a warp to a shared buffer: the element each lane of the block's first warp
// starts at (none where the lane does not make it), the bytes a lane moves from there, and how
// many times a block makes it.
struct Access {
  std::array<std::optional<std::vector<int64_t>>, kWarpLanes> lanes;
  int64_t bytes = 0;
  int64_t count = 1;
  // The statements of a sequence that the access is in (copies of an unrolled loop's body among
  // them), for the runs of consecutive elements they move together; null where there is none.
  const SeqNode* sequence = nullptr;
};

// What the accesses to one buffer need of its layout, and the accesses.
struct BufferAccesses {
  int64_t aligned_bytes = kBankBytes;  // row strides stay a multiple of this many bytes
  // Some thread moves consecutive elements of a row that only the compiler may make one vector
  // access, which it cannot through rotated rows' index arithmetic.
  bool implicit_vectors = false;
  std::vector<Access> accesses;
};

int64_t largest_power_of_two_within(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// The accesses to the shared buffers of one launch, walked in program order.
class AccessCollector {
 public:
  AccessCollector(const LoweredKernel& kernel, const GpuLaunch& launch, std::map<std::string, BufferAccesses>& out)
      : kernel_(kernel), launch_(launch), out_(out) {}

  void walk(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto* f = s->as<ForNode>();
        const SeqNode* outer = sequence_;
        sequence_ = nullptr;  // a sequence in the loop is the loop's own
        if (const TensorCall* call = kernel_.find_tensor_call(f); call && call->intrinsic->warp_m_tiles > 0) {
          add_fragment_loads(*f, *call);
          sequence_ = outer;
          return;
        }
        loops_.push_back(f);
        walk(f->body);
        loops_.pop_back();
        sequence_ = outer;
        return;
      }
      case StmtKind::Store: {
        auto* st = s->as<StoreNode>();
        add_loads(st->value);
        for (const Expr& i : st->indices) add_loads(i);
        if (!st->across_threads) add(st->buffer, st->indices, {}, std::nullopt);
        return;
      }
      case StmtKind::IfThenElse: {
        auto* i = s->as<IfThenElseNode>();
        add_loads(i->cond);
        walk(i->then_case);
        if (i->else_case) walk(i->else_case);
        return;
      }
      case StmtKind::Allocate: walk(s->as<AllocateNode>()->body); return;
      case StmtKind::Seq: {
        const SeqNode* outer = sequence_;
        sequence_ = s->as<SeqNode>();
        for (const Stmt& x : sequence_->stmts) walk(x);
        sequence_ = outer;
        return;
      }
      case StmtKind::Barrier: return;
    }
  }

 private:
  const Buffer* shared(const std::string& name) const {
    const Buffer* b = kernel_.find_buffer(name);
    return b && b->scope == BufferScope::Shared ? b : nullptr;
  }

  void add_loads(const Expr& e) {
    visit_pre_order(e, [this](const Expr& x) {
      if (auto* load = x->as<LoadNode>()) add(load->tensor, load->indices, {}, std::nullopt);
      return true;
    });
  }

  // The values of the variables of the thread loops around the access on a lane of the block's
  // first warp; nullopt where the lane does not run them (beyond the block or a loop's extent).
  std::optional<Values> lane_values(int64_t lane) const {
    if (lane >= launch_.threads()) return std::nullopt;
    const std::array<int64_t, 3> index = {lane % launch_.block[0], lane / launch_.block[0] % launch_.block[1],
                                          lane / (launch_.block[0] * launch_.block[1])};
    Values values;
    for (const ForNode* f : loops_) {
      if (f->for_kind != ForKind::ThreadBinding || f->binding == IterAnnotation::VThread) continue;
      const int axis = thread_axis(f->binding);
      if (axis < 0) continue;
      if (index[axis] >= f->extent) return std::nullopt;
      values[f->var.get()] = index[axis];
    }
    return values;
  }

  // How many times a block runs what is inside the loops around it (threads run side by side).
  int64_t runs_per_block(const ForNode* vector_loop) const {
    int64_t runs = 1;
    for (const ForNode* f : loops_)
      if (f != vector_loop && (f->for_kind != ForKind::ThreadBinding || f->binding == IterAnnotation::VThread)) runs *= f->extent;
    return runs;
  }

  // The access of `buffer` at `indices`, with `position` giving some loop variables a value on
  // each lane (the others at 0, the thread loops at the lane's thread), made by `source(lane)`'s
  // evaluation; one access of the element per lane unless a vector copy moves several.
  void add(const std::string& name, const std::vector<Expr>& indices, const std::function<Values(int64_t lane)>& position,
           std::optional<int64_t> per_lane_bytes, int64_t calls = 1, const std::function<int64_t(int64_t)>& source = nullptr) {
    const Buffer* b = shared(name);
    if (!b || indices.empty()) return;
    const int64_t elem = dtype_bytes(b->dtype);
    BufferAccesses& into = out_[name];
    const ForNode* innermost = loops_.empty() ? nullptr : loops_.back();
    const ForNode* vector_loop = innermost && kernel_.find_vector_copy(innermost) ? innermost : nullptr;
    Access a;
    a.bytes = per_lane_bytes ? *per_lane_bytes : vector_loop ? vector_loop->extent * elem : elem;
    a.count = runs_per_block(vector_loop) * calls;
    for (int64_t lane = 0; lane < kWarpLanes; ++lane) {
      std::optional<Values> values = lane_values(source ? source(lane) : lane);
      if (!values) continue;
      if (position)
        for (const auto& [var, value] : position(lane)) (*values)[var] = value;
      std::vector<int64_t> at;
      for (const Expr& i : indices) {
        std::optional<int64_t> v = evaluate(i, *values);
        if (!v) return;  // an index that reads memory: no pattern to weigh
        at.push_back(*v);
      }
      a.lanes[lane] = std::move(at);
    }
    // A thread moving consecutive elements of a row in its innermost loop, unrolled or to be
    // vectorized, may be compiled to one vector access: the padding keeps the run aligned.
    int64_t run = a.bytes;
    const bool unrolled = innermost && (innermost->for_kind == ForKind::Unrolled || innermost->for_kind == ForKind::Vectorized ||
                                        innermost->for_kind == ForKind::VectorizeHint);
    if (unrolled && !vector_loop && !per_lane_bytes) {
      bool along_row = linear_coefficient(indices.back(), innermost->var.get()) == std::optional<int64_t>(1);
      for (size_t d = 0; d + 1 < indices.size(); ++d) along_row = along_row && !uses_var(indices[d], innermost->var.get());
      along_row = along_row || innermost->for_kind == ForKind::VectorizeHint;
      if (along_row) run = std::max(run, largest_power_of_two_within(std::min(kMaxAccessBytes, innermost->extent * elem)));
      into.implicit_vectors = into.implicit_vectors || run > a.bytes;
    }
    into.aligned_bytes = std::max(into.aligned_bytes, std::min(kMaxAccessBytes, largest_power_of_two_within(run)));
    if (!per_lane_bytes) a.sequence = sequence_;
    into.accesses.push_back(std::move(a));
  }

  // The loads of a warp row's call (ansor_rt::mma_f16_f32 and the like): lane (g, t) = (lane / 4,
  // lane % 4) loads for each 32-bit register the elements at k = r t .. r t + r - 1 (r elements
  // per register) of an lhs row of its own nest, and of an rhs column of the nest of lane g / 2,
  // column c = g % 2. The other registers are the same pattern a row, a column or 8 k further.
  void add_fragment_loads(const ForNode& f, const TensorCall& call) {
    std::vector<const VarNode*> nest;
    const StmtNode* body = &f;
    while (auto* loop = body->as<ForNode>()) {
      nest.push_back(loop->var.get());
      body = loop->body.get();
    }
    auto* store = body->as<StoreNode>();
    if (!store) return;
    const TensorIntrinsic& row = *call.intrinsic;
    const VarNode* k = nest.front();
    const VarNode* c = nest.back();
    visit_pre_order(store->value, [&](const Expr& x) {
      auto* load = x->as<LoadNode>();
      if (!load) return true;
      const bool lhs = load->tensor == call.lhs.buffer;
      if (!lhs && load->tensor != call.rhs.buffer) return true;
      const Buffer* b = shared(load->tensor);
      if (!b) return false;
      if (lhs && call.shape.lhs_matrices) {
        // ldmatrix.x4, a tile at a time: lane L reads the 16 bytes of row L % 8 of matrix L / 8,
        // rows h = (L / 8) % 2 of lane group L % 8 at k = 8 (L / 16), a quarter of the warp per
        // pass.
        const VarNode* h = nest[row.warp_m_tiles > 1 ? 2 : 1];
        auto position = [&](int64_t lane) { return Values{{k, 8 * (lane / 16)}, {h, lane / 8 % 2}}; };
        add(load->tensor, load->indices, position, kMatrixRowBytes, row.warp_m_tiles, [](int64_t lane) { return 4 * (lane % 8); });
        return false;
      }
      const int64_t per_register = std::max<int64_t>(1, kBankBytes / dtype_bytes(b->dtype));
      const bool words = lhs ? call.shape.lhs_word_pairs : call.shape.rhs_word_pairs;
      const int64_t registers = lhs ? 4 * row.warp_m_tiles : 2 * row.warp_n_tiles;
      for (int64_t element = 0; element < (words ? 1 : per_register); ++element) {
        auto position = [&](int64_t lane) {
          Values v{{k, per_register * (lane % 4) + element}};
          if (!lhs) v[c] = lane / 4 % 2;
          return v;
        };
        auto source = [lhs](int64_t lane) { return lhs ? lane : lane / 8; };
        add(load->tensor, load->indices, position, words ? kBankBytes : dtype_bytes(b->dtype), registers, source);
      }
      return false;
    });
  }

  const LoweredKernel& kernel_;
  const GpuLaunch& launch_;
  std::map<std::string, BufferAccesses>& out_;
  std::vector<const ForNode*> loops_;
  const SeqNode* sequence_ = nullptr;
};

// The alignment that runs of consecutive elements of a row, each moved by its own statement of
// one sequence (an unrolled loop written out), need to be compiled to vector accesses
// (kBankBytes where there are none).
int64_t aligned_bytes_of_runs(const BufferAccesses& accesses, int64_t elem) {
  std::map<const SeqNode*, std::set<std::vector<int64_t>>> firsts;
  for (const Access& a : accesses.accesses)
    if (a.sequence && a.lanes[0]) firsts[a.sequence].insert(*a.lanes[0]);
  int64_t aligned = kBankBytes;
  for (const auto& [sequence, elements] : firsts)
    for (const std::vector<int64_t>& first : elements) {
      std::vector<int64_t> next = first;
      --next.back();
      if (elements.count(next)) continue;  // not the first of its run
      int64_t length = 1;
      for (next = first, ++next.back(); elements.count(next); ++next.back()) ++length;
      aligned = std::max(aligned, largest_power_of_two_within(std::min(kMaxAccessBytes, length * elem)));
    }
  return aligned;
}

std::map<std::string, BufferAccesses> collect_accesses(const LoweredKernel& kernel) {
  std::map<std::string, BufferAccesses> accesses;
  for (const GpuLaunch& launch : kernel.launches) AccessCollector(kernel, launch, accesses).walk(launch.body);
  for (auto& [name, buffer] : accesses) {
    const int64_t elem = dtype_bytes(kernel.find_buffer(name)->dtype);
    const int64_t runs = aligned_bytes_of_runs(buffer, elem);
    buffer.aligned_bytes = std::max(buffer.aligned_bytes, runs);
    buffer.implicit_vectors = buffer.implicit_vectors || runs > std::max(elem, kBankBytes);
  }
  return accesses;
}

// A shared buffer's layout: its strides and the rotation of its rows.
struct Layout {
  std::vector<int64_t> strides;
  RowRotation rotation;
};

int64_t passes(const Access& a, const Layout& layout, int64_t elem) {
  // Wider accesses are served a part of the warp at a time: 128 bytes per pass at most.
  const int64_t lanes_per_phase = std::max<int64_t>(1, std::min(kWarpLanes, kBankRowBytes / std::max(a.bytes, kBankBytes)));
  int64_t total = 0;
  for (int64_t first = 0; first < kWarpLanes; first += lanes_per_phase) {
    std::array<std::set<int64_t>, kBanks> words;
    for (int64_t lane = first; lane < first + lanes_per_phase; ++lane) {
      if (!a.lanes[lane]) continue;
      int64_t offset = 0;
      for (size_t d = 0; d < layout.strides.size(); ++d) offset += (*a.lanes[lane])[d] * layout.strides[d];
      const int64_t byte = layout.rotation.rotated_offset(offset) * elem;
      for (int64_t w = ansor_rt::floordiv(byte, kBankBytes); w <= ansor_rt::floordiv(byte + a.bytes - 1, kBankBytes); ++w)
        words[ansor_rt::floormod(w, kBanks)].insert(w);
    }
    size_t most = 0;
    for (const std::set<int64_t>& bank : words) most = std::max(most, bank.size());
    total += static_cast<int64_t>(most);
  }
  return total * a.count;
}

int64_t passes(const BufferAccesses& accesses, const Layout& layout, int64_t elem) {
  int64_t total = 0;
  for (const Access& a : accesses.accesses) total += passes(a, layout, elem);
  return total;
}

// Row-major strides with each row `padding` elements longer.
std::vector<int64_t> padded_strides(const std::vector<int64_t>& shape, int64_t padding) {
  std::vector<int64_t> strides = row_major_strides(shape);
  const size_t rows = shape.size() - 2;
  strides[rows] += padding;
  for (size_t d = rows; d-- > 0;) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

// The layouts a buffer may take, its own first: rows padded by whole aligned units up to a bank
// row, and, where its rows are a power of two (at least two) of 16-byte chunks and no thread
// relies on the compiler's vectors along them, rows rotated by one chunk every 1 to 16 rows (all
// powers of two, so that finding an element takes shifts and masks, not divisions).
std::vector<Layout> candidate_layouts(const Buffer& b, const BufferAccesses& accesses) {
  const int64_t elem = dtype_bytes(b.dtype);
  std::vector<Layout> layouts = {{b.strides, {}}};
  const int64_t unit = std::max<int64_t>(1, accesses.aligned_bytes / elem);
  for (int64_t padding = unit; padding * elem < kBankRowBytes; padding += unit) layouts.push_back({padded_strides(b.shape, padding), {}});
  const int64_t row = b.shape.back(), chunk = kMaxAccessBytes / elem;
  if (accesses.implicit_vectors || chunk < 1 || row % chunk != 0 || row / chunk < 2 || !std::has_single_bit(static_cast<uint64_t>(row / chunk)))
    return layouts;
  for (int64_t rows_per_step : {1, 2, 4, 8, 16}) layouts.push_back({b.strides, {row, chunk, rows_per_step}});
  return layouts;
}

}  // namespace

bool choose_shared_layouts(LoweredKernel& kernel, const GpuLimits& limits) {
  const std::map<std::string, BufferAccesses> accesses = collect_accesses(kernel);
  std::set<std::string> changed;
  for (Buffer& b : kernel.buffers) {
    auto it = accesses.find(b.name);
    if (b.scope != BufferScope::Shared || b.shape.size() < 2 || b.strides != row_major_strides(b.shape) || it == accesses.end()) continue;
    const int64_t elem = dtype_bytes(b.dtype);
    const std::vector<Layout> layouts = candidate_layouts(b, it->second);
    size_t best = 0;
    int64_t fewest = passes(it->second, layouts[0], elem);
    for (size_t l = 1; l < layouts.size(); ++l)
      if (const int64_t p = passes(it->second, layouts[l], elem); p < fewest) fewest = p, best = l;
    if (best == 0) continue;
    b.strides = layouts[best].strides;
    b.rotation = layouts[best].rotation;
    changed.insert(b.name);
  }
  if (changed.empty()) return false;
  // A launch that padding takes beyond the target's shared memory keeps its buffers as they were.
  for (const GpuLaunch& launch : gpu_launches(kernel)) {
    if (launch.shared_bytes + launch.thread_reductions * kThreadReductionSharedBytes <= limits.max_shared_bytes_per_block) continue;
    for (const SharedPlacement& p : launch.shared)
      if (changed.erase(p.buffer)) {
        Buffer& b = *std::find_if(kernel.buffers.begin(), kernel.buffers.end(), [&](const Buffer& x) { return x.name == p.buffer; });
        b.strides = row_major_strides(b.shape);
        b.rotation = {};
      }
  }
  return !changed.empty();
}

int64_t shared_bank_passes(const LoweredKernel& kernel, const std::string& buffer) {
  const std::map<std::string, BufferAccesses> accesses = collect_accesses(kernel);
  const Buffer* b = kernel.find_buffer(buffer);
  auto it = accesses.find(buffer);
  return b && it != accesses.end() ? passes(it->second, Layout{b->strides, b->rotation}, dtype_bytes(b->dtype)) : 0;
}

}  // namespace ansor
