#include "sim/cpu_kernel_cost.hpp"

#include "ir/ops/op_def.hpp"
#include "sim/bias_activation.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// A pass that writes (or rewrites in place) `floats` values: 8 bytes of memory traffic each.
double pass_seconds(const CpuKernelRates& rates, int64_t floats) {
  return 2.0 * static_cast<double>(floats) * static_cast<double>(sizeof(float)) / rates.memory_bytes_per_second;
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

double cpu_conv2d_seconds(const CpuKernelRates& rates, const OpNode& node, const Slice& slice, const ConvShape& shape) {
  SPLITSCOPE_CHECK(rates.gemm != nullptr && rates.memory_bytes_per_second > 0, "cpu kernel rates need a gemm curve");
  const int64_t pixels = shape.out_h * shape.out_w;
  const int64_t patch = shape.channels * shape.kernel_h * shape.kernel_w;
  const BiasActivation pass = bias_activation_of(node, slice);
  double group = rates.gemm->seconds(shape.filters, pixels, patch) + pass_seconds(rates, patch * pixels);
  if (pass.bias) group += pass_seconds(rates, shape.filters * pixels);
  double sample = static_cast<double>(shape.groups) * group;
  if (pass.activation) sample += pass_seconds(rates, shape.groups * shape.filters * pixels);
  return static_cast<double>(shape.rows) * sample + rates.launch_seconds;
}

}  // namespace splitscope
