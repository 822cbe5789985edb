// Loop program printer.
#include "lower/stmt_printer.h"

#include <fmt/format.h>

#include "ir/printer.h"

namespace ansor {

namespace {

std::string for_prefix(const ForNode& f) {
  switch (f.for_kind) {
    case ForKind::Serial: return "for";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorize";
    case ForKind::VectorizeHint: return "vectorize_hint";
    case ForKind::Unrolled: return "unroll";
    case ForKind::Tensorized: return "tensorized";
    case ForKind::ThreadBinding: return fmt::format("bind({})", annotation_name(f.binding));
  }
  return "for";
}

void print(const Stmt& s, int indent, std::string& out) {
  std::string pad(indent * 2, ' ');
  switch (s->kind) {
    case StmtKind::For: {
      auto* f = s->as<ForNode>();
      out += fmt::format("{}{} {} in 0..{}{}:\n", pad, for_prefix(*f), f->var->name, f->extent,
                         f->masked() ? fmt::format(" masked to {}", to_string(f->active_lanes)) : "");
      print(f->body, indent + 1, out);
      break;
    }
    case StmtKind::Store: {
      auto* st = s->as<StoreNode>();
      std::string idx;
      for (size_t i = 0; i < st->indices.size(); ++i) idx += (i ? ", " : "") + to_string(st->indices[i]);
      if (st->across_threads) {
        out += fmt::format("{}{}[{}] = {}_across_threads({}, {})\n", pad, st->buffer, idx, reduce_op_name(st->across_threads->op),
                           st->across_threads->thread->name, to_string(st->value));
        break;
      }
      out += fmt::format("{}{}[{}] = {}\n", pad, st->buffer, idx, to_string(st->value));
      break;
    }
    case StmtKind::Allocate: {
      auto* a = s->as<AllocateNode>();
      out += fmt::format("{}allocate {}:\n", pad, a->buffer);
      print(a->body, indent + 1, out);
      break;
    }
    case StmtKind::IfThenElse: {
      auto* i = s->as<IfThenElseNode>();
      out += fmt::format("{}if {}:\n", pad, to_string(i->cond));
      print(i->then_case, indent + 1, out);
      if (i->else_case) {
        out += pad + "else:\n";
        print(i->else_case, indent + 1, out);
      }
      break;
    }
    case StmtKind::Seq:
      for (auto& x : s->as<SeqNode>()->stmts) print(x, indent, out);
      break;
    case StmtKind::Barrier: out += pad + "sync_threads()\n"; break;
  }
}

std::string scope_name(BufferScope s) {
  switch (s) {
    case BufferScope::Param: return "param";
    case BufferScope::Workspace: return "workspace";
    case BufferScope::Local: return "local";
    case BufferScope::LocalHeap: return "local_heap";
    case BufferScope::Shared: return "shared";
  }
  return "?";
}

}  // namespace

std::string to_string(const Stmt& s, int indent) {
  std::string out;
  print(s, indent, out);
  return out;
}

std::string to_string(const LoweredKernel& k) {
  std::string out = fmt::format("kernel {}:\n", k.name);
  for (auto& b : k.buffers)
    out += fmt::format("  buffer {} {}{} {}{}{}{}\n", b.name, dtype_name(b.dtype), fmt::format("[{}]", fmt::join(b.shape, ", ")),
                       scope_name(b.scope), b.is_output ? " output" : "",
                       b.strides == row_major_strides(b.shape) ? "" : fmt::format(" strides [{}]", fmt::join(b.strides, ", ")),
                       b.rotation.rotates() ? fmt::format(" rows rotated by {} every {}", b.rotation.chunk, b.rotation.rows_per_step) : "");
  for (auto& [buffer, hints] : k.memory_hints) {
    if (hints.prefetch_bytes > 0 && !hints.prefetched.empty())
      out += fmt::format("  stores of {} prefetch {} {} bytes ahead\n", buffer, fmt::join(hints.prefetched, ", "), hints.prefetch_bytes);
    if (hints.stream_stores) out += fmt::format("  stores of {} stream past the caches\n", buffer);
  }
  out += to_string(k.body, 1);
  return out;
}

}  // namespace ansor
