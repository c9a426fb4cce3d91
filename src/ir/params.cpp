#include "ir/params.hpp"

#include <cmath>

#include "ir/layer_costs.hpp"

namespace splitscope {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1) from a counter: 24 random bits, exactly representable.
float unit_uniform(uint64_t stream, int64_t element) {
  const uint64_t bits = splitmix64(stream ^ splitmix64(static_cast<uint64_t>(element)));
  return static_cast<float>(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

uint64_t stream_id(uint64_t seed, int param_key, int tensor) {
  return splitmix64(splitmix64(seed) + (static_cast<uint64_t>(param_key + 1) << 8) +
                    static_cast<uint64_t>(tensor));
}

/// Keeps activations at a steady scale through deep stacks: variance 2/fan_in
/// before a ReLU (He), 1/fan_in otherwise.
float weight_scale(int64_t fan_in, Activation activation) {
  const double gain = activation == Activation::kRelu ? 6.0 : 3.0;
  return static_cast<float>(std::sqrt(gain / static_cast<double>(fan_in)));
}

}  // namespace

std::vector<ParamTensor> param_tensors(const Graph& graph, NodeId id) {
  const OpNode& node = graph.node(id);
  if (!is_weighted(node.kind)) return {};
  const Layer& layer = graph.layer_of(id);
  if (node.kind == OpKind::kDense) {
    const int64_t in = layer.input_shape[0];
    const float bias_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in)));
    std::vector<ParamTensor> tensors{{"W", {in, layer.units}, weight_scale(in, layer.activation)}};
    if (layer.bias) tensors.push_back({"b", {layer.units}, bias_scale});
    return tensors;
  }
  if (node.kind == OpKind::kConv2d) {
    const int64_t in_per_group = layer.input_shape[0] / layer.groups;
    const int64_t fan_in = in_per_group * layer.kernel.h * layer.kernel.w;
    const float bias_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
    std::vector<ParamTensor> tensors{
        {"W", {layer.filters, in_per_group, layer.kernel.h, layer.kernel.w},
         weight_scale(fan_in, layer.activation)}};
    if (layer.bias) tensors.push_back({"b", {layer.filters}, bias_scale});
    return tensors;
  }
  // Recurrent cells: uniform in ±1/sqrt(H), as PyTorch and cuDNN examples initialise them.
  const int64_t gates = gate_count(layer.kind);
  const int64_t hidden = layer.hidden;
  const int64_t input = node.input_shapes[kCellInputSlot][0];
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hidden)));
  std::vector<ParamTensor> tensors{{"Wx", {input, gates * hidden}, scale},
                                   {"Wh", {hidden, gates * hidden}, scale}};
  if (layer.bias) tensors.push_back({"b", {gates * hidden}, scale});
  return tensors;
}

float param_value(uint64_t seed, int param_key, int tensor, int64_t element, float scale) {
  return scale * unit_uniform(stream_id(seed, param_key, tensor), element);
}

float input_value(uint64_t seed, int64_t element) {
  return unit_uniform(stream_id(seed, -1, 0xff), element);
}

}  // namespace splitscope
