// The demo: runs every kernel of the project's kernels.def on random inputs, checks it against
// the naive reference program generated from the same file, and prints its time and GFLOP/s,
// both through the plain interface (which packs const inputs on every call) and, for kernels
// whose schedule packs const inputs, with them packed once beforehand, as tuning measures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ansor_demo_kernels.h"
#include "ansor_demo_reference.h"

namespace {

int64_t num_elements(const ansor_tensor_info& t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
}

std::string shape_text(const ansor_tensor_info& t) {
  std::string s = "[";
  for (int d = 0; d < t.rank; ++d) s += (d ? "," : "") + std::to_string(t.shape[d]);
  return s + "]";
}

// bfloat16 is the upper half of a float's bits.
float bf16_value(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}
uint16_t bf16_bits(float exact) {
  uint32_t word;
  std::memcpy(&word, &exact, sizeof word);
  return static_cast<uint16_t>(word >> 16);
}

// Element i of a buffer as a double (f32, f64, bf16 and the integer types).
double element(const std::vector<unsigned char>& buf, ansor_dtype t, int64_t i) {
  const void* p = buf.data() + i * ansor_dtype_size(t);
  switch (t) {
    case ANSOR_DTYPE_F32: return *static_cast<const float*>(p);
    case ANSOR_DTYPE_BF16: return bf16_value(*static_cast<const uint16_t*>(p));
    case ANSOR_DTYPE_F64: return *static_cast<const double*>(p);
    case ANSOR_DTYPE_I8: return *static_cast<const int8_t*>(p);
    case ANSOR_DTYPE_I16: return *static_cast<const int16_t*>(p);
    case ANSOR_DTYPE_I32: return *static_cast<const int32_t*>(p);
    case ANSOR_DTYPE_I64: return static_cast<double>(*static_cast<const int64_t*>(p));
    case ANSOR_DTYPE_U8:
    case ANSOR_DTYPE_BOOL: return *static_cast<const uint8_t*>(p);
    default: return std::nan("");
  }
}

void fill_random(std::vector<unsigned char>& buf, ansor_dtype t, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  int64_t n = static_cast<int64_t>(buf.size() / ansor_dtype_size(t));
  for (int64_t i = 0; i < n; ++i) {
    double v = dist(rng);
    void* p = buf.data() + i * ansor_dtype_size(t);
    switch (t) {
      case ANSOR_DTYPE_F32: *static_cast<float*>(p) = static_cast<float>(v); break;
      case ANSOR_DTYPE_F64: *static_cast<double*>(p) = v; break;
      case ANSOR_DTYPE_BF16: *static_cast<uint16_t*>(p) = bf16_bits(static_cast<float>(std::round(v * 64) / 64)); break;
      default: *static_cast<unsigned char*>(p) = static_cast<unsigned char>(rng() % 7); break;
    }
  }
}

// Outputs start as NaN (or a byte pattern) so that an element the kernel misses is caught.
void poison(std::vector<unsigned char>& buf, ansor_dtype t) {
  if (t == ANSOR_DTYPE_F32) {
    std::fill(reinterpret_cast<float*>(buf.data()), reinterpret_cast<float*>(buf.data() + buf.size()), std::nanf(""));
  } else if (t == ANSOR_DTYPE_F64) {
    std::fill(reinterpret_cast<double*>(buf.data()), reinterpret_cast<double*>(buf.data() + buf.size()), std::nan(""));
  } else {
    std::fill(buf.begin(), buf.end(), 0xAB);
  }
}

struct Buffers {
  std::vector<std::vector<unsigned char>> data;
  std::vector<void*> args;
};

Buffers make_buffers(const ansor_kernel_info& k, unsigned seed) {
  Buffers b;
  std::mt19937 rng(seed);
  for (int i = 0; i < k.num_args; ++i) {
    const ansor_tensor_info& t = k.args[i];
    b.data.emplace_back(static_cast<size_t>(num_elements(t)) * ansor_dtype_size(t.dtype));
    if (t.is_output) {
      poison(b.data.back(), t.dtype);
    } else {
      fill_random(b.data.back(), t.dtype, rng);
    }
  }
  for (auto& d : b.data) b.args.push_back(d.data());
  return b;
}

// Largest difference relative to the reference's magnitude; infinite when an element is NaN.
double relative_error(const ansor_kernel_info& k, const Buffers& got, const Buffers& want) {
  double worst = 0;
  for (int i = 0; i < k.num_args; ++i) {
    const ansor_tensor_info& t = k.args[i];
    if (!t.is_output) continue;
    double scale = 1;
    int64_t n = num_elements(t);
    for (int64_t e = 0; e < n; ++e) scale = std::max(scale, std::fabs(element(want.data[i], t.dtype, e)));
    for (int64_t e = 0; e < n; ++e) {
      double a = element(got.data[i], t.dtype, e), b = element(want.data[i], t.dtype, e);
      if (std::isnan(a) != std::isnan(b)) return INFINITY;
      if (!std::isnan(a)) worst = std::max(worst, std::fabs(a - b) / scale);
    }
  }
  return worst;
}

// The arguments of `call_packed`: `plain` with every const input the schedule packs replaced by
// its packed form. Empty when the schedule packs nothing; *pack_ok is false when a pack failed.
Buffers packed_buffers(const ansor_kernel_info& k, const Buffers& plain, bool* pack_ok) {
  Buffers b = plain;
  bool any = false;
  *pack_ok = true;
  for (int i = 0; i < k.num_args; ++i) {
    int64_t elements = k.packed_elements(i);
    if (elements == 0) continue;
    any = true;
    b.data[i].assign(static_cast<size_t>(elements) * ansor_dtype_size(k.args[i].dtype), 0);
    *pack_ok = *pack_ok && k.pack(i, plain.data[i].data(), b.data[i].data()) == 0;
  }
  if (!any) return {};
  for (int i = 0; i < k.num_args; ++i) {
    if (k.args[i].is_output) poison(b.data[i], k.args[i].dtype);
    b.args[i] = b.data[i].data();
  }
  return b;
}

// Median time of one call: a warm-up call, then calls until at least 0.2 s and 5 calls.
double median_seconds(int (*call)(void* const*), Buffers& b) {
  call(b.args.data());
  std::vector<double> times;
  double total = 0;
  while (total < 0.2 || times.size() < 5) {
    auto start = std::chrono::steady_clock::now();
    call(b.args.data());
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times.push_back(dt);
    total += dt;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  int count = 0, ref_count = 0;
  const ansor_kernel_info* kernels = ansor_demo_kernels_kernels(&count);
  const ansor_kernel_info* reference = ansor_demo_reference_kernels(&ref_count);
  std::printf("ansor demo: %d kernels, %d threads\n\n", count, ansor_get_num_threads());
  std::printf("%-20s %-52s %-9s %10s %9s %12s %9s  %s\n", "kernel", "shapes (inputs -> outputs)", "schedule", "time (ms)",
              "GFLOP/s", "packed (ms)", "GFLOP/s", "check");
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    const ansor_kernel_info& k = kernels[i];
    const ansor_kernel_info* ref = ansor_find_kernel(reference, ref_count, k.name);
    std::string shapes;
    for (int a = 0; a < k.num_args; ++a) {
      if (a > 0) shapes += k.args[a].is_output && !k.args[a - 1].is_output ? " -> " : ",";
      shapes += shape_text(k.args[a]);
    }
    Buffers got = make_buffers(k, 1234u + static_cast<unsigned>(i));
    Buffers want = make_buffers(k, 1234u + static_cast<unsigned>(i));
    bool ok = ref && k.call(got.args.data()) == 0 && ref->call(want.args.data()) == 0;
    double err = ok ? relative_error(k, got, want) : INFINITY;
    bool pack_ok = true;
    Buffers packed = packed_buffers(k, got, &pack_ok);
    const bool has_packed = !packed.args.empty();
    if (has_packed) {
      ok = ok && pack_ok && k.call_packed(packed.args.data()) == 0;
      err = ok ? std::max(err, relative_error(k, packed, want)) : INFINITY;
    }
    ok = ok && err <= 1e-3;
    double seconds = median_seconds(k.call, got);
    std::string packed_columns = "           -         -";
    if (has_packed) {
      double packed_seconds = median_seconds(k.call_packed, packed);
      char text[64];
      std::snprintf(text, sizeof text, "%12.3f %9.2f", packed_seconds * 1e3, k.flops / packed_seconds / 1e9);
      packed_columns = text;
    }
    std::printf("%-20s %-52s %-9s %10.3f %9.2f %s  %s (max rel. error %.1e)\n", k.name, shapes.c_str(), k.schedule,
                seconds * 1e3, k.flops / seconds / 1e9, packed_columns.c_str(), ok ? "ok" : "FAILED", err);
    failures += ok ? 0 : 1;
  }
  if (failures) std::printf("\n%d kernel(s) failed the check\n", failures);
  return failures ? 1 : 0;
}
