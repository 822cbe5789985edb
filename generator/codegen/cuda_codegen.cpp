// The CUDA emitter.
#include "codegen/cuda_codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "codegen/c_emitter.h"

namespace ansor {

namespace {

const char* reduction_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "Sum";
    case ReduceOp::Prod: return "Prod";
    case ReduceOp::Min: return "Min";
    case ReduceOp::Max: return "Max";
  }
  return "Sum";
}

const char* const kThreadIndex[3] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
const char* const kBlockIndex[3] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};

class CudaEmitter final : public CEmitter {
 public:
  explicit CudaEmitter(const LoweredKernel& k) : CEmitter(k) {
    if (k.launches.empty())
      throw std::invalid_argument(fmt::format("the CUDA code generator cannot print '{}': it was not lowered for a GPU target", k.name));
  }

  // The kernel's `__global__` functions `prefix_grid_N` and `static int prefix_launch(params...,
  // cudaStream_t)`, which queues them on the stream.
  std::string run(const std::vector<ParamDecl>& params, const std::string& prefix) {
    name_buffers(params);
    for (const Buffer& b : kernel_.buffers)
      if (b.scope == BufferScope::Workspace) workspace_.push_back(&b);
    std::vector<std::string> device_params, args;
    for (size_t i = 0; i < params.size(); ++i) {
      const ParamDecl& p = params[i];
      device_params.push_back(fmt::format("{}{}* __restrict__ {}", p.is_output ? "" : "const ", dtype_c_type(p.dtype), p.name));
      args.push_back(p.name);
    }
    for (const Buffer* b : workspace_) {
      device_params.push_back(fmt::format("{}* __restrict__ {}", dtype_c_type(b->dtype), buffer_name(b->name)));
      args.push_back(buffer_name(b->name));
    }
    for (size_t l = 0; l < kernel_.launches.size(); ++l) emit_grid(kernel_.launches[l], fmt::format("{}_grid_{}", prefix, l), device_params);
    emit_launcher(params, prefix, args);
    return out_;
  }

 private:
  std::string float_math_text(MathFn fn, DType t, const std::string& args) const override {
    // CUDA's C math functions: expf for floats (f16 and bf16 computed in float), exp for doubles.
    return fmt::format("{}{}({})", fn == MathFn::Abs ? "fabs" : math_fn_name(fn), t == DType::F64 ? "" : "f", args);
  }

  std::string min_max_text(bool is_min, const std::string& type, const std::string& x, const std::string& y) const override {
    return fmt::format("ansor_rt::{}<{}>({}, {})", is_min ? "min_of" : "max_of", type, x, y);
  }

  std::string special_float_text(const std::string& what, const std::string& type) const override {
    return fmt::format("ansor_rt::{}<{}>()", what == "nan" ? "quiet_nan" : "infinity", type);
  }

  // A launch with aligned variants is a template over whether every argument is 16-byte
  // aligned (the launcher checks).
  void emit_grid(const GpuLaunch& launch, const std::string& name, const std::vector<std::string>& device_params) {
    launch_ = &launch;
    out_ += fmt::format("{}__global__ void __launch_bounds__({}) {}({}) {{\n", launch.aligned_variants ? "template <bool ansor_aligned>\n" : "",
                        launch.threads(), name, fmt::join(device_params, ", "));
    indent_ = 1;
    if (!launch.shared.empty()) line("ANSOR_DYNAMIC_SHARED_MEMORY(ansor_shared);");
    for (const SharedPlacement& p : launch.shared) {
      std::string type(dtype_c_type(buffer(p.buffer).dtype));
      line(fmt::format("{}* {} = reinterpret_cast<{}*>(ansor_shared + {});", type, buffer_name(p.buffer), type, p.offset));
    }
    for (const ForNode* f : launch.block_loops) {
      ranges_[f->var.get()] = Interval::range(f->extent);
      line(fmt::format("[[maybe_unused]] const {} {} = {};", index_type_, var_name(f->var.get()), kBlockIndex[block_axis(f->binding)]));
    }
    stmt(launch.body);
    out_ += "}\n\n";
  }

