#pragma once
/// \file
/// The splitscope network an ONNX graph becomes, written as a network file's
/// JSON (docs/network-format.md) so that the one parser checks it and infers
/// its shapes, and `inspect --network-json` can hand it to the user to edit.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace splitscope {

/// A name or text from the file as printable ASCII: the file's strings are
/// bytes, the network file is JSON (UTF-8), and messages quote them.
std::string onnx_printable(const std::string& text);
/// How messages name a node: `node 'NAME' (OpType)`, both printable.
std::string onnx_node_label(const ::onnx::NodeProto& node);

class OnnxNetworkBuilder {
 public:
  /// A network input: its name and one sample's shape; returns the name it
  /// has in the network (made printable and unique).
  std::string add_input(const std::string& name, const std::vector<int64_t>& sample);

  /// Appends a layer of `type` made from `node`, reading `inputs` (layers or
  /// network inputs), with one sample's output shape `sample`; returns its
  /// name (the node's name, made unique).
  std::string add_layer(const ::onnx::NodeProto& node, const std::string& type, nlohmann::json fields,
                        const std::vector<std::string>& inputs, const std::vector<int64_t>& sample);

  /// One sample's shape of a layer or network input, as splitscope holds it.
  const std::vector<int64_t>& sample_shape(const std::string& name) const { return samples_.at(name); }
  /// How many layers read it so far.
  int readers(const std::string& name) const;
  /// Sets a field of an emitted layer (a recurrent layer's return_sequences).
  void set_field(const std::string& layer, const std::string& key, const nlohmann::json& value,
                 const std::vector<int64_t>& sample);
  /// The layer's `type`.
  std::string type_of(const std::string& layer) const;

  /// The network file: name, batch, inputs and layers.
  nlohmann::json document(const std::string& name, int64_t batch, const std::string& description) const;

 private:
  std::string unique_name(std::string base);

  nlohmann::json inputs_ = nlohmann::json::object();
  nlohmann::json layers_ = nlohmann::json::array();
  std::map<std::string, size_t> index_;  ///< layer name -> position in layers_
  std::map<std::string, std::vector<int64_t>> samples_;
  std::map<std::string, int> readers_;
  std::set<std::string> names_;
};

}  // namespace splitscope
