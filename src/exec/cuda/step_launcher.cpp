#include "exec/cuda/step_launcher.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "exec/cuda/cuda_check.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope::gpu {
namespace {

/// The most workspace one convolution may ask for; faster algorithms that
/// want more are passed over.
constexpr size_t kMaxConvWorkspace = size_t{1} << 30;

int as_int(int64_t value, const char* what) {
  SPLITSCOPE_CHECK(value >= 0 && value <= std::numeric_limits<int>::max(),
                   fmt::format("{} = {} does not fit cuDNN's int", what, value));
  return static_cast<int>(value);
}

void describe_nchw(const TensorDescriptor& tensor, int64_t n, int64_t c, int64_t h, int64_t w, int64_t n_stride) {
  SPLITSCOPE_CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(tensor.get(), CUDNN_DATA_FLOAT, as_int(n, "batch"),
                                                      as_int(c, "channels"), as_int(h, "height"), as_int(w, "width"),
                                                      as_int(n_stride, "sample stride"), as_int(h * w, "channel stride"),
                                                      as_int(w, "row stride"), 1));
}

std::string algorithm_name(cudnnConvolutionFwdAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "implicit gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "implicit precomp gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "direct";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "fft tiling";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "winograd";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "winograd nonfused";
    default: return "algorithm " + std::to_string(static_cast<int>(algorithm));
  }
}

std::string algorithm_name(cudnnConvolutionBwdDataAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "algo 0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "algo 1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "fft tiling";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "winograd";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "winograd nonfused";
    default: return "algorithm " + std::to_string(static_cast<int>(algorithm));
  }
}

std::string algorithm_name(cudnnConvolutionBwdFilterAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "algo 0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "algo 1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "algo 3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "winograd nonfused";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "fft tiling";
    default: return "algorithm " + std::to_string(static_cast<int>(algorithm));
  }
}

std::string_view pass_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "convolution forward";
    case ConvPass::kBackwardData: return "backward data";
    case ConvPass::kBackwardFilter: return "backward filter";
  }
  return "?";
}

std::string math_name(cudnnMathType_t math) {
  switch (math) {
    case CUDNN_FMA_MATH: return "fma";
    case CUDNN_DEFAULT_MATH: return "default";
    case CUDNN_TENSOR_OP_MATH: return "tensor op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor op, conversion";
  }
  return "?";
}

}  // namespace

cublasComputeType_t cublas_compute_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32: return CUBLAS_COMPUTE_32F;
    case Dtype::kTf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Dtype::kBf16: return CUBLAS_COMPUTE_32F_FAST_16BF;
  }
  return CUBLAS_COMPUTE_32F;
}

void launch_matmul(cublasHandle_t handle, cublasComputeType_t compute, const MatMulStep& step, const float* x,
                   const float* w, float* y) {
  // Row-major Y[M×N] = X[M×K]·W[K×N] is column-major Yᵀ[N×M] = Wᵀ[N×K]·Xᵀ[K×M],
  // and a row-major matrix with row stride s is its transpose, column-major,
  // with leading dimension s: so A = W (lda = w_stride), B = X (ldb = x_stride).
  // An operand stored transposed (MatMulStep::transpose_*) is then read with
  // cuBLAS's transpose flag instead.
  const float alpha = 1.0f;
  const float beta = step.accumulate ? 1.0f : 0.0f;
  SPLITSCOPE_CUBLAS_CHECK(cublasGemmEx_64(handle, step.transpose_w ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          step.transpose_x ? CUBLAS_OP_T : CUBLAS_OP_N, step.cols, step.rows,
                                          step.inner, &alpha, w, CUDA_R_32F, step.w_stride, x, CUDA_R_32F,
                                          step.x_stride, &beta, y, CUDA_R_32F, step.y_stride, compute,
                                          CUBLAS_GEMM_DEFAULT));
}

