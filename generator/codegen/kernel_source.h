// The C++ source of kernels: a kernel's functions and its descriptor (ansor_kernel_info) under
// one symbol prefix. A library has one kernel per file; the measurement builder puts several
// candidates in one file (each in its own namespace) to pay the compiler's start-up once.
#pragma once

#include <string>

#include "schedule/state.h"

namespace ansor {

// The includes every kernel file starts with.
std::string kernel_source_prelude();

// The definitions of kernel `kernel_name` scheduled by `state`: the C functions `symbol`,
// `symbol_packed`, `symbol_pack_W`, ... and `const ansor_kernel_info symbol_info`. `origin`
// says where the schedule came from (it is stored in the descriptor). Throws InvalidState.
std::string kernel_definitions(const State& state, const std::string& kernel_name, const std::string& symbol, const std::string& origin);

// Comment lines listing the steps of the schedule.
std::string steps_comment(const State& state);

}  // namespace ansor
