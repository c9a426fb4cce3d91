#include "ir/params.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/check.hpp"
#include "util/splitmix.hpp"

namespace splitscope {
namespace {

/// Uniform in [-1, 1) from a counter: 24 random bits, exactly representable.
float unit_uniform(uint64_t stream, int64_t element) {
  const uint64_t bits = splitmix64(stream ^ splitmix64(static_cast<uint64_t>(element)));
  return static_cast<float>(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

uint64_t stream_id(uint64_t seed, int param_key, int tensor) {
  return splitmix64(splitmix64(seed) + (static_cast<uint64_t>(param_key + 1) << 8) +
                    static_cast<uint64_t>(tensor));
}

}  // namespace

std::vector<ParamTensor> param_tensors(const Graph& graph, NodeId id) {
  const OpNode& node = graph.node(id);
  const OpDef& def = op_def(node.kind);
  return def.params != nullptr ? def.params(node) : std::vector<ParamTensor>{};
}

float param_value(uint64_t seed, int param_key, int tensor, int64_t element, float scale) {
  return scale * unit_uniform(stream_id(seed, param_key, tensor), element);
}

ParamElements::ParamElements(const Graph& graph, NodeId node, int tensor, uint64_t seed)
    : seed_(seed), tensor_(tensor) {
  const OpNode& op = graph.node(node);
  const std::vector<ParamTensor> tensors = param_tensors(graph, node);
  SPLITSCOPE_CHECK(tensor >= 0 && static_cast<size_t>(tensor) < tensors.size(),
                   fmt::format("{} has no weight tensor {}", op.name, tensor));
  key_ = op.param_key;
  scale_ = tensors[static_cast<size_t>(tensor)].scale;
  offset_ = tensors[static_cast<size_t>(tensor)].offset;
  if (const auto& weights = graph.model().weights) {
    loaded_ = weights->tensor(op.layer_name, tensor, graph.is_training());
    if (loaded_ != nullptr) {
      SPLITSCOPE_CHECK(static_cast<int64_t>(loaded_->size()) == element_count(tensors[static_cast<size_t>(tensor)].shape),
                       fmt::format("layer {}: its weight tensor {} holds {} elements, not {}", op.layer_name,
                                   tensors[static_cast<size_t>(tensor)].name, loaded_->size(),
                                   element_count(tensors[static_cast<size_t>(tensor)].shape)));
    }
  }
}

float input_value(uint64_t seed, int64_t element, int input) {
  return unit_uniform(stream_id(seed, -1 - input, 0xff), element);
}

float network_input_value(uint64_t seed, int64_t element, int input, int64_t vocab) {
  const float u = input_value(seed, element, input);
  if (vocab <= 0) return u;
  const auto id = static_cast<int64_t>((static_cast<double>(u) + 1.0) * 0.5 * static_cast<double>(vocab));
  return static_cast<float>(std::min(id, vocab - 1));
}

float target_value(uint64_t seed, int64_t element, LossKind loss, int64_t classes) {
  const float u = unit_uniform(stream_id(seed, -1, 0xfe), element);  // [-1, 1)
  if (loss == LossKind::kMeanSquaredError) return u;
  const auto label = static_cast<int64_t>((static_cast<double>(u) + 1.0) * 0.5 * static_cast<double>(classes));
  return static_cast<float>(std::min(label, classes - 1));
}

}  // namespace splitscope