  // A vector copy (lowering chose it): one vector load and store, aligned to the vector (always
  // for shared memory and workspace, for kernel arguments in the launch's aligned variant).
  void emit_vector_copy(const ForNode& f, const VectorCopy& copy) {
    const StoreNode& st = *f.body->as<StoreNode>();
    auto* select = st.value->as<SelectNode>();
    const LoadNode& load = *(copy.copies_if ? select->true_value : st.value)->as<LoadNode>();
    const Buffer& to = buffer(st.buffer);
    const Buffer& from = buffer(load.tensor);
    const VarNode* lane = f.var.get();
    const Expr to_first = simplify(substitute(flat_expr(to, st.indices), {{lane, int_imm(0)}}), ranges_);
    const Expr from_first = simplify(substitute(flat_expr(from, load.indices), {{lane, int_imm(0)}}), ranges_);
    const std::string aligned = copy.of_arguments ? "ansor_aligned" : "true";
    if (copy.copies_if) {
      line(fmt::format("ansor_rt::copy_vector_or_zero<{}, {}>(&{}[{}], &{}[{}], {});", copy.lanes, aligned, buffer_name(to.name),
                       index_expr(to_first), buffer_name(from.name), index_expr(from_first), expr(copy.copies_if)));
      return;
    }
    line(fmt::format("ansor_rt::copy_vector<{}, {}>(&{}[{}], &{}[{}]);", copy.lanes, aligned, buffer_name(to.name), index_expr(to_first),
                     buffer_name(from.name), index_expr(from_first)));
  }

  static int block_axis(IterAnnotation a) { return a == IterAnnotation::BlockY ? 1 : a == IterAnnotation::BlockZ ? 2 : 0; }

  void emit_launcher(const std::vector<ParamDecl>& params, const std::string& prefix, const std::vector<std::string>& args) {
    out_ += fmt::format("static {} {{\n", c_prototype(params, prefix + "_launch", false, "cudaStream_t ansor_stream"));
    indent_ = 1;
    line("cudaError_t ansor_error = cudaSuccess;");
    if (!workspace_.empty()) {
      // All root intermediates share one block, carved at 256-byte boundaries.
      int64_t offset = 0;
      std::vector<int64_t> offsets;
      for (const Buffer* b : workspace_) {
        offsets.push_back(offset);
        offset += (b->num_elements() * dtype_bytes(b->dtype) + 255) / 256 * 256;
      }
      line("ansor_rt::DeviceWorkspace ansor_workspace_owner(ansor_stream);");
      line("char* ansor_workspace = nullptr;");
      line(fmt::format("ansor_error = ansor_workspace_owner.alloc({}, &ansor_workspace);", offset));
      line("if (ansor_error != cudaSuccess) return ansor_rt::status_of(ansor_error);");
      for (size_t i = 0; i < workspace_.size(); ++i) {
        std::string type(dtype_c_type(workspace_[i]->dtype));
        line(fmt::format("{}* {} = reinterpret_cast<{}*>(ansor_workspace + {});", type, buffer_name(workspace_[i]->name), type, offsets[i]));
      }
    }
    const std::vector<GpuLaunch>& launches = kernel_.launches;
    if (std::any_of(launches.begin(), launches.end(), [](const GpuLaunch& l) { return l.aligned_variants; }))
      line(fmt::format("const bool ansor_aligned = ansor_rt::aligned_to_vectors({});", fmt::join(params_of(params), ", ")));
    for (size_t l = 0; l < launches.size(); ++l) {
      const GpuLaunch& launch = launches[l];
      const std::string grid = fmt::format("{}_grid_{}", prefix, l);
      std::vector<std::string> instances = {grid};
      if (launch.aligned_variants) instances = {grid + "<true>", grid + "<false>"};
      for (const std::string& instance : instances) {
        if (!launch.shared_opt_in) break;
        line(fmt::format("ansor_error = cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, {});", instance,
                         launch.shared_bytes));
        line("if (ansor_error != cudaSuccess) return ansor_rt::status_of(ansor_error);");
      }
      const std::string configuration =
          fmt::format("dim3({}), dim3({}), {}, ansor_stream, {}", fmt::join(launch.grid, ", "), fmt::join(launch.block, ", "), launch.shared_bytes,
                      fmt::join(args, ", "));
      const std::string kernel = launch.aligned_variants ? fmt::format("ansor_aligned ? {} : {}", instances[0], instances[1]) : grid;
      line(fmt::format("ansor_error = ansor_rt::launch({}, {});", kernel, configuration));
      line("if (ansor_error != cudaSuccess) return ansor_rt::status_of(ansor_error);");
    }
    line("return 0;");
    out_ += "}\n";
  }

