// The feature table of feature.def: names, groups and scaling by index.
#include <fmt/format.h>

#include <stdexcept>

#include "features/features.h"

namespace ansor {

namespace {

enum class Scaling : uint8_t { Log, None };

struct FeatureInfo {
  std::string_view name;
  FeatureGroup group;
  Scaling scaling;
};

constexpr FeatureInfo kFeatures[] = {
#define FEATURE(Enum, name, group, scaling) {name, FeatureGroup::group, Scaling::scaling},
#include "features/feature.def"
};

const FeatureInfo& feature_info(int index) {
  if (index < 0 || index >= kNumFeatures) throw std::out_of_range(fmt::format("feature index {} is not in [0, {})", index, kNumFeatures));
  return kFeatures[index];
}

}  // namespace

std::string_view feature_name(int index) { return feature_info(index).name; }
FeatureGroup feature_group(int index) { return feature_info(index).group; }
bool feature_is_log_scaled(int index) { return feature_info(index).scaling == Scaling::Log; }

}  // namespace ansor
