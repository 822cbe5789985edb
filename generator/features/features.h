// The cost model's program features (Ansor, OSDI'20, §5.2): for every innermost buffer store of
// a lowered program, one row of 168 numbers describing its computation, the buffers it touches,
// its arithmetic intensity, the allocation of its buffer and the loops around it. The cost model
// scores a row each and a program by the sum of its rows. docs/features.md defines every feature.
//
// Decisions (docs/features.md gives the reasons):
// - Rows describe the program as lowering leaves it, but with unrolled loops kept as loops
//   (LowerOptions::expand_unrolled_loops = false, as extract_features(State) lowers): a loop the
//   compiler gets written out would otherwise give one row per copy, hundreds per program. Such
//   a loop counts as an unroll annotation, which is what its copies are.
// - The packing programs of const inputs run once, outside the timed call: they have no rows;
//   the consumer's loads of the packed layout are what its rows describe.
// - Rows depend on the program alone (no pointer order, no hash order): equal programs have equal
//   rows, the same on every run.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "lower/lowered_kernel.h"
#include "schedule/state.h"

namespace ansor {

enum class Feature : int {
#define FEATURE(Enum, name, group, scaling) Enum,
#include "features/feature.def"
  Count
};

inline constexpr int kNumFeatures = 171;
static_assert(static_cast<int>(Feature::Count) == kNumFeatures, "feature.def lists the 171 features");
// Names this definition of the features: a saved cost model was trained on rows of one
// definition and is refused by another. Change it whenever a feature's meaning changes.
inline constexpr std::string_view kFeatureSetName = "ansor-features-171-v1";
// The buffers per store that have features (more are dropped, fewer leave zeros).
inline constexpr int kMaxBufferSlots = 5;
// Features per buffer slot.
inline constexpr int kBufferSlotFeatures = static_cast<int>(Feature::B1AccRead) - static_cast<int>(Feature::B0AccRead);
// Samples of the arithmetic intensity curve.
inline constexpr int kArithIntensitySamples = 10;

using FeatureRow = std::array<float, kNumFeatures>;

enum class FeatureGroup : uint8_t { Computation, BufferAccess, ArithmeticIntensity, Allocation, OuterScope, TensorIntrinsic };

// The name of feature `index` in feature.def ("float_mad", "B0.bytes", ...).
std::string_view feature_name(int index);
FeatureGroup feature_group(int index);
// Whether the row holds log2(1 + x) of the feature (else it is a 0/1 encoding).
bool feature_is_log_scaled(int index);

struct FeatureOptions {
  int cache_line_bytes = 64;
  // log2(1 + x) of every feature but the 0/1 encodings, as the cost model reads them; false
  // gives the raw values (tests, inspection).
  bool log_scale = true;
};

struct StoreFeatures {
  std::string buffer;  // the buffer the statement stores into
  FeatureRow values;
};

// One row per innermost buffer store of the kernel's loop program, in program order.
std::vector<StoreFeatures> extract_features(const LoweredKernel& kernel, const FeatureOptions& options = {});

// The rows of a State: lowered with unrolled loops kept as loops, then extract_features. Throws
// InvalidState as lowering does.
std::vector<StoreFeatures> extract_features(const State& state, const FeatureOptions& options = {});

// The loop program the rows of a State describe (lower_state with unrolled loops kept).
LoweredKernel lower_for_features(const State& state);

}  // namespace ansor
