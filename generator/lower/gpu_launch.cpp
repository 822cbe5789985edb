// Launches of GPU programs and the limits they are checked against.
#include "lower/gpu_launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "schedule/bound_inference.h"

namespace ansor {

namespace {

bool binds_block(const Stmt& s) {
  auto* f = s->as<ForNode>();
  return f && f->for_kind == ForKind::ThreadBinding && is_block_index(f->binding);
}

int block_axis(IterAnnotation a) {
  switch (a) {
    case IterAnnotation::BlockY: return 1;
    case IterAnnotation::BlockZ: return 2;
    default: return 0;
  }
}

GpuLaunch make_launch(const LoweredKernel& kernel, const Stmt& top) {
  GpuLaunch launch;
  Stmt body = top;
  while (binds_block(body)) {
    auto* f = body->as<ForNode>();
    int axis = block_axis(f->binding);
    launch.grid[axis] = std::max(launch.grid[axis], f->extent);
    launch.block_loops.push_back(f);
    body = f->body;
  }
  launch.body = body;
  launch.block = block_thread_dims(body);
  for_each_stmt(body, [&](const Stmt& s) {
    if (auto* f = s->as<ForNode>(); f && f->for_kind == ForKind::ThreadBinding && f->binding != IterAnnotation::VThread) {
      // A loop bound to a GPU index does not iterate: each thread (block) takes its own index.
      const int axis = thread_axis(f->binding);
      const int64_t along = axis < 0 ? launch.grid[block_axis(f->binding)] : launch.block[axis];
      if (f->extent < along) launch.tail_guards.insert(f);
    }
    if (auto* a = s->as<AllocateNode>()) {
      const Buffer* b = kernel.find_buffer(a->buffer);
      // A buffer allocated in several places (copies of a loop body) has one place per block.
      const bool placed = std::any_of(launch.shared.begin(), launch.shared.end(), [&](const SharedPlacement& p) { return p.buffer == b->name; });
      if (b->scope == BufferScope::Shared && !placed) {
        launch.shared_bytes = (launch.shared_bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
        launch.shared.push_back({b->name, launch.shared_bytes});
        launch.shared_bytes += b->num_elements() * dtype_bytes(b->dtype);
      } else if (b->scope == BufferScope::Local || b->scope == BufferScope::LocalHeap) {
        launch.local_bytes += b->num_elements() * std::max(4, dtype_bytes(b->dtype));
      }
    }
    auto* st = s->as<StoreNode>();
    if (st && st->across_threads) ++launch.thread_reductions;
  });
  launch.shared_opt_in = launch.shared_bytes > kSharedBytesWithoutOptIn;
  return launch;
}

}  // namespace

std::vector<GpuLaunch> gpu_launches(const LoweredKernel& kernel) {
  std::vector<GpuLaunch> launches;
  if (auto* seq = kernel.body->as<SeqNode>()) {
    for (const Stmt& s : seq->stmts) launches.push_back(make_launch(kernel, s));
  } else {
    launches.push_back(make_launch(kernel, kernel.body));
  }
  return launches;
}

void check_gpu_limits(const LoweredKernel& kernel, const GpuLimits& limits) {
  auto fail = [&](size_t launch, const std::string& what) {
    throw InvalidState(fmt::format("cannot run '{}' on this GPU: launch {} {}", kernel.name, launch, what));
  };
  if (kernel.launches.empty())
    throw std::invalid_argument(fmt::format("'{}' was not lowered for a GPU target: it has no launches to check", kernel.name));
  const std::vector<GpuLaunch>& launches = kernel.launches;
  for (size_t l = 0; l < launches.size(); ++l) {
    const GpuLaunch& launch = launches[l];
    if (launch.threads() > limits.max_threads_per_block)
      fail(l, fmt::format("has {} threads per block, more than the {} allowed", launch.threads(), limits.max_threads_per_block));
    const int64_t shared = launch.shared_bytes + launch.thread_reductions * kThreadReductionSharedBytes;
    if (shared > limits.max_shared_bytes_per_block)
      fail(l, fmt::format("uses {} bytes of shared memory per block, more than the {} allowed", shared, limits.max_shared_bytes_per_block));
    if (launch.grid[0] > limits.max_grid_x || launch.grid[1] > limits.max_grid_yz || launch.grid[2] > limits.max_grid_yz)
      fail(l, fmt::format("has a grid of {} x {} x {} blocks, beyond the limits", launch.grid[0], launch.grid[1], launch.grid[2]));
    // One thread's local buffers live in registers, 4 bytes each, beside what the rest of the
    // kernel needs: beyond the registers of a thread they spill to local memory.
    if (launch.local_bytes > 4 * int64_t{limits.max_registers_per_thread} / 2)
      fail(l, fmt::format("keeps {} bytes of local buffers per thread, more than half of a thread's {} registers hold",
                          launch.local_bytes, limits.max_registers_per_thread));
    for_each_stmt(launch.body, [&](const Stmt& s) {
      if (auto* f = s->as<ForNode>(); f && f->for_kind == ForKind::Parallel)
        fail(l, fmt::format("has the parallel loop '{}', which a GPU program has no form for", f->var->name));
      if (auto* a = s->as<AllocateNode>(); a && kernel.find_buffer(a->buffer)->scope == BufferScope::LocalHeap)
        fail(l, fmt::format("needs '{}' on the heap", a->buffer));
      auto* st = s->as<StoreNode>();
      if (!st || !st->across_threads) return;
      const int64_t threads = launch.block[thread_axis(st->across_threads->binding)];
      if (!limits.reduces_across(threads))
        fail(l, fmt::format("reduces '{}' across {} threads, which cannot combine values (a power of two up to {} or whole warps)",
                            st->buffer, threads, limits.warp_size));
    });
  }
}

}  // namespace ansor
