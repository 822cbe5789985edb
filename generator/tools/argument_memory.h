// Where the measurement worker puts a candidate's arguments and how it times a call: host
// memory and a steady clock for CPU kernels; for CUDA kernels, device memory and CUDA events,
// with the L2 cache flushed before each timed call when the arguments would otherwise stay in
// it. The CUDA runtime is the candidate's own (found through its library handle), so the worker
// needs no CUDA at build time and runs CPU kernels on machines without it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace ansor {

class ArgumentMemory {
 public:
  virtual ~ArgumentMemory() = default;
  // A block of `bytes` bytes, freed with this object; nullptr when it cannot be had.
  virtual void* alloc(size_t bytes) = 0;
  // Copies between the host and a block; false (with error() saying why) when it fails.
  virtual bool upload(void* block, const void* host, size_t bytes) = 0;
  virtual bool download(void* host, const void* block, size_t bytes) = 0;
  virtual bool fill(void* block, unsigned char byte, size_t bytes) = 0;
  // The seconds one call takes; call returns the kernel's status, stored in `status`.
  virtual double time(const std::function<int()>& call, int& status) = 0;
  // Called once every argument is in place: the bytes they take, for the cache flushing rule.
  virtual void arguments_ready(size_t bytes) { (void)bytes; }
  const std::string& error() const { return error_; }
  // What a kernel's nonzero return status means: the CUDA runtime's name for it on a GPU.
  virtual std::string status_text(int status) const { return "status " + std::to_string(status); }

 protected:
  std::string error_;
};

std::unique_ptr<ArgumentMemory> host_memory();

// Device memory of the CUDA runtime that `library` (a dlopen handle of a CUDA candidate) links;
// nullptr, with the reason in `error`, when it links none or no device can be used.
std::unique_ptr<ArgumentMemory> cuda_memory(void* library, std::string& error);

}  // namespace ansor
