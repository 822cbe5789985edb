// Stage construction and iterator annotation names.
#include "schedule/stage.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace ansor {

namespace {
struct AnnotationInfo {
  std::string_view name;
  bool thread;
};
constexpr AnnotationInfo kAnnotations[] = {
#define ITER_ANNOTATION(Enum, name, is_thread_binding) {name, is_thread_binding},
#include "schedule/annotation.def"
};

struct PragmaInfo {
  std::string_view name;
  int64_t max_value;
  bool unread_output_only;
};
constexpr PragmaInfo kPragmas[] = {
#define PRAGMA_KIND(Enum, name, max_value, unread_output_only) {name, max_value, unread_output_only},
#include "schedule/pragma_kind.def"
};
// Stages keep pragma values as int.
static_assert(std::all_of(std::begin(kPragmas), std::end(kPragmas), [](const PragmaInfo& p) { return p.max_value <= INT32_MAX; }));
}  // namespace

std::string_view annotation_name(IterAnnotation a) { return kAnnotations[static_cast<int>(a)].name; }
bool is_thread_binding(IterAnnotation a) { return kAnnotations[static_cast<int>(a)].thread; }

bool is_block_index(IterAnnotation a) {
  return a == IterAnnotation::BlockX || a == IterAnnotation::BlockY || a == IterAnnotation::BlockZ;
}

int thread_axis(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::ThreadX: return 0;
    case IterAnnotation::ThreadY: return 1;
    case IterAnnotation::ThreadZ: return 2;
    default: return -1;
  }
}

// The entry of a name table (AnnotationInfo, PragmaInfo) that has `name`, as its enumerator.
template <class Enum, class Info, size_t N>
bool parse_name(const Info (&table)[N], std::string_view name, Enum& out) {
  for (size_t i = 0; i < N; ++i) {
    if (table[i].name == name) {
      out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

bool parse_annotation(std::string_view name, IterAnnotation& out) { return parse_name(kAnnotations, name, out); }

std::string_view pragma_name(PragmaKind k) { return kPragmas[static_cast<int>(k)].name; }
int64_t pragma_max_value(PragmaKind k) { return kPragmas[static_cast<int>(k)].max_value; }
bool pragma_needs_unread_output(PragmaKind k) { return kPragmas[static_cast<int>(k)].unread_output_only; }

bool parse_pragma(std::string_view name, PragmaKind& out) { return parse_name(kPragmas, name, out); }

std::string_view iter_kind_name(IterKind k) {
  switch (k) {
    case IterKind::Spatial: return "spatial";
    case IterKind::Reduce: return "reduce";
    case IterKind::Mixed: return "mixed";
  }
  return "?";
}

std::string_view memory_scope_name(MemoryScope s) {
  switch (s) {
    case MemoryScope::Global: return "global";
    case MemoryScope::Local: return "local";
    case MemoryScope::Shared: return "shared";
  }
  return "?";
}

bool parse_memory_scope(std::string_view name, MemoryScope& out) {
  for (MemoryScope s : {MemoryScope::Global, MemoryScope::Local, MemoryScope::Shared}) {
    if (memory_scope_name(s) == name) {
      out = s;
      return true;
    }
  }
  return false;
}

int Stage::leaf_position(int iter) const {
  auto it = std::find(leaves.begin(), leaves.end(), iter);
  return it == leaves.end() ? -1 : static_cast<int>(it - leaves.begin());
}

int Stage::pragma(PragmaKind k) const {
  auto it = pragmas.find(k);
  return it == pragmas.end() ? 0 : it->second;
}

void Stage::set_pragma(PragmaKind k, int value) {
  if (value == 0)
    pragmas.erase(k);
  else
    pragmas[k] = value;
}

Stage make_initial_stage(const OpPtr& op) {
  Stage s;
  s.op = op;
  for (auto& ax : op->axes) s.iters.push_back({ax.var->name, ax.extent, IterKind::Spatial, IterAnnotation::None});
  if (const ReduceNode* r = op->reduction())
    for (auto& ax : r->axes) s.iters.push_back({ax.var->name, ax.extent, IterKind::Reduce, IterAnnotation::None});
  s.num_roots = static_cast<int>(s.iters.size());
  for (int i = 0; i < s.num_roots; ++i) s.leaves.push_back(i);
  return s;
}

}  // namespace ansor
