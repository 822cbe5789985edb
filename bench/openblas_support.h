// OpenBLAS as the benchmarks' BLAS reference: its row-major f32 calls over our buffers, named by
// the function and the core OpenBLAS picked for this CPU, at the thread count set when prepared.
#pragma once

#include <cstdint>

#include "protocol.h"

namespace ansor::bench {

// C [b, m, n] = A [b, m, k] · B [b, k, n]: one cblas_sgemm per matrix of the batch.
LibraryPreparer openblas_gemm(int64_t batch, int64_t m, int64_t k, int64_t n);

// dense(X [m, k], W [n, k]) = X · Wᵀ: one cblas_sgemm with B transposed, OpenBLAS's native
// form of a weight matrix stored by output feature.
LibraryPreparer openblas_dense(int64_t m, int64_t k, int64_t n);

// The 2-norm of each of `batch` matrices of `elements` floats: the square root of cblas_sdot of
// each with itself, the kernel's own arithmetic (cblas_snrm2 rescales against overflow, which
// the kernel does not, and is several times slower).
LibraryPreparer openblas_norm2(int64_t batch, int64_t elements);

}  // namespace ansor::bench
