// Builds ComputeDAGs for tests directly through the dag/ and ir/ APIs, so that the tests of the
// layers below the front end (schedule, lower, sampler, features, codegen, ...) need no
// kernels.def parser. Operations are appended in order; bodies are simplified over their axes'
// ranges as the front end does, so that a DAG built here has the structure the parser gives the
// same kernel.
//
//   auto dag = test::DagBuilder().input("A", {48, 32}).constant("B", {32, 40}).matmul("C", "A", "B").build();
//
// tests/unit/lang/dag_builder_test.cpp checks that the builder's DAGs are the parser's.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dag/compute_dag.h"
#include "ir/arith.h"

namespace ansor::test {

class DagBuilder {
 public:
  // The values at one point of an operation's domain: its axes' variables, as expressions.
  using Indices = std::vector<Expr>;

  // A kernel argument, `input` or `const`.
  DagBuilder& input(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::F32) {
    ops_.push_back(make_placeholder(name, dtype, std::move(shape), false));
    return *this;
  }
  DagBuilder& constant(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::F32) {
    ops_.push_back(make_placeholder(name, dtype, std::move(shape), true));
    return *this;
  }

  // name[axes] = body(axes); axes named i0, i1, ... as the built-ins name theirs, unless given.
  DagBuilder& compute(const std::string& name, const std::vector<int64_t>& shape, const std::function<Expr(const Indices&)>& body,
                      const std::vector<std::string>& axis_names = {}) {
    std::vector<IterVar> axes = make_axes(shape, axis_names);
    return append(name, axes, body(axis_exprs(axes)));
  }

  // name[axes] = the sum over the reduce axes of body(axes, reduce axes); reduce axes named k0,
  // k1, ... unless given.
  DagBuilder& sum(const std::string& name, const std::vector<int64_t>& shape, const std::vector<int64_t>& reduce_shape,
                  const std::function<Expr(const Indices&, const Indices&)>& body, const std::vector<std::string>& axis_names = {},
                  const std::vector<std::string>& reduce_names = {}) {
    std::vector<IterVar> axes = make_axes(shape, axis_names);
    std::vector<IterVar> reduce_axes = make_axes(reduce_shape, reduce_names, "k");
    return append(name, axes, reduce(ReduceOp::Sum, reduce_axes, body(axis_exprs(axes), axis_exprs(reduce_axes))));
  }

  // name = matmul(a, b): name[i0, i1] = sum(k, a[i0, k] * b[k, i1]).
  DagBuilder& matmul(const std::string& name, const std::string& a, const std::string& b) {
    const Operation &x = op(a), &y = op(b);
    return sum(
        name, {x.shape[0], y.shape[1]}, {x.shape[1]},
        [&](const Indices& i, const Indices& k) { return mul(at(a, {i[0], k[0]}), at(b, {k[0], i[1]})); }, {}, {"k"});
  }

  // name = a + b elementwise (same shapes).
  DagBuilder& add(const std::string& name, const std::string& a, const std::string& b) {
    return compute(name, op(a).shape, [&](const Indices& i) { return ansor::add(at(a, i), at(b, i)); });
  }

  // name = in + value elementwise.
  DagBuilder& add_scalar(const std::string& name, const std::string& in, double value) {
    DType t = op(in).dtype;
    return compute(name, op(in).shape, [&](const Indices& i) { return ansor::add(at(in, i), make_const(t, value)); });
  }

  // name = relu(in) elementwise.
  DagBuilder& relu(const std::string& name, const std::string& in) {
    return compute(name, op(in).shape, [&](const Indices& i) { return call(MathFn::Relu, {at(in, i)}); });
  }

  // name = `in` with its last two dimensions padded by `amount` zeros on each side.
  DagBuilder& pad2d(const std::string& name, const std::string& in, int64_t amount) {
    const Operation& x = op(in);
    std::vector<int64_t> shape = x.shape;
    const size_t rank = shape.size();
    for (size_t d = rank - 2; d < rank; ++d) shape[d] += 2 * amount;
    return compute(name, shape, [&](const Indices& i) {
      Indices inner = i;
      Expr inside = bool_imm(true);
      for (size_t d = rank - 2; d < rank; ++d) {
        inside = logical_and(logical_and(inside, ge(i[d], int_imm(amount))), lt(i[d], int_imm(amount + x.shape[d])));
        inner[d] = sub(i[d], int_imm(amount));
      }
      return select(inside, at(in, inner), make_const(x.dtype, 0));
    });
  }

  // name[i0, i1, i2, i3] = sum(rc, ry, rx, in[i0, rc, i2 + ry, i3 + rx] * w[i1, rc, ry, rx]): a
  // convolution NCHW/OIHW of stride 1 over `in` as it is (pad it first with pad2d).
  DagBuilder& conv2d(const std::string& name, const std::string& in, const std::string& w) {
    const Operation &x = op(in), &k = op(w);
    std::vector<int64_t> shape = {x.shape[0], k.shape[0], x.shape[2] - k.shape[2] + 1, x.shape[3] - k.shape[3] + 1};
    return sum(
        name, shape, {k.shape[1], k.shape[2], k.shape[3]},
        [&](const Indices& o, const Indices& r) {
          return mul(at(in, {o[0], r[0], ansor::add(o[2], r[1]), ansor::add(o[3], r[2])}), at(w, {o[1], r[0], r[1], r[2]}));
        },
        {}, {"rc", "ry", "rx"});
  }

  // A load of an operation already added.
  Expr at(const std::string& tensor, const Indices& indices) const { return load(tensor, op(tensor).dtype, indices); }

  const Operation& op(const std::string& name) const {
    for (const OpPtr& o : ops_)
      if (o->name == name) return *o;
    throw std::invalid_argument("DagBuilder: no operation named " + name);
  }

  std::shared_ptr<const ComputeDAG> build() const { return std::make_shared<const ComputeDAG>(ops_); }

 private:
  static std::vector<IterVar> make_axes(const std::vector<int64_t>& shape, const std::vector<std::string>& names,
                                        const std::string& prefix = "i") {
    std::vector<IterVar> axes;
    for (size_t d = 0; d < shape.size(); ++d) axes.push_back({make_var(d < names.size() ? names[d] : prefix + std::to_string(d)), shape[d]});
    return axes;
  }

  DagBuilder& append(const std::string& name, const std::vector<IterVar>& axes, const Expr& body) {
    RangeMap ranges;
    for (const IterVar& ax : axes) ranges[ax.var.get()] = Interval::range(ax.extent);
    if (const auto* r = body->as<ReduceNode>())
      for (const IterVar& ax : r->axes) ranges[ax.var.get()] = Interval::range(ax.extent);
    ops_.push_back(make_compute(name, axes, simplify(body, ranges)));
    return *this;
  }

  std::vector<OpPtr> ops_;
};

}  // namespace ansor::test
