#include "sim/cpu_kernel_cost.hpp"

#include <algorithm>

#include "ir/ops/op_def.hpp"
#include "sim/bias_activation.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// A pass that writes (or rewrites in place) `floats` values: 8 bytes of memory traffic each.
double pass_seconds(const CpuKernelRates& rates, int64_t floats) {
  return 2.0 * static_cast<double>(floats) * static_cast<double>(sizeof(float)) / rates.memory_bytes_per_second;
}

/// The fewest values a thread of the kernel's ParallelFor copies (exec/cpu/kernels/conv2d.cpp, kMinCopyElements).
constexpr int64_t kMinCopyElements = 32768;

/// The most patch rows one thread copies when im2col's `rows` rows of `row_values` each split over `threads`.
int64_t im2col_rows_per_thread(int64_t rows, int64_t row_values, int threads) {
  const int64_t grain = std::max<int64_t>(1, (kMinCopyElements + row_values - 1) / std::max<int64_t>(row_values, 1));
  const int64_t chunks = std::clamp<int64_t>(rows / grain, 1, threads);
  return (rows + chunks - 1) / chunks;
}

}  // namespace

double cpu_dense_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  GemmDims dims{slice.batch.size(), slice.out.size(), slice.reduce.size(), 1};
  if (const auto gemm = op_def(node.kind).gemm) dims = gemm(node, slice);
  const BiasActivation pass = bias_activation_of(node, slice);
  double seconds = static_cast<double>(dims.count) * rates.gemm->seconds(dims.m, dims.n, dims.k);
  if (pass.bias) seconds += pass_seconds(rates, pass.outputs);
  if (pass.activation) seconds += pass_seconds(rates, pass.outputs);
  return seconds + rates.launch_seconds;
}

double cpu_cell_seconds(const CpuKernelRates& rates, const OpNode& node, const CellShape& shape,
                        double pointwise_seconds) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  const int64_t width = shape.gates * shape.units;
  double seconds = rates.gemm->seconds(shape.rows, width, shape.input);
  if (node.attrs.bias) seconds += pass_seconds(rates, shape.rows * width);
  if (shape.has_state) {
    seconds += rates.gemm->seconds(shape.rows, width, shape.hidden);
  } else if (!shape.lstm) {
    seconds += pass_seconds(rates, shape.rows * width);  // h·Wh of a zero state: filled, not multiplied
  }
  return seconds + static_cast<double>(shape.rows * shape.units) * pointwise_seconds + rates.launch_seconds;
}

double cpu_conv2d_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice, const ConvShape& shape) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  const int64_t pixels = shape.out_h * shape.out_w;
  const int64_t patch = shape.channels * shape.kernel_h * shape.kernel_w;
  const BiasActivation pass = bias_activation_of(node, slice);
  const int64_t copied_rows = im2col_rows_per_thread(patch, pixels, rates.threads);
  double group = rates.gemm->seconds(shape.filters, pixels, patch) + pass_seconds(rates, copied_rows * pixels);
  if (pass.bias) group += pass_seconds(rates, shape.filters * pixels);
  double sample = static_cast<double>(shape.groups) * group;
  if (pass.activation) sample += pass_seconds(rates, shape.groups * shape.filters * pixels);
  return static_cast<double>(shape.rows) * sample + rates.launch_seconds;
}

}  // namespace splitscope