  void stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: emit_for(*s->as<ForNode>()); break;
      case StmtKind::Store: emit_store(*s->as<StoreNode>()); break;
      case StmtKind::Allocate: emit_allocate(*s->as<AllocateNode>()); break;
      case StmtKind::IfThenElse: emit_if(*s->as<IfThenElseNode>(), [this](const Stmt& x) { stmt(x); }); break;
      case StmtKind::Seq:
        for (const Stmt& x : s->as<SeqNode>()->stmts) stmt(x);
        break;
      case StmtKind::Barrier: line("__syncthreads();"); break;
    }
  }

  void emit_for(const ForNode& f) {
    ranges_[f.var.get()] = Interval::range(f.extent);
    const std::string v = var_name(f.var.get());
    if (f.for_kind == ForKind::ThreadBinding && f.binding != IterAnnotation::VThread) {
      // A loop bound to a GPU index does not iterate: each thread (block) takes its own index,
      // and those beyond the loop's extent skip it.
      const int axis = thread_axis(f.binding);
      const bool guarded = launch_->guards(&f);
      line("{");
      ++indent_;
      line(fmt::format("[[maybe_unused]] const {} {} = {};", index_type_, v, axis < 0 ? kBlockIndex[block_axis(f.binding)] : kThreadIndex[axis]));
      if (guarded) {
        line(fmt::format("if ({} < {}) {{", v, f.extent));
        ++indent_;
      }
      stmt(f.body);
      if (guarded) {
        --indent_;
        line("}");
      }
      --indent_;
      line("}");
      return;
    }
    if (const VectorCopy* copy = kernel_.find_vector_copy(&f)) {
      emit_vector_copy(f, *copy);
      return;
    }
    if (const TensorCall* call = kernel_.find_tensor_call(&f)) {
      emit_tensor_call(*call);
      return;
    }
    switch (f.for_kind) {
      case ForKind::Parallel:
        throw std::invalid_argument(fmt::format("the CUDA code generator cannot run loop '{}' in parallel: GPU programs bind loops to blocks and threads",
                                                f.var->name));
      case ForKind::Unrolled:
      case ForKind::Vectorized:
      case ForKind::ThreadBinding: line("#pragma unroll"); break;  // a virtual thread: unrolled into each thread
      case ForKind::Tensorized:  // no intrinsic of the target computes it: the loops as they are
      case ForKind::VectorizeHint:
      case ForKind::Serial: break;
    }
    // A masked vector loop runs its active lanes (a GPU thread has no vector masks).
    const std::string bound = f.masked() ? index_expr(f.active_lanes) : std::to_string(f.extent);
    line(fmt::format("for ({0} {1} = 0; {1} < {2}; ++{1}) {{", index_type_, v, bound));
    ++indent_;
    stmt(f.body);
    --indent_;
    line("}");
  }

  void emit_store(const StoreNode& s) {
    const Buffer& b = buffer(s.buffer);
    if (!s.across_threads) {
      line(store_statement(s));
      return;
    }
    // Every thread of the loop gets the combined value; the first stores it, or, into a local
    // buffer (a row's result kept for the rest of the block), every thread keeps its copy.
    const ThreadReduction& r = *s.across_threads;
    line("{");
    ++indent_;
    line(fmt::format("const {} ansor_combined = ansor_rt::reduce_across_threads<ansor_rt::Reduction::{}, {}>({}({}));",
                     compute_type(b.dtype), reduction_name(r.op), launch_->block[thread_axis(r.binding)], compute_type(b.dtype), expr(s.value)));
    if (b.scope == BufferScope::Local)
      line(store_text(b, s.indices, "ansor_combined"));
    else
      line(fmt::format("if ({} == 0) {}", var_name(r.thread.get()), store_text(b, s.indices, "ansor_combined")));
    --indent_;
    line("}");
  }

  void emit_allocate(const AllocateNode& a) {
    const Buffer& b = buffer(a.buffer);
    switch (b.scope) {
      case BufferScope::Shared: stmt(a.body); return;  // carved out of the block's shared memory at the top
      case BufferScope::Local:
        line("{");
        ++indent_;
        line(fmt::format("{} {}[{}];", dtype_c_type(b.dtype), buffer_name(b.name), b.num_elements()));
        stmt(a.body);
        --indent_;
        line("}");
        return;
      default:
        throw std::invalid_argument(fmt::format("the CUDA code generator cannot allocate '{}' per thread: it is too large for a GPU thread", b.name));
    }
  }

  static std::vector<std::string> params_of(const std::vector<ParamDecl>& params) {
    std::vector<std::string> names;
    for (const ParamDecl& p : params) names.push_back(p.name);
    return names;
  }

  const GpuLaunch* launch_ = nullptr;  // the one being printed
  std::vector<const Buffer*> workspace_;
};

}  // namespace

