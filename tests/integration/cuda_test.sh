#!/usr/bin/env bash
# Integration test, CUDA kernels: the CUDA consumer (cuda_consumer/) is configured against the
# installed package with TARGET cuda:sm_90 and built by CMake's CUDA language (nvcc), the kernels
# linked with CUDA::cudart into its program, which checks them on the GPU where there is one and
# that they report the CUDA error where there is none. The emitted sources are CUDA and the
# header declares the stream variants; the library installs as a package that finds the CUDA
# toolkit. A project that has not enabled CUDA gets a configure error saying so. Skipped (exit 77)
# where nvcc is absent.
source "$(dirname "$0")/common.sh"

nvcc=$(command -v nvcc || true)
[[ -n $nvcc ]] || [[ ! -x /usr/local/cuda/bin/nvcc ]] || nvcc=/usr/local/cuda/bin/nvcc
if [[ -z $nvcc ]]; then
  echo "SKIP: no nvcc on this machine: the CUDA build is not tested"
  exit 77
fi

install_ansor
source_dir=$ANSOR_SOURCE_DIR/tests/integration/cuda_consumer
build=$WORK_DIR/consumer-build

step "building the CUDA consumer for cuda:sm_90 with $nvcc"
configure_consumer "$WORK_DIR/configure.log" "$source_dir" "$build" "-DCMAKE_PREFIX_PATH=$PREFIX" "-DCMAKE_CUDA_COMPILER=$nvcc"
build_consumer "$WORK_DIR/build.log" "$build"
out_dir=$build/ansor/gpu_kernels
for kernel in matmul softmax conv2d_bias_relu gelu; do
  [[ -f $out_dir/gpu_kernels_$kernel.cu ]] || fail "no CUDA source for kernel $kernel in $out_dir"
  grep -q '__global__' "$out_dir/gpu_kernels_$kernel.cu" || fail "gpu_kernels_$kernel.cu has no __global__ function"
done
grep -q 'reduce_across_threads' "$out_dir/gpu_kernels_softmax.cu" || fail "the softmax's default schedule does not reduce across threads"
grep -q 'int gpu_kernels_matmul_stream(const float\* A, const float\* B, float\* C, cudaStream_t stream);' "$out_dir/gpu_kernels.h" ||
  fail "the header declares no stream variant"
grep -q -- '-arch=sm_90\|sm_90' "$build/build.ninja" || fail "the kernels are not compiled for sm_90"
step "running the CUDA consumer"
run "$WORK_DIR/run.log" "$build/cuda_consumer"
grep -q 'gpu_kernels target: cuda:sm_90' "$WORK_DIR/run.log" || fail "the library names another target"

step "installing the CUDA kernel library as a package"
run "$WORK_DIR/install-kernels.log" "$CMAKE" --install "$build" --prefix "$WORK_DIR/kernels-prefix"
config=$(find "$WORK_DIR/kernels-prefix" -name gpu_kernelsConfig.cmake)
[[ -n $config ]] || fail "no gpu_kernelsConfig.cmake installed"
grep -q 'find_dependency(CUDAToolkit)' "$config" || fail "the installed package does not find the CUDA toolkit"

step "a project that has not enabled CUDA is told so at configure time"
plain=$WORK_DIR/no-cuda
mkdir -p "$plain"
cp "$source_dir/kernels.def" "$plain/"
cat > "$plain/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(no_cuda LANGUAGES CXX)
find_package(Ansor REQUIRED)
ansor_add_kernels(gpu_kernels DEF kernels.def TARGET cuda:sm_90)
CMAKE
if "$CMAKE" -S "$plain" -B "$plain/build" "-DCMAKE_PREFIX_PATH=$PREFIX" > "$WORK_DIR/no-cuda.log" 2>&1; then
  fail "a project without the CUDA language configured CUDA kernels"
fi
grep -q "this project has not enabled the CUDA language" "$WORK_DIR/no-cuda.log" ||
  fail "the configure error does not say that CUDA is not enabled (see $WORK_DIR/no-cuda.log)"

echo "PASS: cuda"
