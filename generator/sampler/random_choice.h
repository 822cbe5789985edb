// Uniform choices among candidates, for the sampler's random decisions (annotation, tile sizes,
// mutation): one definition, so that every part draws alike from its generator.
#pragma once

#include <random>
#include <vector>

namespace ansor {

// An element of `xs` (not empty), each as likely.
template <class T>
const T& pick(const std::vector<T>& xs, std::mt19937_64& rng) {
  return xs[std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng)];
}

}  // namespace ansor
