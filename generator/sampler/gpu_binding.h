// GPU thread binding: which loops of a program whose tiles are chosen run on blocks, virtual
// threads and threads. Random annotation and the default schedule bind alike and differ only in
// the thread counts they pick.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "schedule/state.h"

namespace ansor {

// The choices a binding leaves open: the threads of a block for a stage of `extent` iterations,
// and the lanes of the vector loads of a cooperative fetch of `extent` elements over `threads`
// threads (1: scalar loads), in elements of kFetchLaneBytes (a fetch of narrower elements takes
// as many more lanes as move the same bytes).
inline constexpr int kFetchLaneBytes = 4;

struct GpuBindingChoices {
  std::function<int64_t(int64_t extent)> threads_for;
  std::function<int64_t(int64_t extent, int64_t threads)> fetch_lanes_for;
};

// Binds every computed stage, consumers first:
// - a tiled stage (SSSRRSRS): its first spatial level on blocks, the second on virtual threads,
//   the third on threads, each level's loops fused;
// - a reduction across threads (the GPU rfactor sketch): its spatial loops fused on blocks, its
//   reduction loop on threadIdx.x;
// - a shared-memory copy computed inside a block: its loops fused and spread over the threads
//   of that block (cooperative fetch), each thread loading `fetch_lanes_for` consecutive
//   elements as one vector;
// - any other stage with spatial loops: those fused and split into blocks of the number of
//   threads `threads_for` picks for the fused extent.
// Steps that do not apply are skipped; the program stays valid.
void bind_gpu_threads(State& s, const GpuBindingChoices& choices);

// The position of the reduction loop of `stage` that its threads share, -1 when the stage is no
// reduction across threads: a root reduction whose loops are its spatial loops then one
// reduction loop, inside which its partial stage (rfactor) is computed.
int cross_thread_reduction_loop(const State& s, int stage);

// Whether step k of a sketch is the split whose inner part a GPU rfactor factors out: its
// length is a thread count (reduction_thread_counts), not a tile size.
bool is_cross_thread_split(const std::vector<StepPtr>& steps, size_t k);

}  // namespace ansor
