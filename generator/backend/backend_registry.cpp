// The registry of backends.
#include "backend/backend_registry.h"

#include <fmt/format.h>

#include <stdexcept>

#include "backend/cpu_backend.h"
#include "backend/cuda_backend.h"

namespace ansor {

const std::vector<const Backend*>& backends() {
  static const CpuBackend cpu;
  static const CudaBackend cuda;
  static const std::vector<const Backend*> all = {&cpu, &cuda};
  return all;
}

const Backend& backend_for(Target::Kind kind) {
  for (const Backend* b : backends())
    if (b->kind() == kind) return *b;
  throw std::logic_error(fmt::format("no backend for target kind {}", static_cast<int>(kind)));
}

const Backend& backend_named(const std::string& target) {
  for (const Backend* b : backends())
    if (b->names(target)) return *b;
  // No backend claims it: the parser says what is wrong.
  return backend_for(parse_target(target).kind);
}

SamplerContext sampler_context_for(const Target& target) { return backend_for(target.kind).sampler_context(target); }

}  // namespace ansor
