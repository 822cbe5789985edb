// Runs the CUDA kernels of gpu_kernels.h on the GPU and checks them against plain loops on the
// CPU: the matrix product through the plain, the packed and the stream entry points, the
// softmax, and every kernel generically through the library's table. Without a GPU every call
// must return the CUDA runtime's error, not crash; the program says so and succeeds.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_kernels.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures;
  }
}

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A device copy of a host vector, freed with the object.
struct DeviceBuffer {
  float* data = nullptr;
  explicit DeviceBuffer(const std::vector<float>& host) {
    if (cudaMalloc(reinterpret_cast<void**>(&data), host.size() * sizeof(float)) != cudaSuccess) std::exit(1);
    cudaMemcpy(data, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data); }
  std::vector<float> read(size_t n) const {
    std::vector<float> host(n);
    cudaMemcpy(host.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost);
    return host;
  }
};

double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  return worst;
}

void run_matmul() {
  const int M = 64, K = 48, N = 40;
  std::vector<float> a = random_values(M * K, 1), b = random_values(K * N, 2), want(M * N, 0.0f);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) want[i * N + j] += a[i * K + k] * b[k * N + j];
  DeviceBuffer da(a), db(b), dc(std::vector<float>(M * N, NAN));
  check(gpu_kernels_matmul(da.data, db.data, dc.data) == 0, "matmul returned an error");
  check(max_error(dc.read(M * N), want) < 1e-4, "matmul differs from the CPU");

  DeviceBuffer packed(std::vector<float>(gpu_kernels_matmul_B_packed_elements(), 0.0f));
  check(gpu_kernels_matmul_pack_B(db.data, packed.data) == 0, "packing B returned an error");
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  DeviceBuffer dc2(std::vector<float>(M * N, NAN));
  check(gpu_kernels_matmul_packed_stream(da.data, packed.data, dc2.data, stream) == 0, "matmul_packed_stream returned an error");
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  check(max_error(dc2.read(M * N), want) < 1e-4, "matmul with B packed differs from the CPU");
}

void run_softmax() {
  const int rows = 8, cols = 300;
  std::vector<float> x = random_values(rows * cols, 3), want(rows * cols);
  for (int r = 0; r < rows; ++r) {
    float largest = x[r * cols];
    for (int c = 0; c < cols; ++c) largest = std::max(largest, x[r * cols + c]);
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - largest);
    for (int c = 0; c < cols; ++c) want[r * cols + c] = float(std::exp(x[r * cols + c] - largest) / sum);
  }
  DeviceBuffer dx(x), dy(std::vector<float>(rows * cols, NAN));
  check(gpu_kernels_softmax(dx.data, dy.data) == 0, "softmax returned an error");
  check(max_error(dy.read(rows * cols), want) < 1e-5, "softmax differs from the CPU");
}

// Every kernel through the table: it runs and writes every output element.
void run_table() {
  int count = 0;
  const ansor_kernel_info* kernels = gpu_kernels_kernels(&count);
  check(count == 4, "the table lists 4 kernels");
  for (int k = 0; k < count; ++k) {
    const ansor_kernel_info& info = kernels[k];
    check(info.device == ANSOR_DEVICE_CUDA, std::string(info.name) + " is not a CUDA kernel");
    std::vector<std::unique_ptr<DeviceBuffer>> buffers;
    std::vector<void*> args;
    for (int a = 0; a < info.num_args; ++a) {
      size_t n = 1;
      for (int d = 0; d < info.args[a].rank; ++d) n *= size_t(info.args[a].shape[d]);
      buffers.push_back(std::make_unique<DeviceBuffer>(info.args[a].is_output ? std::vector<float>(n, NAN) : random_values(n, 10 + a)));
      args.push_back(buffers.back()->data);
    }
    check(info.call(args.data()) == 0, std::string(info.name) + " returned an error");
    for (int a = 0; a < info.num_args; ++a) {
      if (!info.args[a].is_output) continue;
      size_t n = 1;
      for (int d = 0; d < info.args[a].rank; ++d) n *= size_t(info.args[a].shape[d]);
      for (float v : buffers[a]->read(n)) check(std::isfinite(v), std::string(info.name) + " left an output element unwritten");
    }
  }
}

}  // namespace

int main() {
  std::printf("gpu_kernels target: %s\n", gpu_kernels_target());
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    // Without a GPU every entry point reports the CUDA runtime's error.
    int status = gpu_kernels_gelu(nullptr, nullptr);
    check(status != 0, "gelu succeeded without a GPU");
    status = gpu_kernels_softmax(nullptr, nullptr);
    check(status != 0, "softmax succeeded without a GPU");
    std::printf("no CUDA device: the kernels are built and linked, and return '%s'\n", cudaGetErrorString(cudaError_t(status)));
    return failures == 0 ? 0 : 1;
  }
  run_matmul();
  run_softmax();
  run_table();
  std::printf("%s: the CUDA kernels %s\n", failures ? "FAIL" : "OK", failures ? "are wrong" : "match the CPU");
  return failures == 0 ? 0 : 1;
}