std::string emit_cuda_kernel(const LoweredKernel& kernel, const std::vector<ParamDecl>& params, const std::string& symbol) {
  std::string out = CudaEmitter(kernel).run(params, "ansor_kernel");
  std::vector<std::string> plain_args, packed_setup;
  int64_t packed_bytes = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamDecl& p = params[i];
    plain_args.push_back(p.name);
    if (!p.is_const) continue;
    const std::string type(dtype_c_type(p.dtype));
    const auto [pack_symbol, pack_params, packer, elements] = packed_param(kernel, p, symbol);
    out += "\n";
    if (packer) {
      const std::string launch = "ansor_pack_" + p.name;
      out += CudaEmitter(*packer).run(pack_params, launch);
      out += fmt::format("\nextern \"C\" {} {{\n  return ansor_rt::synchronized({}_launch({}, {}_packed, 0), 0);\n}}\n",
                         c_prototype(pack_params, pack_symbol, true), launch, p.name, p.name);
      packed_setup.push_back(fmt::format("  {0}* {1}_packed = reinterpret_cast<{0}*>(ansor_packed + {2});\n"
                                         "  if (int status = {3}_launch({1}, {1}_packed, ansor_stream)) return status;\n",
                                         type, p.name, packed_bytes, launch));
      packed_bytes += (elements * dtype_bytes(p.dtype) + 255) / 256 * 256;
      plain_args.back() = p.name + "_packed";
    } else {
      out += fmt::format("extern \"C\" {} {{\n  return ansor_rt::synchronized(ansor_rt::status_of(cudaMemcpyAsync({}_packed, {}, sizeof({}) * {}, "
                         "cudaMemcpyDeviceToDevice, 0)), 0);\n}}\n",
                         c_prototype(pack_params, pack_symbol, true), p.name, p.name, type, elements);
    }
    out += fmt::format("extern \"C\" int64_t {}_{}_packed_elements(void) {{ return {}; }}\n", symbol, p.tensor, elements);
  }
  std::vector<std::string> names;
  for (auto& p : params) names.push_back(p.name);
  const std::string stream_param = "cudaStream_t ansor_stream";
  out += fmt::format("\nextern \"C\" {} {{\n  return ansor_kernel_launch({}, ansor_stream);\n}}\n",
                     c_prototype(params, symbol + "_packed_stream", true, stream_param), fmt::join(names, ", "));
  out += fmt::format("\nextern \"C\" {} {{\n  return ansor_rt::synchronized({}_packed_stream({}, 0), 0);\n}}\n",
                     c_prototype(params, symbol + "_packed", true), symbol, fmt::join(names, ", "));
  out += fmt::format("\nextern \"C\" {} {{\n", c_prototype(params, symbol + "_stream", true, stream_param));
  if (!packed_setup.empty()) {
    out += "  ansor_rt::DeviceWorkspace ansor_packed_owner(ansor_stream);\n  char* ansor_packed = nullptr;\n";
    out += fmt::format("  if (cudaError_t error = ansor_packed_owner.alloc({}, &ansor_packed)) return ansor_rt::status_of(error);\n", packed_bytes);
  }
  for (auto& s : packed_setup) out += s;
  out += fmt::format("  return ansor_kernel_launch({}, ansor_stream);\n}}\n", fmt::join(plain_args, ", "));
  out += fmt::format("\nextern \"C\" {} {{\n  return ansor_rt::synchronized({}_stream({}, 0), 0);\n}}\n", c_prototype(params, symbol, true),
                     symbol, fmt::join(names, ", "));
  return out;
}

}  // namespace ansor
