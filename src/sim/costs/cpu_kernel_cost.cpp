#include "sim/costs/cpu_kernel_cost.hpp"

#include <algorithm>

#include "ir/layer.hpp"
#include "ir/ops/op_def.hpp"
#include "sim/costs/bias_activation.hpp"
#include "util/check.hpp"
#include "util/copy_grain.hpp"

namespace splitscope {
namespace {

/// A pass that writes (or rewrites in place) `floats` values: 8 bytes of memory traffic each.
double pass_seconds(const CpuKernelRates& rates, int64_t floats) {
  return 2.0 * static_cast<double>(floats) * static_cast<double>(sizeof(float)) / rates.memory_bytes_per_second;
}

/// A bias (or zeros) written into `floats` outputs.
double fill_seconds(const CpuKernelRates& rates, int64_t floats) {
  if (rates.passes == nullptr) return pass_seconds(rates, floats);
  return static_cast<double>(floats) * rates.passes->fill_ns_per_value * 1e-9;
}

/// `node`'s activation in place over `floats` outputs; its timed rate, where it has one.
double activation_seconds(const CpuKernelRates& rates, const OpNode& node, int64_t floats) {
  if (rates.passes == nullptr) return pass_seconds(rates, floats);
  const auto rate = rates.passes->activation_ns_per_value.find(std::string(to_string(node.attrs.activation)));
  if (rate == rates.passes->activation_ns_per_value.end()) return pass_seconds(rates, floats);
  return static_cast<double>(floats) * rate->second * 1e-9;
}

/// A product whose B, k x n, is a weight matrix: at least B's bytes at the stream's time for m rows where it
/// comes from memory.
double weight_product_seconds(const CpuKernelRates& rates, int64_t m, int64_t n, int64_t k) {
  const double grid = rates.gemm->seconds(m, n, k);
  if (rates.weight_stream.empty() || m <= 0 || n <= 0 || k <= 0) return grid;
  const double weights = static_cast<double>(k * n) * static_cast<double>(sizeof(float));
  return std::max(grid, weights * rates.weight_stream.seconds_per_byte(m));
}

/// im2col of `rows` patch rows of `row_values` each, split over the device's
/// threads as IntraOpPool::run() splits it: into ceil(rows / grain) chunks of
/// whole rows, at most one per thread.
double im2col_seconds(const CpuKernelRates& rates, int64_t rows, int64_t row_values) {
  const int64_t grain = copy_grain_rows(row_values);
  const int64_t chunks = std::clamp<int64_t>((rows + grain - 1) / grain, 1, rates.threads);
  const int64_t thread_rows = (rows + chunks - 1) / chunks;
  if (rates.passes == nullptr) return pass_seconds(rates, thread_rows * row_values);
  if (const Im2colRate* split = rates.passes->im2col_on(static_cast<int>(chunks))) {
    return split->us_per_call * 1e-6 + static_cast<double>(rows * row_values) * split->ns_per_value * 1e-9;
  }
  const Im2colRate* one = rates.passes->im2col_on(1);
  SPLITSCOPE_CHECK(one != nullptr, "timed kernel passes hold one thread's im2col");
  return one->us_per_call * 1e-6 + static_cast<double>(thread_rows * row_values) * one->ns_per_value * 1e-9;
}

}  // namespace

double cpu_dense_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  GemmDims dims{slice.batch.size(), slice.out.size(), slice.reduce.size(), 1};
  if (const auto gemm = op_def(node.kind).gemm) dims = gemm(node, slice);
  const BiasActivation pass = bias_activation_of(node, slice);
  double seconds = static_cast<double>(dims.count) * weight_product_seconds(rates, dims.m, dims.n, dims.k);
  if (pass.bias) seconds += fill_seconds(rates, pass.outputs);
  if (pass.activation) seconds += activation_seconds(rates, node, pass.outputs);
  return seconds + rates.launch_seconds;
}

double cpu_cell_seconds(const CpuKernelRates& rates, const OpNode& node, const CellShape& shape,
                        double pointwise_seconds) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  const int64_t width = shape.gates * shape.units;
  double seconds = weight_product_seconds(rates, shape.rows, width, shape.input);
  if (node.attrs.bias) seconds += fill_seconds(rates, shape.rows * width);
  if (shape.has_state) {
    seconds += weight_product_seconds(rates, shape.rows, width, shape.hidden);
  } else if (!shape.lstm) {
    seconds += fill_seconds(rates, shape.rows * width);  // h·Wh of a zero state: filled, not multiplied
  }
  return seconds + static_cast<double>(shape.rows * shape.units) * pointwise_seconds + rates.launch_seconds;
}

double cpu_pool_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice,
                        double ns_per_window_value) {
  const Shape& out = node.output_shapes.at(0);  // [channels, out_h, out_w]
  SPLITSCOPE_CHECK(out.size() == 3, "a pool's output is channels x height x width");
  const int64_t outputs = slice.batch.size() * slice.out.size() * out[1] * out[2];
  const int64_t window = node.attrs.kernel.h * node.attrs.kernel.w;
  return static_cast<double>(outputs * window) * ns_per_window_value * 1e-9 + rates.launch_seconds;
}

double cpu_conv2d_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice, const ConvShape& shape) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  const int64_t pixels = shape.out_h * shape.out_w;
  const int64_t patch = shape.channels * shape.kernel_h * shape.kernel_w;
  const BiasActivation pass = bias_activation_of(node, slice);
  double group = rates.gemm->seconds(shape.filters, pixels, patch) + im2col_seconds(rates, patch, pixels);
  if (pass.bias) group += fill_seconds(rates, shape.filters * pixels);
  double sample = static_cast<double>(shape.groups) * group;
  if (pass.activation) sample += activation_seconds(rates, node, shape.groups * shape.filters * pixels);
  return static_cast<double>(shape.rows) * sample + rates.launch_seconds;
}

}  // namespace splitscope