ConvPlan::ConvPlan(const ConvStep& step, cudnnHandle_t handle, Dtype dtype) {
  const ConvGeometry& g = step.geometry;
  describe_nchw(x_, step.batch, g.in_channels, g.in_h, g.in_w, step.x_sample_stride);
  SPLITSCOPE_CUDNN_CHECK(cudnnSetFilter4dDescriptor(filter_.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                    as_int(g.filters, "filters"),
                                                    as_int(g.in_channels / g.groups, "channels per group"),
                                                    as_int(g.kernel_h, "kernel"), as_int(g.kernel_w, "kernel")));
  SPLITSCOPE_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      convolution_.get(), as_int(g.pad_h, "padding"), as_int(g.pad_w, "padding"), as_int(g.stride_h, "stride"),
      as_int(g.stride_w, "stride"), 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  SPLITSCOPE_CUDNN_CHECK(cudnnSetConvolutionGroupCount(convolution_.get(), as_int(g.groups, "groups")));
  // fp32 means no TF32: cuDNN's default math may use TF32 tensor cores for
  // float data on Ampere and later, FMA math never does.
  const cudnnMathType_t wanted = dtype == Dtype::kFp32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  SPLITSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(convolution_.get(), wanted));
  int n = 0;
  int c = 0;
  int h = 0;
  int w = 0;
  SPLITSCOPE_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(convolution_.get(), x_.get(), filter_.get(), &n, &c, &h, &w));
  SPLITSCOPE_CHECK(n == step.batch && c == g.filters && h == g.out_h() && w == g.out_w(),
                   fmt::format("cuDNN computes a {}x{}x{}x{} output, the plan expects {}x{}x{}x{}", n, c, h, w,
                               step.batch, g.filters, g.out_h(), g.out_w()));
  describe_nchw(y_, step.batch, g.filters, g.out_h(), g.out_w(), step.y_sample_stride);

  pass_ = step.pass;
  accumulate_ = step.accumulate;
  // Timed, not guessed: cudnnFind runs each algorithm once on this shape and
  // returns them fastest first, as PyTorch's cudnn.benchmark does. The
  // heuristics (cudnnGetConvolutionForwardAlgorithm_v7) picked FFT for
  // AlexNet's fp32 conv2/conv3 on an H100, where PyTorch with benchmark on ran
  // the cnn 21% faster (reports/h100-80gb-hbm3/FINDINGS.md). It runs at plan
  // preparation, before any timed run, on this handle's stream.
  switch (pass_) {
    case ConvPass::kForward: {
      int limit = 0;
      SPLITSCOPE_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &limit));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> candidates(static_cast<size_t>(limit));
      int returned = 0;
      SPLITSCOPE_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(handle, x_.get(), filter_.get(), convolution_.get(),
                                                                  y_.get(), limit, &returned, candidates.data()));
      candidates.resize(static_cast<size_t>(returned));
      if (choose(candidates, dtype)) return;
      break;
    }
    case ConvPass::kBackwardData: {
      int limit = 0;
      SPLITSCOPE_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &limit));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> candidates(static_cast<size_t>(limit));
      int returned = 0;
      SPLITSCOPE_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(
          handle, filter_.get(), y_.get(), convolution_.get(), x_.get(), limit, &returned, candidates.data()));
      candidates.resize(static_cast<size_t>(returned));
      if (choose(candidates, dtype)) return;
      break;
    }
    case ConvPass::kBackwardFilter: {
      int limit = 0;
      SPLITSCOPE_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &limit));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> candidates(static_cast<size_t>(limit));
      int returned = 0;
      SPLITSCOPE_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(
          handle, x_.get(), y_.get(), convolution_.get(), filter_.get(), limit, &returned, candidates.data()));
      candidates.resize(static_cast<size_t>(returned));
      if (choose(candidates, dtype)) return;
      break;
    }
  }
  throw RunError(fmt::format("cuDNN offers no {} algorithm for a {}x{}x{}x{} input, {} filters {}x{}, groups {} "
                             "with {} math and at most {} MiB of workspace",
                             pass_name(pass_), step.batch, g.in_channels, g.in_h, g.in_w, g.filters,
                             g.kernel_h, g.kernel_w, g.groups, math_name(wanted), kMaxConvWorkspace >> 20));
}

template <typename Perf>
bool ConvPlan::choose(const std::vector<Perf>& candidates, Dtype dtype) {
  // First pass: only the math asked for. Second pass (fp32 only, should the
  // search offer no FMA kernel): any math, said in the description.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Perf& candidate : candidates) {
      if (candidate.status != CUDNN_STATUS_SUCCESS || candidate.memory > kMaxConvWorkspace) continue;
      if (pass == 0 && dtype == Dtype::kFp32 && candidate.mathType != CUDNN_FMA_MATH) continue;
      algorithm_ = static_cast<int>(candidate.algo);
      workspace_bytes_ = candidate.memory;
      // cuDNN needs the algorithm's own math type on the descriptor.
      SPLITSCOPE_CUDNN_CHECK(cudnnSetConvolutionMathType(convolution_.get(), candidate.mathType));
      description_ = fmt::format("{}{} ({}{})", pass_ == ConvPass::kForward ? "" : std::string(pass_name(pass_)) + ": ",
                                 algorithm_name(candidate.algo), math_name(candidate.mathType),
                                 pass == 1 ? "; no FMA-only kernel was offered" : "");
      return true;
    }
  }
  return false;
}

