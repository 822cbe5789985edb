// Throughput of the vector math functions (runtime/include/ansor/vector_math.h) in time-stamp
// counter cycles per 16-lane vector, on a buffer that stays in L1 so that memory does not
// hide the arithmetic. Compiled with the kernels' flags (-march=native, FMA contraction), as
// the functions run in generated kernels. The results go into docs/vector_math.md.
//
// Usage: bench_vector_math [--repeats N]   (N timed passes per function; the median is printed)
#include "ansor/kernel_support.h"

#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kLanes = 16;
constexpr int kElements = 2048;  // 8 KiB in, 8 KiB out: both in L1
constexpr int kPassesPerTiming = 200;

using fvec = ansor_rt::vec<float, kLanes>;

// Inputs over the range where the functions are used (activations), every branch-free path
// taken. The "tail" rows take the far negative range where results underflow: the branch-free
// code is the same, but a subnormal result or operand costs x86 cores a microcode assist.
std::vector<float> inputs(float lo, float hi) {
  std::vector<float> in(kElements);
  for (int i = 0; i < kElements; ++i) in[i] = lo + (hi - lo) * static_cast<float>((i * 7919) % kElements) / kElements;
  return in;
}

template <class F>
double cycles_per_vector(F f, float lo, float hi, int repeats) {
  const std::vector<float> in = inputs(lo, hi);
  std::vector<float> out(kElements);
  std::vector<double> timings;
  for (int r = 0; r < repeats; ++r) {
    const uint64_t start = __rdtsc();
    for (int pass = 0; pass < kPassesPerTiming; ++pass) {
      for (int i = 0; i < kElements; i += kLanes)
        ansor_rt::vstore<float, kLanes>(&out[i], f(ansor_rt::vload<float, kLanes>(&in[i])));
      // Keeps the passes from being merged: each reads what the compiler must assume changed.
      asm volatile("" : : "r"(out.data()) : "memory");
    }
    timings.push_back(static_cast<double>(__rdtsc() - start) / (kPassesPerTiming * (kElements / kLanes)));
  }
  std::nth_element(timings.begin(), timings.begin() + repeats / 2, timings.end());
  return timings[repeats / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 31;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      repeats = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "bench_vector_math: unknown or malformed argument '%s' (usage: --repeats N)\n", argv[i]);
      return 2;
    }
  }
  std::printf("function  TSC cycles per %d-lane vector (median of %d)\n", kLanes, repeats);
  auto report = [&](const char* name, auto f, float lo, float hi) {
    std::printf("%-9s  %6.1f\n", name, cycles_per_vector(f, lo, hi, repeats));
  };
  report("exp", [](fvec x) { return ansor_rt::vexp<kLanes>(x); }, -20.0f, 20.0f);
  report("log", [](fvec x) { return ansor_rt::vlog<kLanes>(x); }, 0.01f, 100.0f);
  report("tanh", [](fvec x) { return ansor_rt::vtanh<kLanes>(x); }, -8.0f, 8.0f);
  report("sigmoid", [](fvec x) { return ansor_rt::vsigmoid<kLanes>(x); }, -8.0f, 8.0f);
  report("erf", [](fvec x) { return ansor_rt::verf<kLanes>(x); }, -4.0f, 4.0f);
  report("gelu", [](fvec x) { return ansor_rt::vgelu<kLanes>(x); }, -8.0f, 8.0f);
  report("exp tail", [](fvec x) { return ansor_rt::vexp<kLanes>(x); }, -104.0f, -80.0f);
  report("sig tail", [](fvec x) { return ansor_rt::vsigmoid<kLanes>(x); }, -104.0f, -80.0f);
  report("gelu tail", [](fvec x) { return ansor_rt::vgelu<kLanes>(x); }, -16.0f, -12.0f);
  return 0;
}
