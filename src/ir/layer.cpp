#include "ir/layer.hpp"

#include <array>
#include <utility>

#include "ir/ops/layer_def.hpp"
#include "ir/ops/op_def.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

constexpr std::array<std::pair<Activation, std::string_view>, 4> kActivationNames{{
    {Activation::kNone, "none"},
    {Activation::kRelu, "relu"},
    {Activation::kTanh, "tanh"},
    {Activation::kSigmoid, "sigmoid"},
}};

}  // namespace

std::optional<OpKind> layer_kind_from_type(std::string_view type) {
  for (const OpDef* def : op_defs()) {
    if (def->layer != nullptr && def->layer->name == type) return def->kind;
  }
  return std::nullopt;
}

std::string layer_type_list() {
  std::string text;
  for (const OpDef* def : op_defs()) {
    if (def->layer == nullptr) continue;
    if (!text.empty()) text += ", ";
    text += def->layer->name;
  }
  return text;
}

const LayerDef& layer_def(OpKind kind) {
  const LayerDef* def = op_def(kind).layer;
  SPLITSCOPE_CHECK(def != nullptr, "a layer of an op kind that no network file names");
  return *def;
}

std::string_view layer_type(OpKind kind) { return layer_def(kind).name; }

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

bool is_recurrent(OpKind kind) { return op_def(kind).cell; }

}  // namespace splitscope
