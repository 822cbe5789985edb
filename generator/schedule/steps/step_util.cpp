// Step helpers: checked access to stages and loops, splitting, attachment bookkeeping, and
// the field checks of step records.
#include "schedule/steps/step_util.h"

#include <fmt/format.h>

namespace ansor::step_util {

Stage& loop_stage(State& state, int stage, const char* what) {
  const Stage& s = state.checked_stage(stage, what);
  if (s.is_placeholder()) throw StepError(fmt::format("{}: '{}' is an input and has no loops", what, s.op->name));
  if (s.location == ComputeLocation::Inlined) throw StepError(fmt::format("{}: '{}' is inlined", what, s.op->name));
  return state.mutable_stage(stage);
}

int leaf_node(const Stage& stage, int iter, const char* what) {
  if (iter < 0 || iter >= static_cast<int>(stage.leaves.size()))
    throw StepError(fmt::format("{}: '{}' has no loop {} (it has {})", what, stage.op->name, iter, stage.leaves.size()));
  return stage.leaves[iter];
}

void split_loop(State& state, int stage_id, int iter, const std::vector<int64_t>& lengths, const char* what) {
  Stage& stage = loop_stage(state, stage_id, what);
  int node = leaf_node(stage, iter, what);
  if (lengths.empty()) throw StepError(fmt::format("{}: no lengths", what));
  for (int64_t l : lengths)
    if (l < 0) throw StepError(fmt::format("{}: negative length {}", what, l));
  const Iterator parent = stage.iters[node];
  if (parent.annotation != IterAnnotation::None)
    throw StepError(fmt::format("{}: loop '{}' is annotated {}", what, parent.name, annotation_name(parent.annotation)));
  IterRelation rel;
  rel.kind = IterRelation::Kind::Split;
  rel.inputs = {node};
  rel.factors = lengths;
  // Extents as a sequence of binary splits from the innermost; unknown (-1) while a length is
  // undecided or the parent's extent is unknown.
  std::vector<int64_t> extents(lengths.size() + 1, -1);
  int64_t cur = parent.extent;
  for (size_t i = lengths.size(); i-- > 0;) {
    if (cur < 0 || lengths[i] == 0) {
      cur = -1;
      continue;
    }
    extents[i + 1] = std::min(lengths[i], cur);
    cur = (cur + lengths[i] - 1) / lengths[i];
  }
  extents[0] = cur;
  std::vector<int> children;
  for (size_t i = 0; i <= lengths.size(); ++i) {
    children.push_back(static_cast<int>(stage.iters.size()));
    stage.iters.push_back({fmt::format("{}.{}", parent.name, i), extents[i], parent.kind, IterAnnotation::None});
  }
  rel.outputs = children;
  stage.relations.push_back(rel);
  stage.leaves.erase(stage.leaves.begin() + iter);
  stage.leaves.insert(stage.leaves.begin() + iter, children.begin(), children.end());
  // What was computed once per iteration of the split loop is now computed once per iteration
  // of its innermost part.
  move_attachments(state, stage_id, {node}, children.back());
}

void move_attachments(State& state, int stage, const std::vector<int>& from, int to) {
  for (int s = 0; s < state.num_stages(); ++s) {
    Stage& st = state.mutable_stage(s);
    if (st.location != ComputeLocation::At || st.attach_stage != stage) continue;
    if (std::find(from.begin(), from.end(), st.attach_iter) != from.end()) st.attach_iter = to;
  }
}

void invalidate_extents(Stage& stage) {
  for (int i = 0; i < static_cast<int>(stage.iters.size()); ++i)
    if (i >= stage.num_roots || i < stage.num_spatial_roots()) stage.iters[i].extent = -1;
}

std::string stage_name(const State& state, int stage) {
  if (stage < 0 || stage >= state.num_stages()) return fmt::format("stage{}", stage);
  return state.stage(stage).op->name;
}

std::string loop_name(const State& state, int stage, int iter) {
  if (stage < 0 || stage >= state.num_stages()) return fmt::format("stage{}.loop{}", stage, iter);
  const Stage& s = state.stage(stage);
  if (iter < 0 || iter >= static_cast<int>(s.leaves.size())) return fmt::format("{}.loop{}", s.op->name, iter);
  return s.leaf(iter).name;
}

nlohmann::json header(StepKind kind) { return nlohmann::json{{"kind", std::string(step_kind_name(kind))}}; }

void expect_keys(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = it.key() == "kind";
    for (const char* k : keys) known = known || it.key() == k;
    if (!known) throw StepError(fmt::format("unknown field '{}' in a {} step", it.key(), j.value("kind", std::string("?"))));
  }
  for (const char* k : keys)
    if (!j.contains(k)) throw StepError(fmt::format("a {} step needs the field '{}'", j.value("kind", std::string("?")), k));
}

int64_t int64_field(const nlohmann::json& j, const char* key, int64_t min, int64_t max) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer()) throw StepError(fmt::format("field '{}' must be an integer", key));
  int64_t x = v.get<int64_t>();
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) x = INT64_MAX;
  if (x < min || x > max) throw StepError(fmt::format("field '{}' = {} is out of range [{}, {}]", key, x, min, max));
  return x;
}

int int_field(const nlohmann::json& j, const char* key, int64_t min, int64_t max) {
  return static_cast<int>(int64_field(j, key, min, max));
}

std::vector<int64_t> int_list_field(const nlohmann::json& j, const char* key, int64_t min, int64_t max, size_t max_size) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_array() || v.size() > max_size) throw StepError(fmt::format("field '{}' must be a list of at most {} integers", key, max_size));
  std::vector<int64_t> out;
  for (const auto& x : v) {
    nlohmann::json wrapper{{key, x}};
    out.push_back(int64_field(wrapper, key, min, max));
  }
  return out;
}

std::string string_field(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_string()) throw StepError(fmt::format("field '{}' must be a string", key));
  return v.get<std::string>();
}

int stage_field(const nlohmann::json& j) { return int_field(j, "stage", 0, kMaxIndex); }

int iter_field(const nlohmann::json& j) { return int_field(j, "iter", 0, kMaxIndex); }

std::vector<int> index_list_field(const nlohmann::json& j, const char* key) {
  std::vector<int> out;
  for (int64_t v : int_list_field(j, key, 0, kMaxIndex, kMaxList)) out.push_back(static_cast<int>(v));
  return out;
}

MemoryScope scope_field(const nlohmann::json& j) {
  MemoryScope scope;
  std::string name = string_field(j, "scope");
  if (!parse_memory_scope(name, scope)) throw StepError(fmt::format("unknown memory scope '{}'", name));
  return scope;
}

}  // namespace ansor::step_util
