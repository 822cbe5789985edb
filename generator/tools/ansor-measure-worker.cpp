// ansor-measure-worker: the process that runs candidate kernels for the tuner.
//
// It reads one JSON request per line on standard input and answers each with one line:
//   {"op":"prepare","library":L,"symbol":S,"workload":W,"seed":N,"outputs_file":F}
//       loads the reference kernel S_info from shared library L, fills its inputs with seeded
//       random values and keeps its outputs as workload W's expected results. With F
//       (optional), the outputs are read from F when it holds them (as a previous worker of
//       the same measurement left them), else written there: a restarted worker does not run a
//       naive reference again;
//   {"op":"measure","library":L,"symbol":S,"workload":W,"min_seconds":T,"tolerance":E,"stop_seconds":X}
//       runs candidate S_info on W's inputs (const inputs packed the candidate's way), compares
//       its outputs with the reference (that call is the warm-up), then times calls until T
//       seconds and at least 3 calls; answers the median and the interquartile spread. A CUDA
//       candidate runs on the GPU, its arguments in device memory (tools/argument_memory.h),
//       against the CPU reference's results. With
//       X > 0 (optional), a candidate whose first timed call takes longer than X seconds is
//       hopeless: that call's time is the answer (1 repeat), and no further calls are made;
//       when the checked call alone took longer than X and 0.1 s, its time is the answer.
// Candidates crash, hang or misbehave: that is why this is a process of its own. The runtime
// is linked in and exported, so candidates' parallel loops all use this process's thread pool.
#include <ansor/kernel_support.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "measure/aligned_buffer.h"
#include "tools/argument_memory.h"

namespace {

using Json = nlohmann::json;

// A checked call longer than this (and than the early-stop time) decides early stop alone: what
// a first call costs beyond a warm one is far less.
constexpr double kColdCallSlack = 0.1;

struct Workload {
  std::vector<ansor::AlignedVector<unsigned char>> inputs;    // per argument; empty for outputs
  std::vector<ansor::AlignedVector<unsigned char>> expected;  // per argument; empty for inputs
};

int64_t elements(const ansor_tensor_info& t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
}

double value_at(const unsigned char* p, ansor_dtype t, int64_t i) {
  switch (t) {
    case ANSOR_DTYPE_F32: return reinterpret_cast<const float*>(p)[i];
    case ANSOR_DTYPE_F64: return reinterpret_cast<const double*>(p)[i];
    case ANSOR_DTYPE_I8: return reinterpret_cast<const int8_t*>(p)[i];
    case ANSOR_DTYPE_I16: return reinterpret_cast<const int16_t*>(p)[i];
    case ANSOR_DTYPE_I32: return reinterpret_cast<const int32_t*>(p)[i];
    case ANSOR_DTYPE_I64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case ANSOR_DTYPE_U8:
    case ANSOR_DTYPE_BOOL: return p[i];
    case ANSOR_DTYPE_F16: return ansor_rt::f16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
    case ANSOR_DTYPE_BF16: return ansor_rt::bf16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
  }
  return NAN;
}

void fill_random(ansor::AlignedVector<unsigned char>& buf, ansor_dtype t, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  size_t size = ansor_dtype_size(t);
  for (size_t i = 0; i < buf.size() / size; ++i) {
    unsigned char* p = buf.data() + i * size;
    float f = real(rng);
    switch (t) {
      case ANSOR_DTYPE_F32: std::memcpy(p, &f, 4); break;
      case ANSOR_DTYPE_F64: {
        double d = f;
        std::memcpy(p, &d, 8);
        break;
      }
      case ANSOR_DTYPE_F16:
      case ANSOR_DTYPE_BF16: {
        uint16_t h = t == ANSOR_DTYPE_F16 ? ansor_rt::f32_to_f16(f) : ansor_rt::f32_to_bf16(f);
        std::memcpy(p, &h, 2);
        break;
      }
      case ANSOR_DTYPE_BOOL: *p = static_cast<unsigned char>(rng() & 1); break;
      default: {
        int64_t small = static_cast<int64_t>(rng() % 15) - 7;
        std::memcpy(p, &small, size);  // little-endian: the low bytes
        break;
      }
    }
  }
}

class Worker {
 public:
  Json handle(const Json& req) {
    std::string op = req.at("op");
    if (op == "prepare") return prepare(req);
    if (op == "measure") return measure(req);
    return {{"result", "run_error"}, {"message", "unknown request"}};
  }

