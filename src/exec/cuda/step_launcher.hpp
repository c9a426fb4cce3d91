#pragma once
/// \file
/// Each DeviceProgram step as the one library call or kernel launch it is:
/// matrix products through cuBLAS (row-major steps mapped onto its
/// column-major GEMM), convolutions and pooling through cuDNN (descriptors and
/// algorithm chosen once, before the runs), copies through the runtime's
/// memcpy family (peer copies across GPUs), the rest through kernels.hpp.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>
#include <vector>

#include "exec/cuda/device_program.hpp"
#include "exec/cuda/library_handles.hpp"
#include "exec/cuda_backend.hpp"

namespace splitscope::gpu {

/// The cuBLAS compute type for a dtype (fp32: CUBLAS_COMPUTE_32F, tf32:
/// CUBLAS_COMPUTE_32F_FAST_TF32, bf16: CUBLAS_COMPUTE_32F_FAST_16BF).
cublasComputeType_t cublas_compute_type(Dtype dtype);

/// Y = X·W (+ Y), row-major, through cublasGemmEx on the handle's stream.
void launch_matmul(cublasHandle_t handle, cublasComputeType_t compute, const MatMulStep& step, const float* x,
                   const float* w, float* y);

/// A convolution step (any ConvPass) with its cuDNN descriptors and algorithm, chosen once.
class ConvPlan {
 public:
  /// Describes `step` and picks the fastest algorithm of its pass that
  /// cudnnFind measures, among those using only the math `dtype` allows
  /// (fp32: FMA kernels, no TF32).
  ConvPlan(const ConvStep& step, cudnnHandle_t handle, Dtype dtype);
  size_t workspace_bytes() const { return workspace_bytes_; }
  /// "implicit precomp gemm (fma)", "backward data: algo 1 (fma)": for reports.
  const std::string& description() const { return description_; }
  /// Forward: reads x and filter, writes y. Backward data: reads y (dY) and
  /// filter, writes x (dX). Backward filter: reads x and y (dY), writes (or
  /// adds to) filter (dW).
  void launch(cudnnHandle_t handle, float* x, float* filter, float* y, void* workspace, size_t workspace_bytes) const;

 private:
  template <typename Perf>
  bool choose(const std::vector<Perf>& candidates, Dtype dtype);

  TensorDescriptor x_;
  FilterDescriptor filter_;
  ConvolutionDescriptor convolution_;
  TensorDescriptor y_;
  ConvPass pass_ = ConvPass::kForward;
  bool accumulate_ = false;
  int algorithm_ = 0;  ///< the cudnnConvolution*Algo_t of the pass
  size_t workspace_bytes_ = 0;
  std::string description_;
};

/// A pooling step with its cuDNN descriptors.
class PoolPlan {
 public:
  explicit PoolPlan(const PoolStep& step);
  void launch(cudnnHandle_t handle, const float* x, float* y) const;

 private:
  PoolingDescriptor pooling_;
  TensorDescriptor x_;
  TensorDescriptor y_;
};

/// Where a copy's ends live.
struct CopyEnds {
  int src_ordinal = -1;  ///< CUDA device, or -1 for pinned host memory
  int dst_ordinal = -1;
};

/// A copy step: one memcpy (1-D when rows are contiguous, else 2-D), within a
/// GPU, between host and device, or peer-to-peer across GPUs.
void launch_copy(const CopyStep& step, const float* src, float* dst, CopyEnds ends, cudaStream_t stream);

}  // namespace splitscope::gpu
