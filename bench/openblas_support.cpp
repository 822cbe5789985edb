#include "openblas_support.h"

#include <cblas.h>
#include <fmt/format.h>

#include <cmath>

namespace ansor::bench {

namespace {

std::string implementation(const char* function, int64_t batch) {
  return fmt::format("{}{} ({} kernels)", function, batch > 1 ? fmt::format(" x {}", batch) : "", openblas_get_corename());
}

}  // namespace

LibraryPreparer openblas_gemm(int64_t batch, int64_t m, int64_t k, int64_t n) {
  return [=](const std::vector<const void*>& in, void* output) {
    float* out = static_cast<float*>(output);
    LibraryCall call;
    call.library = "OpenBLAS";
    call.parts = {{PrimitiveKind::Blas, implementation("cblas_sgemm", batch)}};
    const float *a = static_cast<const float*>(in[0]), *b = static_cast<const float*>(in[1]);
    call.run = [=] {
      for (int64_t i = 0; i < batch; ++i)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1,
                    a + i * m * k, static_cast<int>(k), b + i * k * n, static_cast<int>(n), 0, out + i * m * n, static_cast<int>(n));
    };
    return call;
  };
}

LibraryPreparer openblas_dense(int64_t m, int64_t k, int64_t n) {
  return [=](const std::vector<const void*>& in, void* output) {
    float* out = static_cast<float*>(output);
    LibraryCall call;
    call.library = "OpenBLAS";
    call.parts = {{PrimitiveKind::Blas, implementation("cblas_sgemm", 1) + " (B transposed)"}};
    const float *x = static_cast<const float*>(in[0]), *w = static_cast<const float*>(in[1]);
    call.run = [=] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1, x,
                  static_cast<int>(k), w, static_cast<int>(k), 0, out, static_cast<int>(n));
    };
    return call;
  };
}

LibraryPreparer openblas_norm2(int64_t batch, int64_t elements) {
  return [=](const std::vector<const void*>& in, void* output) {
    float* out = static_cast<float*>(output);
    LibraryCall call;
    call.library = "OpenBLAS";
    call.parts = {{PrimitiveKind::Blas, implementation("cblas_sdot", batch) + " + sqrt"}};
    const float* x = static_cast<const float*>(in[0]);
    call.run = [=] {
      for (int64_t i = 0; i < batch; ++i) {
        const float* m = x + i * elements;
        out[i] = std::sqrt(cblas_sdot(static_cast<int>(elements), m, 1, m, 1));
      }
    };
    return call;
  };
}

}  // namespace ansor::bench
