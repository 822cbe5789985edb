// Loop-nest printing of States.
#include "schedule/state_printer.h"

#include <fmt/format.h>

namespace ansor {

namespace {

class StatePrinter {
 public:
  explicit StatePrinter(const State& s) : s_(s) {}

  std::string run() {
    std::vector<std::string> inputs;
    for (int i = 0; i < s_.num_stages(); ++i)
      if (s_.stage(i).is_placeholder()) inputs.push_back(s_.stage(i).op->name);
    out_ = fmt::format("inputs: {}\n", fmt::join(inputs, ", "));
    for (int i = 0; i < s_.num_stages(); ++i) {
      const Stage& st = s_.stage(i);
      if (!st.is_placeholder() && st.location == ComputeLocation::Root) print_stage(i, 0);
    }
    for (int i = 0; i < s_.num_stages(); ++i)
      if (s_.stage(i).location == ComputeLocation::Inlined) out_ += fmt::format("{} is inlined\n", s_.stage(i).op->name);
    return out_;
  }

 private:
  void print_stage(int s, int indent) {
    const Stage& st = s_.stage(s);
    std::string pad(indent * 2, ' ');
    if (st.scope != MemoryScope::Global) out_ += fmt::format("{}{} in {} memory\n", pad, st.op->name, memory_scope_name(st.scope));
    // A pragma that is on or off prints as its name alone.
    for (const auto& [pragma, value] : st.pragmas) {
      if (pragma_max_value(pragma) == 1)
        out_ += fmt::format("{}{} {}\n", pad, st.op->name, pragma_name(pragma));
      else
        out_ += fmt::format("{}{} {} = {}\n", pad, st.op->name, pragma_name(pragma), value);
    }
    for (size_t p = 0; p < st.leaves.size(); ++p) {
      const Iterator& it = st.iters[st.leaves[p]];
      std::string kind = it.annotation == IterAnnotation::None ? "for" : std::string(annotation_name(it.annotation));
      std::string extent = it.extent > 0 ? std::to_string(it.extent) : "?";
      out_ += fmt::format("{}{} {} in 0..{}{}\n", pad, kind, it.name, extent, it.kind == IterKind::Spatial ? "" : it.kind == IterKind::Reduce ? "  (reduce)" : "  (mixed)");
      pad += "  ";
      for (int a = 0; a < s_.num_stages(); ++a) {
        const Stage& other = s_.stage(a);
        if (other.location == ComputeLocation::At && other.attach_stage == s && other.attach_iter == st.leaves[p])
          print_stage(a, static_cast<int>(pad.size() / 2));
      }
    }
    out_ += fmt::format("{}{} = ...\n", pad, st.op->name);
  }

  const State& s_;
  std::string out_;
};

}  // namespace

std::string state_to_string(const State& state) { return StatePrinter(state).run(); }

}  // namespace ansor
