// Stages and iterators: the loop structure of one operation inside a schedule State.
//
// A stage keeps every iterator it ever had (the operation's axes first, then its reduction
// axes, then those that splits and fuses created) and the relations between them, so that
// lowering can express the original axes through the loops. `leaves` lists the iterators that
// are loops, outermost first. Iterators are referred to by their index in `iters`, which never
// changes; steps refer to loops by their position in `leaves`, as the search sees them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dag/operation.h"

namespace ansor {

enum class IterKind : uint8_t { Spatial, Reduce, Mixed };

enum class IterAnnotation : uint8_t {
#define ITER_ANNOTATION(Enum, name, is_thread_binding) Enum,
#include "schedule/annotation.def"
};

std::string_view annotation_name(IterAnnotation a);
bool is_thread_binding(IterAnnotation a);
bool is_block_index(IterAnnotation a);
// 0, 1, 2 for threadIdx.x, .y, .z; -1 for any other annotation.
int thread_axis(IterAnnotation a);
bool parse_annotation(std::string_view name, IterAnnotation& out);
std::string_view iter_kind_name(IterKind k);

enum class PragmaKind : uint8_t {
#define PRAGMA_KIND(Enum, name, max_value, unread_output_only) Enum,
#include "schedule/pragma_kind.def"
};

std::string_view pragma_name(PragmaKind k);
int64_t pragma_max_value(PragmaKind k);
bool pragma_needs_unread_output(PragmaKind k);
bool parse_pragma(std::string_view name, PragmaKind& out);

struct Iterator {
  std::string name;
  int64_t extent = 1;  // the extent the loop has where the stage is computed now
  IterKind kind = IterKind::Spatial;
  IterAnnotation annotation = IterAnnotation::None;
};

// Split: inputs = {parent}, outputs = {outer, inner_1, ..., inner_k}, factors = the lengths of
// inner_1..inner_k. It is a sequence of binary splits from the innermost: inner_k takes
// min(factor, extent), the rest ceil(extent / factor). A ragged split (factors not dividing the
// extent) is allowed; lowering guards the excess iterations.
// Fuse: inputs = the fused loops, outermost first; outputs = {fused}.
struct IterRelation {
  enum class Kind : uint8_t { Split, Fuse };
  Kind kind = Kind::Split;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<int64_t> factors;
};

enum class ComputeLocation : uint8_t { Root, Inlined, At };

// Where a stage's buffer lives: global (workspace or kernel argument), local (registers,
// per thread), shared (GPU shared memory, per block). Cache stages choose it.
enum class MemoryScope : uint8_t { Global, Local, Shared };

std::string_view memory_scope_name(MemoryScope s);
bool parse_memory_scope(std::string_view name, MemoryScope& out);

struct Stage {
  OpPtr op;
  std::vector<Iterator> iters;
  int num_roots = 0;  // op axes, then reduction axes
  std::vector<IterRelation> relations;
  std::vector<int> leaves;

  ComputeLocation location = ComputeLocation::Root;
  int attach_stage = -1;  // with location At: the stage, and the iterator (index into its iters)
  int attach_iter = -1;

  MemoryScope scope = MemoryScope::Global;
  bool layout_rewrite = false;   // a const input stored in its consumer's loop order
  // The pragmas that are on (pragma_kind.def), with their values; the others are 0 (off).
  std::map<PragmaKind, int> pragmas;
  // storage_align: pad dimension `align_dim` of the stage's buffer so that its stride is
  // `align_factor * k + align_offset` (avoids bank conflicts in GPU shared memory).
  int align_dim = -1;
  int64_t align_factor = 0, align_offset = 0;

  bool is_placeholder() const { return op->is_placeholder(); }
  int num_spatial_roots() const { return static_cast<int>(op->axes.size()); }
  const Iterator& leaf(int position) const { return iters[leaves[position]]; }
  // Position of an iterator in `leaves`, -1 when it is not a loop.
  int leaf_position(int iter) const;
  // The pragma's value, 0 when it is off.
  int pragma(PragmaKind k) const;
  // Sets the pragma's value; 0 turns it off.
  void set_pragma(PragmaKind k, int value);
};

// A stage with the operation's axes (and reduction axes) as its loops, computed at the root.
Stage make_initial_stage(const OpPtr& op);

}  // namespace ansor
