#include "onnx/onnx_network_builder.hpp"

namespace splitscope {

std::string onnx_printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '_';
  }
  return out;
}

std::string onnx_node_label(const ::onnx::NodeProto& node) {
  return "node '" + onnx_printable(node.name()) + "' (" + onnx_printable(node.op_type()) + ")";
}

std::string OnnxNetworkBuilder::add_input(const std::string& name, const std::vector<int64_t>& sample) {
  const std::string unique = unique_name(name.empty() ? "input" : name);
  inputs_[unique] = sample;
  samples_[unique] = sample;
  return unique;
}

std::string OnnxNetworkBuilder::unique_name(std::string base) {
  base = onnx_printable(base);
  std::string name = base;
  for (int suffix = 2; names_.count(name); ++suffix) name = base + "_" + std::to_string(suffix);
  names_.insert(name);
  return name;
}

std::string OnnxNetworkBuilder::add_layer(const ::onnx::NodeProto& node, const std::string& type,
                                          nlohmann::json fields, const std::vector<std::string>& inputs,
                                          const std::vector<int64_t>& sample) {
  // PyTorch names nodes by module path ("/layer1/layer1.0/conv1/Conv"): the
  // leading slash goes; an unnamed node takes its first output's name.
  std::string base = node.name().empty() ? (node.output_size() ? node.output(0) : node.op_type()) : node.name();
  while (!base.empty() && base.front() == '/') base.erase(base.begin());
  const std::string name = unique_name(base.empty() ? node.op_type() : base);
  nlohmann::json layer = {{"type", type}, {"name", name}, {"inputs", inputs}};
  for (auto& [key, value] : fields.items()) layer[key] = value;
  for (const std::string& input : inputs) ++readers_[input];
  index_[name] = layers_.size();
  samples_[name] = sample;
  layers_.push_back(std::move(layer));
  return name;
}

int OnnxNetworkBuilder::readers(const std::string& name) const {
  const auto it = readers_.find(name);
  return it == readers_.end() ? 0 : it->second;
}

void OnnxNetworkBuilder::set_field(const std::string& layer, const std::string& key, const nlohmann::json& value,
                                   const std::vector<int64_t>& sample) {
  layers_[index_.at(layer)][key] = value;
  samples_[layer] = sample;
}

std::string OnnxNetworkBuilder::type_of(const std::string& layer) const {
  const auto it = index_.find(layer);
  return it == index_.end() ? std::string() : layers_[it->second]["type"].get<std::string>();
}

nlohmann::json OnnxNetworkBuilder::document(const std::string& name, int64_t batch,
                                            const std::string& description) const {
  return {{"name", name}, {"description", description}, {"batch", batch}, {"inputs", inputs_}, {"layers", layers_}};
}

}  // namespace splitscope
