#include "ir/ops/linear_rules.hpp"

#include <cmath>
#include <fmt/format.h>

#include "ir/ops/op_rules.hpp"

namespace splitscope::linear_rules {

LinearDims dims(const OpNode& node) {
  // linear: X [T, in] -> Y [T, units]; linear_grad_input: dY [T, units] -> dX [T, in];
  // linear_grad_weight: X, dY -> written "as" Y [T, units].
  const bool grad_input = node.kind == OpKind::kLinearGradInput;
  const Shape& x = grad_input ? node.output_shapes.at(0) : node.input_shapes.at(0);
  const Shape& y = grad_input ? node.input_shapes.at(0) : node.output_shapes.at(0);
  return LinearDims{x.at(0), x.at(1), y.at(1)};
}

LinearDims slice_dims(const OpNode& node, const Slice& slice) {
  LinearDims d = dims(node);
  if (slice.features.whole()) return d;
  if (slice.features.rows) {
    d.inputs = slice.features.count(d.inputs);
  } else {
    d.units = slice.features.count(d.units);
  }
  return d;
}

bool carries_bias(const OpNode& node, const Slice& slice) {
  if (!node.attrs.bias) return false;
  return slice.features.whole() || !slice.features.rows || slice.features.range.begin == 0;
}

int64_t slice_param_count(const OpNode& node, const Slice& slice) {
  const LinearDims d = slice_dims(node, slice);
  return d.inputs * d.units + (carries_bias(node, slice) ? d.units : 0);
}

FeatureCut x_features(const Slice& slice) {
  if (!slice.features.rows) return {};
  return FeatureCut{slice.features.range, slice.features.blocks, false};
}

FeatureCut y_features(const Slice& slice) {
  if (slice.features.rows) return {};
  return FeatureCut{slice.features.range, slice.features.blocks, false};
}

bool forward_partial(const OpNode&, const Slice& slice) { return !slice.features.whole() && slice.features.rows; }

bool grad_input_partial(const OpNode&, const Slice& slice) {
  return !slice.features.whole() && !slice.features.rows;
}

std::vector<ParamTensor> params(const OpNode& node) {
  const LinearDims d = dims(node);
  const float bias_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.inputs)));
  std::vector<ParamTensor> tensors{{"W", {d.inputs, d.units}, op_rules::weight_scale(d.inputs, Activation::kNone)}};
  if (node.attrs.bias) tensors.push_back({"b", {d.units}, bias_scale});
  return tensors;
}

Range whole_tensor(const OpNode& node, const Slice&, int tensor) {
  const LinearDims d = dims(node);
  return {0, tensor == 0 ? d.inputs * d.units : d.units};
}

int64_t param_count(const OpNode& node) {
  const LinearDims d = dims(node);
  return d.inputs * d.units + (node.attrs.bias ? d.units : 0);
}

GemmDims gemm(const OpNode& node, const Slice& slice) {
  const LinearDims d = slice_dims(node, slice);
  const int64_t rows = slice.batch.size() * d.positions;
  switch (node.kind) {
    case OpKind::kLinearGradInput: return GemmDims{rows, d.inputs, d.units, 1};   // dX = dY·Wᵀ
    case OpKind::kLinearGradWeight: return GemmDims{d.inputs, d.units, rows, 1};  // dW = Xᵀ·dY
    default: return GemmDims{rows, d.units, d.inputs, 1};
  }
}

std::string signature(const OpNode& node, const Slice& slice) {
  const LinearDims d = slice_dims(node, slice);
  return fmt::format("{}:b{}:t{}:k{}:n{}", to_string(node.kind), slice.batch.size(), d.positions, d.inputs, d.units);
}

}  // namespace splitscope::linear_rules
