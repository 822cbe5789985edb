// The protocol by which every benchmark times ansor's kernels beside vendor libraries
// (bench/README.md): the threads' waiting behaviour, matched on both sides; thread counts set
// from one number; ours and the libraries interleaved over rounds; and which library
// implementations stand for the library's speed. Benchmarks use it through this header only, so
// that no program re-implements a part of it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ansor::bench {

// ---- Thread waiting --------------------------------------------------------------------------

// How long each runtime's idle threads spin before they sleep. ansor's pool polls with pause
// instructions, then yields, then sleeps; the protocol gives OpenMP (oneDNN's runtime here) and
// OpenBLAS's threads a spin of the same length, so that neither side pays a wake-up the other
// does not.
struct WaitPolicy {
  int ansor_pauses = 0, ansor_yields = 0;  // ansor_get_spin_wait()
  double spin_seconds = 0;                 // how long ansor's threads spin, measured on this CPU
  long gomp_spincount = 0;                 // GOMP_SPINCOUNT: libgomp's polls, one pause each
  int openblas_timeout = 0;                // OPENBLAS_THREAD_TIMEOUT: OpenBLAS spins 2^k TSC cycles (x86; 0: not set)
};

// The settings above for this CPU: ansor's spin timed, and converted into the other runtimes'
// units.
WaitPolicy matched_wait_policy();

// Puts the process under the protocol's environment and must be called first in main: the
// OpenMP and OpenBLAS runtimes read their spin settings once, when they load, so a process whose
// environment does not hold them yet sets them (and unsets OMP_WAIT_POLICY, which would
// override them) and executes itself again with the same arguments.
void enter_protocol_environment(char** argv);

// One sentence for reports: each runtime's spin as the environment sets it.
std::string wait_policy_description();

// ---- Threads ---------------------------------------------------------------------------------

// Sets the thread count of ansor's runtime and of every library this program links (oneDNN
// through OpenMP, OpenBLAS), from the one number. Libraries that size their work when it is
// prepared (oneDNN's primitives) must be prepared after this call.
void set_all_threads(int threads);

// What the thread runtimes cost around a call whose work is nothing: back to back (threads
// still spinning) and after an idle pause (threads asleep, woken by the call).
struct ParallelCallCost {
  std::string runtime;
  double back_to_back_seconds = 0, after_idle_seconds = 0;
};

// ansor's pool, and OpenMP's parallel region where the program links OpenMP, each at the
// current thread count.
std::vector<ParallelCallCost> empty_parallel_call_costs();

// ---- Timing ----------------------------------------------------------------------------------

inline constexpr int kRounds = 5;

// Median seconds of one call over calls that take at least min_seconds of wall time (and at
// least 5 calls), after one warm-up call.
double median_seconds(const std::function<void()>& call, double min_seconds = 0.5);

// Seconds over the rounds: the median of the rounds' medians, and the fastest and slowest round.
struct Spread {
  double median = 0, min = 0, max = 0;
};

// Each call timed in `rounds` rounds, interleaved: every round times every call in turn (one
// warm-up call, then calls for at least round_seconds, and their median), so that all
// of them meet the same minutes of the machine's load.
std::vector<Spread> interleaved(const std::vector<std::function<void()>>& calls, int rounds = kRounds, double round_seconds = 0.1);

// Milliseconds with three or four significant digits: "0.0123", "1.23", "12.3".
std::string format_ms(double seconds);
// "0.123 [0.120–0.131]": the median with the fastest and slowest round.
std::string format_ms(const Spread& s);

// ---- Library implementations -----------------------------------------------------------------

// The kind of library call: what "the library's own implementation" means depends on it.
enum class PrimitiveKind { Convolution, Deconvolution, Matmul, InnerProduct, Softmax, LayerNorm, Reduction, Binary, Eltwise, Blas };

// Empty when `implementation` is the library's own fast code for a primitive of this kind;
// otherwise why it is not: a reference implementation ("ref:..."), or a convolution computed
// through an explicit GEMM ("gemm:..."), which oneDNN falls back to where its direct kernels do
// not take the layouts it was given.
std::string non_native_reason(PrimitiveKind kind, std::string_view implementation);

