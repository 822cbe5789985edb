#include "streaming_copy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ansor::bench {

double StreamingCopy::best_gbs() const { return bytes() / std::min({ours, libc, loop}) / 1e9; }

int64_t copy_floats(double bytes) { return (static_cast<int64_t>(bytes / 8) + 15) / 16 * 16; }

void StreamingCopies::build(Measurer& measurer, const TuningCache& cache, const TuneOptions& options, const std::string& work_dir) {
  for (auto& [n, copy] : copies_) {
    copy.n = n;
    std::string name = fmt::format("copy_{}", n);
    Kernel kernel = load_kernel(fmt::format("kernel {} {{\n X = input f32[{}]\n Y[i:{}] = X[i]\n}}", name, n, n), name);
    copy.kernel = std::make_unique<LoadedKernel>(name, tune_to_budget(kernel, measurer, cache, options), work_dir);
  }
}

void StreamingCopies::time() {
  for (auto& entry : copies_) {
    // A named reference, not a structured binding: clang 14 cannot capture a binding in a lambda.
    StreamingCopy& c = entry.second;
    const int64_t n = entry.first;
    // Aligned as the operators' arguments are (KernelArguments), so that every copy streams
    // the same way theirs can.
    const std::vector<float> values = random_floats(n, 7);
    AlignedVector<float> x(values.begin(), values.end()), y(n);
    void* args[] = {x.data(), y.data()};
    c.ours = median_seconds([&] { c.kernel->info().call(args); });
    c.libc = median_seconds([&] { std::memcpy(y.data(), x.data(), x.size() * sizeof(float)); });
    struct Slices {
      const float* x;
      float* y;
      int64_t n, parts;
    } slices{x.data(), y.data(), n, ansor_get_num_threads()};
    ansor_task_fn body = [](int64_t begin, int64_t end, void* context) {
      auto* s = static_cast<Slices*>(context);
      int64_t first = s->n * begin / s->parts, last = s->n * end / s->parts;
      std::copy(s->x + first, s->x + last, s->y + first);
    };
    c.loop = median_seconds([&] { ansor_parallel_for(slices.parts, body, &slices); });
  }
}

std::string StreamingCopies::table() const {
  auto gbs = [](double bytes, double seconds) { return bytes / seconds / 1e9; };
  std::string out = fmt::format(
      "| working set MB | ansor copy ms | GB/s | memcpy ms | GB/s | copy loop, {} threads ms | GB/s | stream GB/s (best) |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      ansor_get_num_threads());
  for (const auto& [n, c] : copies_)
    out += fmt::format("| {:.2f} | {:.4f} | {:.1f} | {:.4f} | {:.1f} | {:.4f} | {:.1f} | {:.1f} |\n", c.bytes() / 1e6, c.ours * 1e3,
                       gbs(c.bytes(), c.ours), c.libc * 1e3, gbs(c.bytes(), c.libc), c.loop * 1e3, gbs(c.bytes(), c.loop),
                       c.best_gbs());
  return out;
}

}  // namespace ansor::bench
