// State construction, stage bookkeeping, step application and structural identity.
#include "schedule/state.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace ansor {

State::State(std::shared_ptr<const ComputeDAG> dag) : dag_(std::move(dag)) {
  for (const OpPtr& op : dag_->ops()) stages_.push_back(make_initial_stage(op));
}

int State::find_stage(const std::string& name) const {
  for (int i = 0; i < num_stages(); ++i)
    if (stages_[i].op->name == name) return i;
  return -1;
}

const Stage& State::checked_stage(int i, const char* what) const {
  if (i < 0 || i >= num_stages()) throw StepError(fmt::format("{}: there is no stage {}", what, i));
  return stages_[i];
}

bool State::is_kernel_output(int stage) const {
  const std::string& name = stages_[stage].op->name;
  for (int o : dag_->outputs())
    if (dag_->op(o).name == name) return true;
  return false;
}

bool State::has_attached(int stage) const {
  for (const Stage& st : stages_)
    if (st.location == ComputeLocation::At && st.attach_stage == stage) return true;
  return false;
}

std::vector<int> State::readers(int stage) const {
  std::vector<int> out;
  const std::string& name = stages_[stage].op->name;
  for (int s = stage + 1; s < num_stages(); ++s) {
    if (stages_[s].is_placeholder()) continue;
    std::vector<std::string> reads = read_tensors(*stages_[s].op);
    if (std::find(reads.begin(), reads.end(), name) != reads.end()) out.push_back(s);
  }
  return out;
}

std::vector<int> State::consumers(int stage) const {
  std::vector<int> out;
  for (int r : readers(stage)) {
    if (stages_[r].location == ComputeLocation::Inlined) {
      for (int c : consumers(r))
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    } else if (std::find(out.begin(), out.end(), r) == out.end()) {
      out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void State::insert_stage(int position, Stage stage) {
  for (Stage& s : stages_)
    if (s.attach_stage >= position) ++s.attach_stage;
  stages_.insert(stages_.begin() + position, std::move(stage));
}

namespace {

// The leaf position in `target` under which stage s is computed, or -1 when s is not inside it.
int position_inside(const State& state, int s, int target) {
  while (state.stage(s).location == ComputeLocation::At) {
    const Stage& st = state.stage(s);
    if (st.attach_stage == target) return state.stage(target).leaf_position(st.attach_iter);
    s = st.attach_stage;
  }
  return -1;
}

// Every stage computed inside a loop has all its consumers inside that loop too: steps that
// change who reads what (cache_read, compute_inline, ...) must not leave one outside.
void check_attachments(const State& state) {
  for (int s = 0; s < state.num_stages(); ++s) {
    const Stage& st = state.stage(s);
    if (st.location != ComputeLocation::At) continue;
    int target = st.attach_stage;
    int position = state.stage(target).leaf_position(st.attach_iter);
    if (state.stage(target).location == ComputeLocation::Inlined || position < 0)
      throw StepError(fmt::format("'{}' would be computed in a loop that does not exist", st.op->name));
    for (int c : state.consumers(s)) {
      if (c != target && position_inside(state, c, target) < position)
        throw StepError(fmt::format("'{}' would be read by '{}' outside the loop it is computed in", st.op->name, state.stage(c).op->name));
    }
  }
}

}  // namespace

int stage_position_inside(const State& state, int stage, int target) { return position_inside(state, stage, target); }

void State::apply(const StepPtr& step) {
  State next = *this;
  step->apply_to(next);
  check_attachments(next);
  next.steps_.push_back(step);
  *this = std::move(next);
}

bool State::try_apply(const StepPtr& step) {
  try {
    apply(step);
    return true;
  } catch (const StepError&) {
    return false;
  }
}

std::string State::signature() const {
  std::string s;
  for (const Stage& st : stages_) {
    s += st.op->name;
    switch (st.location) {
      case ComputeLocation::Root: s += " root"; break;
      case ComputeLocation::Inlined: s += " inline"; break;
      case ComputeLocation::At: s += fmt::format(" at {}:{}", stages_[st.attach_stage].op->name,
                                                  stages_[st.attach_stage].iters[st.attach_iter].name); break;
    }
    s += fmt::format(" {}", memory_scope_name(st.scope));
    for (const auto& [pragma, value] : st.pragmas) s += fmt::format(" {}={}", pragma_name(pragma), value);
    s += fmt::format(" align={}/{}/{} pack={} |", st.align_dim, st.align_factor, st.align_offset, st.layout_rewrite);
    for (const IterRelation& r : st.relations)
      s += fmt::format(" {}({};{};{})", r.kind == IterRelation::Kind::Split ? "S" : "F", fmt::join(r.inputs, ","),
                       fmt::join(r.outputs, ","), fmt::join(r.factors, ","));
    s += " |";
    for (int leaf : st.leaves) s += fmt::format(" {}:{}", st.iters[leaf].name, annotation_name(st.iters[leaf].annotation));
    s += "\n";
  }
  return s;
}

size_t State::hash() const { return std::hash<std::string>()(signature()); }

State replay(const std::shared_ptr<const ComputeDAG>& dag, const std::vector<StepPtr>& steps) {
  State state(dag);
  for (const StepPtr& step : steps) state.apply(step);
  return state;
}

std::string describe_steps(const State& state) {
  State replayed(state.dag_ptr());
  std::string out;
  for (const StepPtr& step : state.steps()) {
    out += step->describe(replayed) + "\n";
    replayed.apply(step);
  }
  return out;
}

}  // namespace ansor
