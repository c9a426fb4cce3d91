#include "ir/layer.hpp"

#include <array>
#include <utility>

namespace splitscope {
namespace {

constexpr std::array<std::pair<LayerKind, std::string_view>, 20> kLayerNames{{
    {LayerKind::kDense, "dense"},
    {LayerKind::kConv2d, "conv2d"},
    {LayerKind::kMaxPool, "maxpool"},
    {LayerKind::kAvgPool, "avgpool"},
    {LayerKind::kFlatten, "flatten"},
    {LayerKind::kSoftmax, "softmax"},
    {LayerKind::kRelu, "relu"},
    {LayerKind::kTanh, "tanh"},
    {LayerKind::kSigmoid, "sigmoid"},
    {LayerKind::kLstm, "lstm"},
    {LayerKind::kGru, "gru"},
    {LayerKind::kAdd, "add"},
    {LayerKind::kConcat, "concat"},
    {LayerKind::kBatchNorm, "batch_norm"},
    {LayerKind::kLayerNorm, "layer_norm"},
    {LayerKind::kDropout, "dropout"},
    {LayerKind::kEmbedding, "embedding"},
    {LayerKind::kGelu, "gelu"},
    {LayerKind::kAttention, "attention"},
    {LayerKind::kLinear, "linear"},
}};

constexpr std::array<std::pair<Activation, std::string_view>, 4> kActivationNames{{
    {Activation::kNone, "none"},
    {Activation::kRelu, "relu"},
    {Activation::kTanh, "tanh"},
    {Activation::kSigmoid, "sigmoid"},
}};

}  // namespace

std::string_view to_string(LayerKind kind) {
  for (const auto& [k, name] : kLayerNames) {
    if (k == kind) return name;
  }
  return "?";
}

std::optional<LayerKind> layer_kind_from_string(std::string_view name) {
  for (const auto& [k, n] : kLayerNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

std::string_view to_string(Activation activation) {
  for (const auto& [a, name] : kActivationNames) {
    if (a == activation) return name;
  }
  return "?";
}

std::optional<Activation> activation_from_string(std::string_view name) {
  for (const auto& [a, n] : kActivationNames) {
    if (n == name) return a;
  }
  return std::nullopt;
}

bool is_recurrent(LayerKind kind) { return kind == LayerKind::kLstm || kind == LayerKind::kGru; }

}  // namespace splitscope
