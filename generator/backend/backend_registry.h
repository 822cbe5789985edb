// The backends, one per kind of target, found by the kind or by a target as the CLI and CMake
// name it. A new kind of target registers its backend here (backend_registry.cpp).
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"

namespace ansor {

// Every registered backend, in the order of Target::Kind.
const std::vector<const Backend*>& backends();

// The backend of a kind of target.
const Backend& backend_for(Target::Kind kind);

// The backend of a target named as the CLI and CMake name it ("host", "x86-64-v3", "cuda",
// "cuda:sm_80", a target string). Throws std::invalid_argument naming what is wrong with a
// malformed one.
const Backend& backend_named(const std::string& target);

// How the sampler sees a target (its backend's SamplerContext).
SamplerContext sampler_context_for(const Target& target);

}  // namespace ansor