void ConvPlan::launch(cudnnHandle_t handle, float* x, float* filter, float* y, void* workspace,
                      size_t workspace_bytes) const {
  const float alpha = 1.0f;
  const float beta = accumulate_ ? 1.0f : 0.0f;
  switch (pass_) {
    case ConvPass::kForward:
      SPLITSCOPE_CUDNN_CHECK(cudnnConvolutionForward(handle, &alpha, x_.get(), x, filter_.get(), filter,
                                                     convolution_.get(),
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(algorithm_), workspace,
                                                     workspace_bytes, &beta, y_.get(), y));
      return;
    case ConvPass::kBackwardData:
      SPLITSCOPE_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, &alpha, filter_.get(), filter, y_.get(), y,
                                                          convolution_.get(),
                                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm_),
                                                          workspace, workspace_bytes, &beta, x_.get(), x));
      return;
    case ConvPass::kBackwardFilter:
      SPLITSCOPE_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, &alpha, x_.get(), x, y_.get(), y,
                                                            convolution_.get(),
                                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm_),
                                                            workspace, workspace_bytes, &beta, filter_.get(), filter));
      return;
  }
}

PoolPlan::PoolPlan(const PoolStep& step) {
  const ConvGeometry& w = step.window;
  SPLITSCOPE_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
      pooling_.get(), step.max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
      CUDNN_PROPAGATE_NAN, as_int(w.kernel_h, "kernel"), as_int(w.kernel_w, "kernel"),
      as_int(w.pad_h, "padding"), as_int(w.pad_w, "padding"),
      as_int(w.stride_h, "stride"), as_int(w.stride_w, "stride")));
  describe_nchw(x_, step.batch, w.in_channels, w.in_h, w.in_w, step.x_sample_stride);
  describe_nchw(y_, step.batch, w.in_channels, w.out_h(), w.out_w(), step.y_sample_stride);
}

void PoolPlan::launch(cudnnHandle_t handle, const float* x, float* y) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  SPLITSCOPE_CUDNN_CHECK(cudnnPoolingForward(handle, pooling_.get(), &alpha, x_.get(), x, &beta, y_.get(), y));
}

void launch_copy(const CopyStep& step, const float* src, float* dst, CopyEnds ends, cudaStream_t stream) {
  constexpr size_t kFloat = sizeof(float);
  const size_t width = static_cast<size_t>(step.width) * kFloat;
  const size_t height = static_cast<size_t>(step.height);
  const size_t src_pitch = static_cast<size_t>(step.src_pitch) * kFloat;
  const size_t dst_pitch = static_cast<size_t>(step.dst_pitch) * kFloat;
  if (width == 0 || height == 0) return;
  const bool contiguous = height == 1 || (src_pitch == width && dst_pitch == width);
  const bool src_host = ends.src_ordinal < 0;
  const bool dst_host = ends.dst_ordinal < 0;
  if (!src_host && !dst_host && ends.src_ordinal != ends.dst_ordinal) {
    if (contiguous) {
      SPLITSCOPE_CUDA_CHECK(
          cudaMemcpyPeerAsync(dst, ends.dst_ordinal, src, ends.src_ordinal, width * height, stream));
      return;
    }
    cudaMemcpy3DPeerParms copy{};
    copy.srcPtr = make_cudaPitchedPtr(const_cast<float*>(src), src_pitch, width, height);
    copy.srcDevice = ends.src_ordinal;
    copy.dstPtr = make_cudaPitchedPtr(dst, dst_pitch, width, height);
    copy.dstDevice = ends.dst_ordinal;
    copy.extent = make_cudaExtent(width, height, 1);
    SPLITSCOPE_CUDA_CHECK(cudaMemcpy3DPeerAsync(&copy, stream));
    return;
  }
  SPLITSCOPE_CHECK(!(src_host && dst_host), "a copy from host memory to host memory");
  const cudaMemcpyKind kind =
      src_host ? cudaMemcpyHostToDevice : (dst_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
  if (contiguous) {
    SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, width * height, kind, stream));
  } else {
    SPLITSCOPE_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, kind, stream));
  }
}

}  // namespace splitscope::gpu
