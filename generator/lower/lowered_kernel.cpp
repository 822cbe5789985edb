// Buffer helpers.
#include "lower/lowered_kernel.h"

#include <algorithm>

namespace ansor {

int64_t Buffer::num_elements() const {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n = std::max(n, strides[d] * shape[d]);
  return n;
}

const Buffer* LoweredKernel::find_buffer(const std::string& n) const {
  for (auto& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}

const PackedLayout* LoweredKernel::find_packed(const std::string& tensor) const {
  for (auto& p : packed_inputs)
    if (p.tensor == tensor) return &p;
  return nullptr;
}

const MemoryHints* LoweredKernel::find_memory_hints(const std::string& buffer) const {
  auto it = memory_hints.find(buffer);
  return it == memory_hints.end() ? nullptr : &it->second;
}

const TensorCall* LoweredKernel::find_tensor_call(const ForNode* loop) const {
  auto it = tensor_calls.find(loop);
  return it == tensor_calls.end() ? nullptr : &it->second;
}

const VectorCopy* LoweredKernel::find_vector_copy(const ForNode* loop) const {
  auto it = vector_copies.find(loop);
  return it == vector_copies.end() ? nullptr : &it->second;
}

size_t LoweredKernel::horizontal_reduction_length(const StmtNode* store) const {
  auto it = horizontal_reductions.find(store);
  return it == horizontal_reductions.end() ? 0 : it->second;
}

int LoweredKernel::auto_unroll_max_step(const std::string& buffer) const {
  auto it = auto_unroll_max_steps.find(buffer);
  return it == auto_unroll_max_steps.end() ? 0 : it->second;
}

Expr flat_index(const Buffer& buffer, const std::vector<Expr>& indices) {
  Expr flat = int_imm(0);
  for (size_t d = 0; d < indices.size(); ++d) flat = add(flat, mul(indices[d], int_imm(buffer.strides[d])));
  return flat;
}

Expr element_offset(const Buffer& buffer, const std::vector<Expr>& indices) {
  return buffer.rotation.rotated_offset(flat_index(buffer, indices));
}

int64_t RowRotation::rotated_offset(int64_t offset) const {
  if (!rotates()) return offset;
  const int64_t r = offset / row, c = offset % row;
  return r * row + ((c / chunk + r / rows_per_step) % (row / chunk)) * chunk + c % chunk;
}

Expr RowRotation::rotated_offset(const Expr& offset) const {
  if (!rotates()) return offset;
  const Expr r = div(offset, int_imm(row)), c = mod(offset, int_imm(row));
  const Expr chunk_index = mod(add(div(c, int_imm(chunk)), div(r, int_imm(rows_per_step))), int_imm(row / chunk));
  return add(add(mul(r, int_imm(row)), mul(chunk_index, int_imm(chunk))), mod(c, int_imm(chunk)));
}

const LoweredKernel* LoweredKernel::find_packer(const std::string& tensor) const {
  const PackedLayout* layout = find_packed(tensor);
  return layout ? &packers.at(static_cast<size_t>(layout - packed_inputs.data())) : nullptr;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

}  // namespace ansor