 private:
  // A loaded library, closed when the request is done (thousands of candidates pass through).
  struct Library {
    void* handle = nullptr;
    ~Library() {
      if (handle) ::dlclose(handle);
    }
  };

  static const ansor_kernel_info* load(Library& lib, const std::string& path, const std::string& symbol, std::string& error) {
    lib.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
      error = ::dlerror();
      return nullptr;
    }
    auto* info = static_cast<const ansor_kernel_info*>(::dlsym(lib.handle, (symbol + "_info").c_str()));
    if (!info) {
      error = "no kernel " + symbol + " in " + path;
    } else if (info->abi_version != ANSOR_KERNEL_INFO_VERSION) {
      error = "the kernel was compiled against another ansor runtime";
      return nullptr;
    }
    return info;
  }

  Json prepare(const Json& req) {
    std::string error;
    Library lib;
    const ansor_kernel_info* info = load(lib, req.at("library"), req.at("symbol"), error);
    if (!info) return {{"result", "run_error"}, {"message", error}};
    std::mt19937_64 rng(req.value("seed", 1u));
    Workload w;
    std::vector<void*> args;
    for (int i = 0; i < info->num_args; ++i) {
      const ansor_tensor_info& t = info->args[i];
      ansor::AlignedVector<unsigned char> buf(static_cast<size_t>(elements(t)) * ansor_dtype_size(t.dtype));
      if (!t.is_output) fill_random(buf, t.dtype, rng);
      (t.is_output ? w.expected : w.inputs).push_back(std::move(buf));
      (t.is_output ? w.inputs : w.expected).emplace_back();
    }
    for (int i = 0; i < info->num_args; ++i) args.push_back((info->args[i].is_output ? w.expected : w.inputs)[i].data());
    std::string outputs_file = req.value("outputs_file", "");
    if (outputs_file.empty() || !read_outputs(outputs_file, w.expected)) {
      if (info->call(args.data()) != 0) return {{"result", "run_error"}, {"message", "the reference kernel failed"}};
      if (!outputs_file.empty()) write_outputs(outputs_file, w.expected);
    }
    workloads_[req.at("workload")] = std::move(w);
    return {{"result", "ok"}};
  }

