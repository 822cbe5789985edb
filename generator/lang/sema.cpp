// Semantic analysis of kernels.def: statements and kernels into ComputeDAGs.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "lang/expr_analyzer.h"
#include "lang/parser.h"
#include "lang/program.h"

namespace ansor {

namespace {

class KernelAnalyzer {
 public:
  KernelAnalyzer(const std::map<std::string, LetConstant>& globals, const AstKernel& k)
      : kernel_(k), scope_(globals, builder_), exprs_(scope_, builder_) {}

  Kernel run() {
    Kernel out;
    out.name = kernel_.name;
    out.loc = kernel_.loc;
    out.attrs = read_attrs();
    if (kernel_.body.empty()) throw CompileError(kernel_.loc, fmt::format("kernel '{}' is empty", kernel_.name));
    for (const AstStmt& s : kernel_.body) std::visit([&](const auto& stmt) { analyze(stmt); }, s);
    if (!builder_.has_compute())
      throw CompileError(kernel_.loc, fmt::format("kernel '{}' defines no tensors; it needs at least one computed output", kernel_.name));
    out.dag = ComputeDAG(builder_.ops());
    return out;
  }

 private:
  KernelAttrs read_attrs() {
    KernelAttrs attrs;
    std::set<std::string> seen;
    for (const AstAttr& a : kernel_.attrs) {
      if (!seen.insert(a.name).second) throw CompileError(a.loc, fmt::format("attribute '{}' given twice", a.name));
      bool number = a.kind == AstAttr::Kind::Int || a.kind == AstAttr::Kind::Float;
      if (a.name == "weight") {
        if (!number || a.float_value <= 0) throw CompileError(a.value_loc, "'weight' must be a positive number");
        attrs.weight = a.float_value;
      } else if (a.name == "trials") {
        if (a.kind != AstAttr::Kind::Int) throw CompileError(a.value_loc, "'trials' must be a non-negative integer");
        attrs.trials = a.int_value;
      } else if (a.name == "target") {
        if (number || a.text.empty()) throw CompileError(a.value_loc, "'target' must be host, cuda or a target string");
        attrs.target = a.text;
      } else {
        throw CompileError(a.loc, fmt::format("unknown attribute '{}' (expected weight, trials or target)", a.name));
      }
    }
    return attrs;
  }

  void analyze(const AstLet& let) {
    scope_.check_new_name(let.name, let.loc, "constant");
    scope_.add_let(let.name, {exprs_.eval_int(*let.value, fmt::format("the value of '{}'", let.name)), let.loc});
  }

  void analyze(const AstDecl& d) {
    scope_.check_new_name(d.name, d.loc, "tensor");
    std::optional<DType> dtype = parse_dtype(d.dtype);
    if (!dtype)
      throw CompileError(d.dtype_loc, fmt::format("unknown dtype '{}' (expected f32, f64, f16, bf16, i8, i16, i32, i64, u8 or bool)", d.dtype));
    std::vector<int64_t> shape;
    for (auto& e : d.shape) shape.push_back(extent(*e, fmt::format("an extent of '{}'", d.name)));
    check_size(shape, d.loc, d.name);
    scope_.add_tensor_loc(d.name, d.loc);
    builder_.add_placeholder(d.name, *dtype, std::move(shape), d.is_const);
  }

  void analyze(const AstIndexDef& def) {
    scope_.check_new_name(def.name, def.loc, "tensor");
    std::vector<IterVar> axes;
    for (const AstAxis& a : def.axes) {
      scope_.check_new_name(a.name, a.loc, "index variable");
      IterVar v{make_var(a.name), extent(*a.extent, fmt::format("the extent of '{}'", a.name))};
      scope_.push_index_var(a.name, v, a.loc);
      axes.push_back(v);
    }
    std::vector<int64_t> shape;
    for (auto& ax : axes) shape.push_back(ax.extent);
    check_size(shape, def.loc, def.name);
    TypedValue value = finalize(exprs_.eval_index_form(*def.value, def.name));
    scope_.clear_index_vars();
    scope_.add_tensor_loc(def.name, def.loc);
    builder_.add_compute(def.name, std::move(axes), value.expr);
  }

  void analyze(const AstTensorDef& def) {
    scope_.check_new_name(def.name, def.loc, "tensor");
    size_t before = builder_.num_ops();
    Operand result = exprs_.eval_tensor_form(*def.value, def.name);
    if (!result.is_tensor)
      throw CompileError(def.value->loc, fmt::format("the right side of '{}' is a scalar; tensor form needs a tensor operand", def.name));
    scope_.add_tensor_loc(def.name, def.loc);
    if (builder_.num_ops() > before && builder_.last_name() == result.tensor.name) {
      builder_.rename_last(def.name);
      return;
    }
    // The result is an existing tensor (`Y = X`): copy it.
    auto axes = make_axes(result.tensor.shape);
    builder_.add_compute(def.name, axes, load_tensor(result.tensor, axis_exprs(axes)));
  }

  int64_t extent(const AstExpr& e, const std::string& what) {
    int64_t v = exprs_.eval_int(e, what);
    if (v < 1) throw CompileError(e.loc, fmt::format("{} must be positive, given {}", what, v));
    return v;
  }

