// Host and CUDA argument memory for the measurement worker.
#include "tools/argument_memory.h"

#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "measure/aligned_buffer.h"

namespace ansor {

namespace {

class HostMemory final : public ArgumentMemory {
 public:
  void* alloc(size_t bytes) override {
    blocks_.emplace_back(bytes);
    return blocks_.back().data();
  }
  bool upload(void* block, const void* host, size_t bytes) override {
    std::memcpy(block, host, bytes);
    return true;
  }
  bool download(void* host, const void* block, size_t bytes) override {
    std::memcpy(host, block, bytes);
    return true;
  }
  bool fill(void* block, unsigned char byte, size_t bytes) override {
    std::memset(block, byte, bytes);
    return true;
  }
  double time(const std::function<int()>& call, int& status) override {
    auto start = std::chrono::steady_clock::now();
    status = call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  std::vector<AlignedVector<unsigned char>> blocks_;
};

// The few CUDA runtime functions the worker calls, by their C signatures (cudaError_t is an int
// enumeration, streams and events are pointers).
struct CudaRuntime {
  int (*malloc)(void**, size_t);
  int (*free)(void*);
  int (*memcpy)(void*, const void*, size_t, int);
  int (*memset)(void*, int, size_t);
  int (*memset_async)(void*, int, size_t, void*);
  int (*event_create)(void**);
  int (*event_destroy)(void*);
  int (*event_record)(void*, void*);
  int (*event_synchronize)(void*);
  int (*event_elapsed_time)(float*, void*, void*);
  int (*device_get_attribute)(int*, int, int);
  const char* (*get_error_string)(int);
};

constexpr int kHostToDevice = 1, kDeviceToHost = 2;
constexpr int kL2CacheSizeAttribute = 89;  // cudaDevAttrL2CacheSize

template <class F>
bool resolve(void* library, const char* name, F& f) {
  f = reinterpret_cast<F>(::dlsym(library, name));
  return f != nullptr;
}

class CudaMemory final : public ArgumentMemory {
 public:
  explicit CudaMemory(const CudaRuntime& cuda) : cuda_(cuda) {}
  ~CudaMemory() override {
    for (void* block : blocks_) cuda_.free(block);
    if (flush_) cuda_.free(flush_);
    if (start_) cuda_.event_destroy(start_);
    if (stop_) cuda_.event_destroy(stop_);
  }

  bool init() {
    int l2 = 0;
    if (!ok(cuda_.event_create(&start_)) || !ok(cuda_.event_create(&stop_)) || !ok(cuda_.device_get_attribute(&l2, kL2CacheSizeAttribute, 0)))
      return false;
    l2_bytes_ = static_cast<size_t>(l2);
    return true;
  }

  void* alloc(size_t bytes) override {
    void* block = nullptr;
    if (!ok(cuda_.malloc(&block, bytes == 0 ? 1 : bytes))) return nullptr;
    blocks_.push_back(block);
    return block;
  }
  bool upload(void* block, const void* host, size_t bytes) override { return ok(cuda_.memcpy(block, host, bytes, kHostToDevice)); }
  bool download(void* host, const void* block, size_t bytes) override { return ok(cuda_.memcpy(host, block, bytes, kDeviceToHost)); }
  bool fill(void* block, unsigned char byte, size_t bytes) override { return ok(cuda_.memset(block, byte, bytes)); }

  // Arguments that fit in L2 would stay there between calls, which a deployed kernel rarely
  // finds: twice L2's size is written before each timed call.
  void arguments_ready(size_t bytes) override {
    if (bytes <= l2_bytes_ && !ok(cuda_.malloc(&flush_, 2 * l2_bytes_))) flush_ = nullptr;
  }

  double time(const std::function<int()>& call, int& status) override {
    if (flush_) cuda_.memset_async(flush_, 0, 2 * l2_bytes_, nullptr);
    cuda_.event_record(start_, nullptr);
    status = call();  // on the default stream, returning once it has finished
    cuda_.event_record(stop_, nullptr);
    float ms = 0;
    if (!ok(cuda_.event_synchronize(stop_)) || !ok(cuda_.event_elapsed_time(&ms, start_, stop_))) status = 1;
    return ms * 1e-3;
  }

  std::string status_text(int status) const override {
    return "status " + std::to_string(status) + " (" + cuda_.get_error_string(status) + ")";
  }

 private:
  bool ok(int status) {
    if (status != 0) error_ = cuda_.get_error_string(status);
    return status == 0;
  }

  CudaRuntime cuda_;
  std::vector<void*> blocks_;
  void* flush_ = nullptr;
  void* start_ = nullptr;
  void* stop_ = nullptr;
  size_t l2_bytes_ = 0;
};

}  // namespace

std::unique_ptr<ArgumentMemory> host_memory() { return std::make_unique<HostMemory>(); }

std::unique_ptr<ArgumentMemory> cuda_memory(void* library, std::string& error) {
  CudaRuntime cuda{};
  bool found = resolve(library, "cudaMalloc", cuda.malloc) && resolve(library, "cudaFree", cuda.free) &&
               resolve(library, "cudaMemcpy", cuda.memcpy) && resolve(library, "cudaMemset", cuda.memset) &&
               resolve(library, "cudaMemsetAsync", cuda.memset_async) && resolve(library, "cudaEventCreate", cuda.event_create) &&
               resolve(library, "cudaEventDestroy", cuda.event_destroy) && resolve(library, "cudaEventRecord", cuda.event_record) &&
               resolve(library, "cudaEventSynchronize", cuda.event_synchronize) &&
               resolve(library, "cudaEventElapsedTime", cuda.event_elapsed_time) &&
               resolve(library, "cudaDeviceGetAttribute", cuda.device_get_attribute) &&
               resolve(library, "cudaGetErrorString", cuda.get_error_string);
  if (!found) {
    error = "the CUDA kernel's library does not link the CUDA runtime (built without -cudart=shared?)";
    return nullptr;
  }
  auto memory = std::make_unique<CudaMemory>(cuda);
  if (!memory->init()) {
    error = "the CUDA device cannot be used: " + memory->error();
    return nullptr;
  }
  return memory;
}

}  // namespace ansor
