// Collects the operations of one kernel while its statements are analysed: unique names for
// intermediates, lookup of the tensors defined so far.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dag/operation.h"

namespace ansor {

// Tensors larger than this are rejected so that index arithmetic cannot overflow; integer
// arguments of built-ins are bounded by it too, so that shape arithmetic on them cannot.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// Whether a shape of positive extents has at most kMaxElements elements.
bool within_size_limit(const std::vector<int64_t>& shape);

// A tensor defined so far, as statements and built-ins see it.
struct TensorRef {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int rank() const { return static_cast<int>(shape.size()); }
};

class GraphBuilder {
 public:
  const TensorRef* lookup(const std::string& name) const;
  TensorRef add_placeholder(const std::string& name, DType dtype, std::vector<int64_t> shape, bool is_const);
  // A reduction over f16 or bf16 becomes an f32 reduction `<name>.acc` and a conversion.
  TensorRef add_compute(const std::string& name, std::vector<IterVar> axes, Expr body);
  // `base` if unused, else base.1, base.2, ...
  std::string unique_name(const std::string& base) const;
  // Gives the most recently added operation a new name; valid because nothing reads it yet.
  TensorRef rename_last(const std::string& new_name);
  const std::string& last_name() const;
  size_t num_ops() const { return ops_.size(); }
  bool has_compute() const;
  std::vector<OpPtr> ops() const { return ops_; }

 private:
  std::vector<OpPtr> ops_;
  std::map<std::string, TensorRef> tensors_;
};

// Fresh axes [0, shape[d]) named prefix0, prefix1, ...
std::vector<IterVar> make_axes(const std::vector<int64_t>& shape, const std::string& prefix = "i");
Expr load_tensor(const TensorRef& t, std::vector<Expr> indices);

}  // namespace ansor
