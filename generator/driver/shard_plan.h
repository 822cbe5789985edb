// Shards of a tuning run: a deterministic split of a kernels.def's kernels among N processes,
// possibly on N machines, each tuning its part into a cache of its own (merged afterwards,
// records/record_pool.h). The split balances the expected cost of tuning, FLOPs × weight ×
// trials per kernel, so that the shards finish together; every process computes the same split
// from the same file and budget, without talking to the others.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/program.h"

namespace ansor {

// Shard `index` (0-based) of `count`, and where that came from (the option, or which
// environment variables).
struct ShardSpec {
  int index = 0, count = 1;
  std::string source;
};

// "I/N" with 0 <= I < N. Throws std::invalid_argument saying what is wrong.
ShardSpec parse_shard(std::string_view text, std::string source = "--shard");

// The shard a job engine gives the process through its environment (`getenv`), when it gives
// one: ANSOR_SHARD=I/N; a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with the count in
// ANSOR_SHARD_COUNT; a Slurm job array's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (its
// index counted from SLURM_ARRAY_TASK_MIN). Throws std::invalid_argument for values that do
// not make a shard, naming the variables.
std::optional<ShardSpec> shard_from_environment(const std::function<const char*(const char*)>& getenv);

// A kernel's weight for the file's networks: the sum of its counts in them, else its `weight`.
double kernel_weight(const Program& program, const Kernel& kernel);

// Each kernel's trials (the file's order): `each` when given, else its `trials` attribute, else
// 64, as `ansor-gen tune` gives them.
std::vector<int> kernel_trials(const Program& program, std::optional<int> each);

// Each kernel's part of a budget of `total` trials (the file's order): in proportion to
// `per_kernel` (each kernel's own trials), the remainders going to the largest fractions
// (earlier kernels first on ties), so that the parts add up to `total`; evenly when no kernel
// asks for trials.
std::vector<int> apportion_trials(const std::vector<int>& per_kernel, int total);

struct ShardPlan {
  std::vector<int> shard_of;        // per kernel of the program
  std::vector<double> cost;         // per kernel: FLOPs × weight × trials
  std::vector<double> shard_cost;   // per shard
  std::vector<int> shard_trials;    // per shard

  // The largest shard's cost over the mean shard cost (1: perfectly even).
  double imbalance() const;
};

// Splits the program's kernels, with their trials, into `count` shards: the costliest kernel
// first, each to the shard of least cost so far (the lower index on ties).
ShardPlan plan_shards(const Program& program, const std::vector<int>& trials, int count);

// The program restricted to the kernels of one shard (its networks kept: they weight the
// kernels that remain).
Program shard_program(const Program& program, const ShardPlan& plan, int shard);

}  // namespace ansor
