// How well a cost model ranks programs, the only thing the search asks of it: the order of
// programs within a workload, not the scores themselves.
#pragma once

#include <span>
#include <string>

namespace ansor {

// The fraction of pairs of programs of the same workload, with different true throughputs, that
// the predicted scores order the same way (a tie in prediction counts half). 0.5 is chance;
// NaN when there is no such pair. The three spans are parallel, one element per program.
double pairwise_accuracy(std::span<const std::string> workloads, std::span<const double> throughputs,
                         std::span<const double> predicted);

// Of the k programs with the highest true throughput, the fraction that are among the k with
// the highest predicted scores (programs of one workload; k is clamped to their number; ties
// are broken by position). NaN when there is no program or k < 1.
double recall_at_k(std::span<const double> throughputs, std::span<const double> predicted, int k);

// The best true throughput among the k programs with the highest predicted scores, over the
// best true throughput of all (programs of one workload): what measuring the model's top k
// would find, 1 when it finds the best. Unlike recall it does not count as a miss a program
// that is as fast as the best within the measurements' noise. NaN when there is no program or
// k < 1.
double top_k_quality(std::span<const double> throughputs, std::span<const double> predicted, int k);

}  // namespace ansor