  void check_size(const std::vector<int64_t>& shape, const SourceLoc& loc, const std::string& name) {
    if (!within_size_limit(shape)) throw CompileError(loc, fmt::format("tensor '{}' is too large (more than 2^40 elements)", name));
  }

  const AstKernel& kernel_;
  GraphBuilder builder_;
  Scope scope_;
  ExprAnalyzer exprs_;
};

// The `let` constants a fragment needs, then the kernel's own text.
std::string make_fragment(const std::vector<std::pair<std::string, int64_t>>& lets, const SourceFile& file, const AstKernel& k) {
  std::string text;
  for (auto& [name, value] : lets) {
    // The lexer reads no negative literals, and INT64_MIN has no positive counterpart.
    if (value == INT64_MIN) {
      text += fmt::format("let {} = -{} - 1\n", name, INT64_MAX);
    } else {
      text += fmt::format("let {} = {}\n", name, value);
    }
  }
  text += file.text.substr(k.begin_offset, k.end_offset - k.begin_offset);
  text += "\n";
  return text;
}

Network analyze_network(const AstNetwork& n, const std::map<std::string, SourceLoc>& kernels) {
  Network out{n.name, n.loc, {}, std::nullopt, std::nullopt};
  std::set<std::string> seen;
  for (const AstAttr& a : n.attrs) {
    if (!seen.insert(a.name).second) throw CompileError(a.loc, fmt::format("attribute '{}' given twice", a.name));
    bool number = a.kind == AstAttr::Kind::Int || a.kind == AstAttr::Kind::Float;
    if (a.name != "latency_ms" && a.name != "reference_ms")
      throw CompileError(a.loc, fmt::format("unknown network attribute '{}' (expected latency_ms or reference_ms)", a.name));
    if (!number || !(a.float_value > 0)) throw CompileError(a.value_loc, fmt::format("'{}' must be a positive number of milliseconds", a.name));
    (a.name == "latency_ms" ? out.latency_ms : out.reference_ms) = a.float_value;
  }
  if (n.members.empty()) throw CompileError(n.loc, fmt::format("network '{}' names no kernels", n.name));
  std::map<std::string, SourceLoc> members;
  for (const AstNetworkMember& m : n.members) {
    if (!kernels.count(m.kernel)) throw CompileError(m.loc, fmt::format("unknown kernel '{}' in network '{}'", m.kernel, n.name));
    if (auto [it, fresh] = members.emplace(m.kernel, m.loc); !fresh)
      throw CompileError(m.loc, fmt::format("kernel '{}' is listed twice in network '{}' (first at line {}); give it a count: {} * N", m.kernel,
                                            n.name, it->second.line, m.kernel));
    if (!(m.count > 0) || !std::isfinite(m.count))
      throw CompileError(m.count_loc, fmt::format("'{}' must run a positive number of times in network '{}'", m.kernel, n.name));
    out.members.push_back({m.kernel, m.count});
  }
  return out;
}

}  // namespace

const Kernel* Program::find(const std::string& name) const {
  for (auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

Program load_program(const std::shared_ptr<const SourceFile>& file) {
  AstFile ast = parse_file(file);
  Program program;
  program.source = file;
  std::map<std::string, LetConstant> globals;
  std::vector<std::pair<std::string, int64_t>> let_order;
  std::map<std::string, SourceLoc> kernel_locs;
  GraphBuilder no_tensors;
  std::vector<const AstNetwork*> networks;
  for (const AstItem& item : ast.items) {
    if (auto* network = std::get_if<AstNetwork>(&item)) {
      networks.push_back(network);  // after every kernel is known: a network may name later ones
      continue;
    }
    if (auto* let = std::get_if<AstLet>(&item)) {
      Scope scope(globals, no_tensors);
      scope.check_new_name(let->name, let->loc, "constant");
      ExprAnalyzer exprs(scope, no_tensors);
      int64_t v = exprs.eval_int(*let->value, fmt::format("the value of '{}'", let->name));
      globals[let->name] = {v, let->loc};
      let_order.emplace_back(let->name, v);
      continue;
    }
    const AstKernel& k = std::get<AstKernel>(item);
    if (auto it = kernel_locs.find(k.name); it != kernel_locs.end())
      throw CompileError(k.loc, fmt::format("duplicate kernel '{}' (first defined at line {})", k.name, it->second.line));
    kernel_locs[k.name] = k.loc;
    Kernel kernel = KernelAnalyzer(globals, k).run();
    kernel.fragment = make_fragment(let_order, *file, k);
    program.kernels.push_back(std::move(kernel));
  }
  std::map<std::string, SourceLoc> network_locs;
  for (const AstNetwork* n : networks) {
    if (auto [it, fresh] = network_locs.emplace(n->name, n->loc); !fresh)
      throw CompileError(n->loc, fmt::format("duplicate network '{}' (first defined at line {})", n->name, it->second.line));
    program.networks.push_back(analyze_network(*n, kernel_locs));
  }
  return program;
}

Program load_program_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CompileError(SourceLoc{}, fmt::format("cannot read '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  auto file = std::make_shared<SourceFile>();
  file->path = path;
  file->text = text.str();
  return load_program(file);
}

}  // namespace ansor
