// Stable hashes through xxHash.
#include "support/stable_hash.h"

#include <xxhash.h>

namespace ansor {

uint64_t stable_hash64(std::string_view text, uint64_t seed) { return XXH64(text.data(), text.size(), seed); }

}  // namespace ansor
