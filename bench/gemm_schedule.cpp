// A hand-written schedule for fp32 matmul 1024 x 1024 x 1024, timed against the naive program
// and OpenBLAS in one run, on all cores.
//
// The schedule is the CPU sketch of Ansor written out with its tile sizes: C accumulates in a
// local stage tiled SSRSRS (i0 j0 i1 j1 k0 i2 j2 k1 i3 j3) with an 8 x 32 register tile, C
// copies each tile out, the outer tile loops are fused and parallel, the innermost loop is
// vectorised and the one around it unrolled, and B is packed in the order the tiles read it.
//
//   bench_gemm_schedule [I1 I3 J1 J3 K1]   tile lengths (default 16 8 1 32 8)
#include <cblas.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "bench_support.h"
#include "schedule/steps.h"

using namespace ansor;

namespace {

constexpr int kN = 1024;

State hand_schedule(const std::shared_ptr<const ComputeDAG>& dag, int64_t i1, int64_t i3, int64_t j1, int64_t j3, int64_t k1) {
  State s(dag);
  // Stages: A 0, B 1, C 2; after cache_write, C.local 2 and C 3.
  s.apply(std::make_shared<CacheWriteStep>(2, MemoryScope::Local));
  s.apply(std::make_shared<SplitStep>(2, 0, std::vector<int64_t>{i1, 1, i3}));  // step 1: i.0 i.1 i.2 i.3
  s.apply(std::make_shared<SplitStep>(2, 4, std::vector<int64_t>{j1, 1, j3}));  // step 2: j.0 .. j.3
  s.apply(std::make_shared<SplitStep>(2, 8, std::vector<int64_t>{k1}));         // k.0 k.1
  s.apply(std::make_shared<ReorderStep>(2, std::vector<int>{0, 4, 1, 5, 8, 2, 6, 9, 3, 7}));
  s.apply(std::make_shared<FollowSplitStep>(3, 0, 1, 2));  // C's i follows: i.0 i.1 i.2
  s.apply(std::make_shared<FollowSplitStep>(3, 3, 2, 2));  // C's j follows: j.0 j.1 j.2
  s.apply(std::make_shared<ReorderStep>(3, std::vector<int>{0, 3, 1, 4, 2, 5}));
  s.apply(std::make_shared<ComputeAtStep>(2, 3, 3));  // C.local inside j.1
  s.apply(std::make_shared<FuseStep>(3, std::vector<int>{0, 1}));
  s.apply(std::make_shared<AnnotateStep>(3, 0, IterAnnotation::Parallel));
  s.apply(std::make_shared<AnnotateStep>(2, 9, IterAnnotation::Vectorize));
  s.apply(std::make_shared<AnnotateStep>(2, 8, IterAnnotation::Unroll));
  s.apply(std::make_shared<LayoutRewriteStep>(1));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bench::enter_protocol_environment(argv);
  int64_t tiles[5] = {16, 8, 1, 32, 8};
  for (int i = 0; i < 5 && i + 1 < argc; ++i) tiles[i] = std::atoll(argv[i + 1]);
  std::string def = fmt::format(
      "kernel matmul {{ A = input f32[{0}, {0}]\n B = const f32[{0}, {0}]\n C[i:{0}, j:{0}] = sum(k:{0}, A[i, k] * B[k, j]) }}", kN);
  Kernel kernel = bench::load_kernel(def, "matmul");
  auto dag = std::make_shared<const ComputeDAG>(kernel.dag);
  std::string work = bench::temp_path("gemm");
  bench::LoadedKernel naive("matmul", State(dag), work);
  bench::LoadedKernel tuned("matmul", hand_schedule(dag, tiles[0], tiles[1], tiles[2], tiles[3], tiles[4]), work);
  std::filesystem::remove_all(work);

  std::vector<float> a = bench::random_floats(kN * kN, 1), b = bench::random_floats(kN * kN, 2), c(kN * kN), reference(kN * kN),
                     packed(tuned.info().packed_elements(1));
  tuned.info().pack(1, b.data(), packed.data());
  void* plain_args[] = {a.data(), b.data(), c.data()};
  void* packed_args[] = {a.data(), packed.data(), c.data()};
  bench::set_all_threads(ansor_get_num_threads());
  double flops = 2.0 * kN * kN * kN;

  // The library and the hand schedule interleaved over rounds (protocol.h).
  std::vector<bench::Spread> times = bench::interleaved(
      {[&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1, a.data(), kN, b.data(), kN, 0, reference.data(), kN); },
       [&] { tuned.info().call_packed(packed_args); }});
  double t_blas = times[0].median, t_tuned = times[1].median;
  double error = 0;
  for (size_t i = 0; i < c.size(); ++i) error = std::max(error, static_cast<double>(std::fabs(c[i] - reference[i])));
  double t_plain = bench::median_seconds([&] { tuned.info().call(plain_args); });
  double t_naive = bench::median_seconds([&] { naive.info().call(plain_args); }, 1.0);

  fmt::print("fp32 matmul {0}x{0}x{0}, {1} threads (ansor runtime and OpenBLAS), tiles i1={2} i3={3} j1={4} j3={5} k1={6}\n", kN,
             ansor_get_num_threads(), tiles[0], tiles[1], tiles[2], tiles[3], tiles[4]);
  fmt::print("{:<34} {:>10} {:>10} {:>12}\n", "program", "ms", "GFLOP/s", "vs OpenBLAS");
  auto row = [&](const char* name, double t) {
    fmt::print("{:<34} {:>10.2f} {:>10.1f} {:>11.2f}x\n", name, t * 1e3, bench::gflops(flops, t), t_blas / t);
  };
  row("OpenBLAS sgemm", t_blas);
  row("hand schedule, B packed once", t_tuned);
  row("hand schedule, B packed per call", t_plain);
  row("naive program", t_naive);
  fmt::print("max |hand schedule - OpenBLAS| = {:.2e}\n", error);
  return error < 1e-2 ? 0 : 1;
}
