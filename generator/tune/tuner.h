// Tuning one kernel: propose schedules, measure them in batches, append every record to the
// cache as soon as it is measured (an interrupted run loses none of its finished records), and
// report progress after each batch.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "lang/program.h"
#include "measure/measurer.h"
#include "records/cache.h"

namespace ansor {

// Random: programs sampled from the sketches of the derivation rules, annotated at random.
enum class SearchPolicy { Random };

struct TuneOptions {
  int trials = 64;
  int batch_size = 16;
  uint64_t seed = 0;
  SearchPolicy policy = SearchPolicy::Random;
  std::vector<PlantedFault> faults;  // by trial index; tests only
};

struct TuneSummary {
  int measured = 0;
  int failed = 0;
  std::optional<Record> best;  // the fastest record of the kernel, old or new
};

TuneSummary tune_kernel(const Kernel& kernel, Measurer& measurer, const TuningCache& cache, const TuneOptions& options,
                        std::ostream& progress);

}  // namespace ansor
