// A ComputeDAG rebuilt from its canonical text (ComputeDAG::canonical_text()), the inverse of
// printing it: records carry that text, so a process can rebuild the DAG of a workload it has
// no kernels.def for (another kernel, an earlier build) and replay the record's steps on it, as
// the cost model's training on every record of the cache does.
//
// The text holds no dtype for literals: a literal takes the type its context requires (the other
// operand of an operator, the operation's dtype), and where nothing does, integers are i64 and
// floats f64, as kernels.def keeps literals it never had to type. That is exact for every kernel
// of the repository and every built-in, but not for float literals that kernels.def did type
// with no operand beside them: `f32(1.5) < 2.5` (both f32) and `i32(f16(2.5))` read back with
// f64 literals. Integer literals alone are always folded, so they are exact.
#pragma once

#include <string>
#include <string_view>

#include "dag/compute_dag.h"

namespace ansor {

// Parses canonical text: operations are named T0, T1, ... in order, index variables i0, i1, ...
// and r0, r1, ... as in the text. The result's canonical text is `text` itself and its workload
// key the hash of `text`. Throws CompileError naming source_name, the line and the column for
// malformed text, and for well-formed text that is not in canonical form.
ComputeDAG parse_canonical_dag(std::string_view text, const std::string& source_name = "<canonical DAG>");

}  // namespace ansor
