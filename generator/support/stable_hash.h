// Hashes that are the same on every machine, standard library and build: for values that must
// not change between runs (per-kernel random seeds, names derived from text). std::hash may
// differ between standard libraries and is only for in-memory tables.
#pragma once

#include <cstdint>
#include <string_view>

namespace ansor {

// XXH64 of the bytes of `text`.
uint64_t stable_hash64(std::string_view text, uint64_t seed = 0);

}  // namespace ansor
