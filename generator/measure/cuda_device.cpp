// Finding nvcc and probing the CUDA device.
#include "measure/cuda_device.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "measure/compiler.h"

namespace ansor {

namespace {

// Prints the properties of device 0 as `key value` lines, or `error MESSAGE`.
constexpr const char* kProbeSource = R"(#include <cuda_runtime.h>
#include <cstdio>
int main() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) { std::printf("error %s\n", cudaGetErrorString(e)); return 0; }
  if (count == 0) { std::printf("error no CUDA device\n"); return 0; }
  cudaDeviceProp p;
  e = cudaGetDeviceProperties(&p, 0);
  if (e != cudaSuccess) { std::printf("error %s\n", cudaGetErrorString(e)); return 0; }
  std::printf("sm %d%d\nsm_count %d\nmax_threads_per_block %d\nmax_shared_bytes_per_block %zu\nregisters_per_block %d\n"
              "warp_size %d\nmax_threads_per_sm %d\nl2_bytes %d\nname %s\n",
              p.major, p.minor, p.multiProcessorCount, p.maxThreadsPerBlock, p.sharedMemPerBlockOptin, p.regsPerBlock, p.warpSize,
              p.maxThreadsPerMultiProcessor, p.l2CacheSize, p.name);
  return 0;
}
)";

std::optional<CudaDevice> run_probe(const std::string& nvcc, std::string& why) {
  if (nvcc.empty()) {
    why = "no CUDA compiler (nvcc) found: set ANSOR_NVCC or CUDACXX";
    return std::nullopt;
  }
  std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("ansor-cuda-probe-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "probe.cu") << kProbeSource;
  std::string out = run_command_output(fmt::format("{} -o {} {} 2>&1 && {}", shell_quote(nvcc), shell_quote((dir / "probe").string()),
                                                   shell_quote((dir / "probe.cu").string()), shell_quote((dir / "probe").string())));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::map<std::string, std::string> values;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.find(' ');
    if (space != std::string::npos) values[line.substr(0, space)] = line.substr(space + 1);
  }
  if (values.count("error")) {
    why = "no CUDA device on this machine (" + values["error"] + ")";
    return std::nullopt;
  }
  if (!values.count("sm")) {
    why = "the CUDA probe did not run: " + out.substr(0, out.find('\n'));
    return std::nullopt;
  }
  CudaDevice device;
  device.name = values["name"];
  Target& t = device.target;
  t.kind = Target::Kind::Cuda;
  t.arch = "nvptx";
  t.isa = "cuda";
  t.cpu = "sm_" + values["sm"];
  GpuLimits& g = t.gpu;
  g.sm_count = std::stoi(values["sm_count"]);
  g.max_threads_per_block = std::stoi(values["max_threads_per_block"]);
  g.max_shared_bytes_per_block = std::stoll(values["max_shared_bytes_per_block"]);
  g.registers_per_block = std::stoi(values["registers_per_block"]);
  g.warp_size = std::stoi(values["warp_size"]);
  g.max_threads_per_sm = std::stoi(values["max_threads_per_sm"]);
  g.l2_bytes = std::stoll(values["l2_bytes"]);
  return device;
}

}  // namespace

std::string find_nvcc() {
  for (const char* variable : {"ANSOR_NVCC", "CUDACXX"})
    if (const char* path = std::getenv(variable); path && *path) return path;
  std::string on_path = run_command_output("command -v nvcc 2>/dev/null");
  if (!on_path.empty()) return on_path.substr(0, on_path.find('\n'));
  std::vector<std::filesystem::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(std::filesystem::path(home) / "bin" / "nvcc");
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) return c.string();
  return "";
}

std::vector<std::string> cuda_kernel_flags(const Target& target) { return {"-O3", "-arch=" + target.cpu}; }

std::optional<CudaDevice> probe_cuda_device(const std::string& nvcc, std::string& why) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::optional<CudaDevice>, std::string>> probed;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probed.find(nvcc);
  if (it == probed.end()) {
    std::string reason;
    std::optional<CudaDevice> device = run_probe(nvcc, reason);
    it = probed.emplace(nvcc, std::make_pair(std::move(device), std::move(reason))).first;
  }
  why = it->second.second;
  return it->second.first;
}

Target resolve_cuda_target(const std::string& text) {
  if (text != "cuda") return parse_target(text);
  std::string why;
  std::optional<CudaDevice> device = probe_cuda_device(find_nvcc(), why);
  if (!device) throw std::runtime_error(fmt::format("target 'cuda' is the CUDA device present, and there is none: {}; name an architecture "
                                                    "instead (cuda:sm_80, cuda:sm_90, ...)",
                                                    why));
  return device->target;
}

}  // namespace ansor
