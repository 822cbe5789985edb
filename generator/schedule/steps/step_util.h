// Shared checks and transformations of the step implementations.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "schedule/state.h"
#include "schedule/step.h"

namespace ansor::step_util {

// The stage, which must be a computed (not inlined) stage; `what` names the step in errors.
Stage& loop_stage(State& state, int stage, const char* what);
// The node of loop position `iter` of the stage.
int leaf_node(const Stage& stage, int iter, const char* what);

// Splits loop `iter` (shared by split, follow_split and follow_fused_split).
void split_loop(State& state, int stage, int iter, const std::vector<int64_t>& lengths, const char* what);

// Stages attached at any of `from` (iterators of `stage`) move to iterator `to`.
void move_attachments(State& state, int stage, const std::vector<int>& from, int to);
// Marks the extents of the stage's iterators as unknown until bounds are inferred again.
void invalidate_extents(Stage& stage);

// "C" or "C.i.0" for describe().
std::string stage_name(const State& state, int stage);
std::string loop_name(const State& state, int stage, int iter);

// ---- JSON fields of records, checked for type and range ----
nlohmann::json header(StepKind kind);
void expect_keys(const nlohmann::json& j, std::initializer_list<const char*> keys);
int int_field(const nlohmann::json& j, const char* key, int64_t min, int64_t max);
int64_t int64_field(const nlohmann::json& j, const char* key, int64_t min, int64_t max);
std::vector<int64_t> int_list_field(const nlohmann::json& j, const char* key, int64_t min, int64_t max, size_t max_size);
std::string string_field(const nlohmann::json& j, const char* key);
// "stage" and "iter": a stage and a loop position.
int stage_field(const nlohmann::json& j);
int iter_field(const nlohmann::json& j);
// A list of stage, loop or step positions.
std::vector<int> index_list_field(const nlohmann::json& j, const char* key);
// "scope": a memory scope by name.
MemoryScope scope_field(const nlohmann::json& j);

// Limits that a record's numbers must respect.
inline constexpr int64_t kMaxIndex = 1 << 16;
inline constexpr int64_t kMaxLength = int64_t{1} << 40;
inline constexpr size_t kMaxList = 64;

}  // namespace ansor::step_util