  // The outputs, one after the other, when the file holds exactly as many bytes as they do.
  static bool read_outputs(const std::string& path, std::vector<ansor::AlignedVector<unsigned char>>& outputs) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    size_t total = 0;
    for (const auto& o : outputs) total += o.size();
    if (!in || static_cast<size_t>(in.tellg()) != total) return false;
    in.seekg(0);
    for (auto& o : outputs) in.read(reinterpret_cast<char*>(o.data()), static_cast<std::streamsize>(o.size()));
    return static_cast<bool>(in);
  }

  // Written under another name and renamed, so that a worker killed while writing leaves no
  // partial file. A failure only costs the next worker a reference run.
  static void write_outputs(const std::string& path, const std::vector<ansor::AlignedVector<unsigned char>>& outputs) {
    std::string partial = path + ".partial";
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      for (const auto& o : outputs) out.write(reinterpret_cast<const char*>(o.data()), static_cast<std::streamsize>(o.size()));
      if (!out) return;
    }
    std::rename(partial.c_str(), path.c_str());
  }

  Json measure(const Json& req) {
    auto it = workloads_.find(req.at("workload"));
    if (it == workloads_.end()) return {{"result", "run_error"}, {"message", "unknown workload"}};
    const Workload& w = it->second;
    std::string error;
    Library lib;
    const ansor_kernel_info* info = load(lib, req.at("library"), req.at("symbol"), error);
    if (!info) return {{"result", "run_error"}, {"message", error}};
    std::unique_ptr<ansor::ArgumentMemory> memory = info->device == ANSOR_DEVICE_CUDA ? ansor::cuda_memory(lib.handle, error) : ansor::host_memory();
    if (!memory) return {{"result", "run_error"}, {"message", error}};
    auto memory_error = [&](const char* what) -> Json {
      return {{"result", "run_error"}, {"message", std::string(what) + ": " + memory->error()}};
    };
    std::vector<void*> args;
    size_t argument_bytes = 0;
    for (int i = 0; i < info->num_args; ++i) {
      const ansor_tensor_info& t = info->args[i];
      size_t size = ansor_dtype_size(t.dtype);
      void* arg = nullptr;
      if (t.is_output) {
        // Poisoned, so that an element the kernel never writes is caught.
        arg = memory->alloc(w.expected[i].size());
        if (!arg || !memory->fill(arg, 0xff, w.expected[i].size())) return memory_error("no memory for an output");
        argument_bytes += w.expected[i].size();
      } else {
        void* plain = memory->alloc(w.inputs[i].size());
        if (!plain || !memory->upload(plain, w.inputs[i].data(), w.inputs[i].size())) return memory_error("no memory for an input");
        arg = plain;
        if (t.is_const) {
          size_t packed = static_cast<size_t>(info->packed_elements(i)) * size;
          arg = memory->alloc(packed);
          if (!arg || !memory->fill(arg, 0, packed)) return memory_error("no memory for a packed input");
          if (info->pack(i, plain, arg) != 0) return {{"result", "run_error"}, {"message", "packing failed"}};
        }
        argument_bytes += t.is_const ? static_cast<size_t>(info->packed_elements(i)) * size : w.inputs[i].size();
      }
      args.push_back(arg);
    }
    memory->arguments_ready(argument_bytes);
    auto call = [&]() { return info->call_packed(args.data()); };
    auto checked_start = std::chrono::steady_clock::now();
    if (int status = call(); status != 0)
      return {{"result", "run_error"}, {"message", "the kernel returned " + memory->status_text(status)}};
    double checked_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - checked_start).count();
    double tolerance = req.value("tolerance", 1e-4);
    for (int i = 0; i < info->num_args; ++i) {
      const ansor_tensor_info& t = info->args[i];
      if (!t.is_output) continue;
      ansor::AlignedVector<unsigned char> got(w.expected[i].size());
      if (!memory->download(got.data(), args[i], got.size())) return memory_error("the outputs could not be read");
      int64_t n = elements(t);
      double scale = 1;
      for (int64_t e = 0; e < n; ++e) scale = std::max(scale, std::fabs(value_at(w.expected[i].data(), t.dtype, e)));
      for (int64_t e = 0; e < n; ++e) {
        double value = value_at(got.data(), t.dtype, e), want = value_at(w.expected[i].data(), t.dtype, e);
        if (!(std::fabs(value - want) <= tolerance * scale) && !(std::isnan(value) && std::isnan(want)))
          return {{"result", "wrong_result"},
                  {"message", "output '" + std::string(t.name) + "' element " + std::to_string(e) + ": " + std::to_string(value) +
                                  " instead of " + std::to_string(want)}};
      }
    }
    double min_seconds = req.value("min_seconds", 0.1);
    double stop_seconds = req.value("stop_seconds", 0.0);
    // A checked call that took long is hopeless whatever being the first call cost it (page
    // faults and cold caches: milliseconds): its time is the answer, and no call is repeated.
    if (stop_seconds > 0 && checked_seconds > std::max(stop_seconds, kColdCallSlack))
      return {{"result", "ok"}, {"seconds", checked_seconds}, {"spread", 0.0}, {"repeats", 1}};
    std::vector<double> times;
    double total = 0;
    // The checked call warmed the candidate up (its code, pages and the thread pool): timing
    // starts at once. A hopeless candidate is not called again after its first timed call (it
    // may take seconds per call): one call tells how hopeless it is.
    while ((total < min_seconds || times.size() < 3) && times.size() < 100000) {
      int status = 0;
      double dt = memory->time(call, status);
      if (status != 0)
        return {{"result", "run_error"}, {"message", "the kernel returned " + memory->status_text(status) + " in a timed call"}};
      if (times.empty() && stop_seconds > 0 && dt > stop_seconds) return {{"result", "ok"}, {"seconds", dt}, {"spread", 0.0}, {"repeats", 1}};
      times.push_back(dt);
      total += dt;
    }
    std::sort(times.begin(), times.end());
    double median = times[times.size() / 2];
    // Interquartile: one preempted call among thousands of microsecond calls says nothing about
    // how repeatable the kernel's time is.
    double spread = (times[times.size() * 3 / 4] - times[times.size() / 4]) / median;
    return {{"result", "ok"}, {"seconds", median}, {"spread", spread}, {"repeats", times.size()}};
  }

  std::map<std::string, Workload> workloads_;
};

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // --threads N: the thread count of the target being tuned.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--threads") ansor_set_num_threads(std::atoi(argv[i + 1]));
  Worker worker;
  std::string line;
  while (std::getline(std::cin, line)) {
    Json answer;
    try {
      answer = worker.handle(Json::parse(line));
    } catch (const std::exception& e) {
      answer = {{"result", "run_error"}, {"message", e.what()}};
    }
    std::cout << answer.dump() << std::endl;
  }
  return 0;
}