// A library set up to compute one operator over a kernel's buffers (row-major inputs in argument
// order, the output), at the thread count set when it was prepared.
struct LibraryCall {
  // One primitive or function of the call and what the library says runs it (oneDNN's
  // impl_info_str, OpenBLAS's function and core).
  struct Part {
    PrimitiveKind kind;
    std::string implementation;
  };
  std::string library;      // "oneDNN", "OpenBLAS"
  std::vector<Part> parts;  // in the order they run
  std::string layouts;      // the layouts it chose where they are not row-major ("src aBcd16b, ..."); empty: row-major throughout
  std::function<void()> run;           // inputs and weights already in the library's layouts (reordered once when prepared)
  std::function<void()> reorders;      // the reorders a caller holding row-major tensors adds per call; empty: none
  std::function<void()> run_plain_io;  // reorders, run, and the output back in the row-major buffer; empty: `run` does that
  std::shared_ptr<void> resources;     // what the calls use (memories, reordered weights), kept alive with them

  // The call that leaves the result in the row-major output: for checking it.
  const std::function<void()>& row_major_call() const { return run_plain_io ? run_plain_io : run; }
  // The parts' implementations, joined by " + ".
  std::string implementation() const;
  // Why some part does not stand for the library's speed (non_native_reason); empty: none.
  std::string non_native() const;
};

// Prepares a library for the kernel's inputs (row-major, argument order) and output, each in the
// kernel argument's dtype (f32 as float, bf16 as its uint16_t bit pattern, i8, u8, i32, ...).
using LibraryPreparer = std::function<LibraryCall(const std::vector<const void*>& inputs, void* out)>;

// One library's row for one operator, as reports give it.
struct LibraryRow {
  std::string library, implementation, layouts;
  std::string non_native;           // why the implementation does not stand for the library's speed; empty: it does
  Spread time;                      // with its layouts, reordered once
  std::optional<Spread> plain_io;   // with the per-call reorders inside
  std::optional<Spread> reorders;   // the per-call reorders alone
  std::optional<Spread> one_thread; // at one thread
  double max_diff = 0;              // |library - ours|, largest element
  bool agrees = true;

  // The library's time, for ratios, tables and means; none for a non-native implementation,
  // whose time is not the library's speed.
  std::optional<double> reported_seconds() const;
};

// The fastest row with a reported time, or null.
const LibraryRow* best_reported(const std::vector<LibraryRow>& rows);

// The cell of a row's time in a table: the time, or "no native implementation (...)".
std::string library_cell(const LibraryRow& row);

double geomean(const std::vector<double>& values);

// ---- Ours beside the libraries ---------------------------------------------------------------

// How far a library's row-major output (in the kernel output's dtype) is from ours: the largest
// |difference|, and whether it is within the kernel's tolerance.
struct OutputCheck {
  double max_diff = 0;
  bool agrees = true;
};
using OutputChecker = std::function<OutputCheck(const void* theirs)>;

struct NamedPreparer {
  std::string library;
  LibraryPreparer prepare;
};

// Our kernel and each library, timed by the protocol.
struct Comparison {
  Spread ours;
  std::optional<Spread> ours_one_thread;
  std::vector<LibraryRow> libraries;
};

// Times `ours` (our kernel's call as deployed: const inputs packed once) beside each library at
// `threads` threads, every library prepared at that count (after set_all_threads), its output
// checked, and ours, each library's call, its plain-I/O call and its reorders interleaved over
// kRounds rounds. With one_thread, the same again at one thread (libraries prepared anew), where
// no thread waits or wakes. Leaves every runtime at `threads`.
Comparison compare_with_libraries(const std::function<void()>& ours, const std::vector<NamedPreparer>& libraries,
                                  const std::vector<const void*>& inputs, size_t output_bytes, const OutputChecker& check,
                                  int threads, bool one_thread);

}  // namespace ansor::bench
