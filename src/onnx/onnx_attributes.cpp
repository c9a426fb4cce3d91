#include "onnx/onnx_attributes.hpp"

namespace splitscope {

const ::onnx::AttributeProto* onnx_attribute(const ::onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t onnx_int_attribute(const ::onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* attribute = onnx_attribute(node, name);
  return attribute ? attribute->i() : fallback;
}

double onnx_float_attribute(const ::onnx::NodeProto& node, const std::string& name, double fallback) {
  const auto* attribute = onnx_attribute(node, name);
  return attribute ? attribute->f() : fallback;
}

std::string onnx_string_attribute(const ::onnx::NodeProto& node, const std::string& name,
                                  const std::string& fallback) {
  const auto* attribute = onnx_attribute(node, name);
  return attribute ? attribute->s() : fallback;
}

std::optional<std::vector<int64_t>> onnx_ints_attribute(const ::onnx::NodeProto& node, const std::string& name) {
  const auto* attribute = onnx_attribute(node, name);
  if (!attribute) return std::nullopt;
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

std::string onnx_node_input(const ::onnx::NodeProto& node, int slot) {
  return slot < node.input_size() ? node.input(slot) : std::string();
}

std::string onnx_node_output(const ::onnx::NodeProto& node, int slot) {
  return slot < node.output_size() ? node.output(slot) : std::string();
}

}  // namespace splitscope
