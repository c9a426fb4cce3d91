#include "ir/model_parser.hpp"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/model_limits.hpp"
#include "ir/network_fields.hpp"
#include "ir/ops/layer_def.hpp"
#include "util/errors.hpp"
#include "util/json_fields.hpp"

namespace splitscope {
namespace {

using nlohmann::json;

// No per-sample tensor may hold more than kMaxElements (model_limits.hpp), so
// that byte counts over a whole batch stay far from int64 overflow.

/// Reads one layer's fields and infers its output shape from its inputs'
/// shapes, as its type's definition says (ops/layer_def.hpp).
Layer parse_layer(const NetworkFields& reader, OpKind kind, const std::vector<std::string>& inputs,
                  const std::vector<Shape>& input_shapes) {
  const LayerDef& def = layer_def(kind);
  Layer layer;
  layer.kind = kind;
  layer.inputs = inputs;
  layer.input_shapes = input_shapes;
  layer.input_shape = input_shapes.at(0);
  std::set<std::string> allowed{"type", "name", "comment", "inputs"};
  allowed.insert(def.fields.begin(), def.fields.end());
  reader.allow_only(allowed, std::string(def.name));
  if (def.joins && inputs.size() < 2) {
    reader.fail("inputs", std::string(def.name) + " joins two or more inputs, but reads only '" + inputs[0] +
                              "'; name them in \"inputs\"");
  }
  if (!def.joins && inputs.size() != 1) {
    reader.fail("inputs", std::string(def.name) + " reads one input, but \"inputs\" names " +
                              std::to_string(inputs.size()) + "; join them first with an add or concat layer");
  }
  def.read(reader, layer);
  for (int64_t size : layer.output_shape) {
    if (size <= 0) reader.fail("", "the output shape " + to_string(layer.output_shape) + " is empty");
  }
  if (element_count(layer.output_shape) > kMaxElements) {
    reader.fail("", "the output " + to_string(layer.output_shape) + " is too large");
  }
  return layer;
}

/// One sample's shape at `field` of `parent` (`input`, or `inputs.NAME`).
Shape parse_shape(const NetworkFields& parent, const json& value, const std::string& field) {
  if (!value.is_array() || value.empty() || value.size() > 3) {
    parent.fail(field, "must be [features], [channels, height, width] or [steps, features]");
  }
  const NetworkFields elements(value, parent.path().empty() ? field : parent.path() + "." + field, parent.source());
  Shape shape;
  for (size_t i = 0; i < value.size(); ++i) {
    shape.push_back(elements.positive_int(value[i], "[" + std::to_string(i) + "]"));
  }
  if (element_count(shape) > kMaxElements) parent.fail(field, "is too large");
  return shape;
}

/// `"input": [shape]` (one input, named "input") or `"inputs": {"name": [shape], ...}`.
std::vector<NetworkInput> parse_inputs(const NetworkFields& top) {
  if (top.has("input") == top.has("inputs")) {
    top.fail(top.has("input") ? "inputs" : "input",
             top.has("input") ? "give either \"input\" (one input) or \"inputs\" (named inputs), not both"
                              : "missing required field (the shape of one sample, or \"inputs\": {\"name\": "
                                "shape, ...} for a network with several inputs)");
  }
  if (top.has("input")) return {{"input", parse_shape(top, top.raw().at("input"), "input")}};
  const json& named = top.raw().at("inputs");
  if (!named.is_object() || named.empty()) {
    top.fail("inputs", "must be an object of named input shapes, e.g. {\"left\": [3, 32, 32], \"right\": [3, 32, 32]}");
  }
  const NetworkFields reader(named, "inputs", top.source());
  std::vector<NetworkInput> inputs;
  for (const auto& [name, shape] : named.items()) {
    if (name.empty()) reader.fail(name, "an input needs a name");
    inputs.push_back({name, parse_shape(reader, shape, name)});
  }
  return inputs;
}

/// A layer as the file gives it, before its shapes are known.
struct LayerEntry {
  size_t index = 0;  ///< position in the file
  NetworkFields reader;
  OpKind kind = OpKind::kDense;
  std::string name;
  std::vector<std::string> inputs;
};

/// `inputs`: a name or a list of names; the previous layer (the network's only
/// input for the first) when absent.
std::vector<std::string> parse_layer_inputs(const NetworkFields& reader, const std::vector<LayerEntry>& before,
                                            const std::vector<NetworkInput>& network_inputs) {
  if (!reader.has("inputs")) {
    if (!before.empty()) return {before.back().name};
    if (network_inputs.size() == 1) return {network_inputs[0].name};
    std::string names;
    for (const NetworkInput& input : network_inputs) names += (names.empty() ? "" : ", ") + input.name;
    reader.fail("inputs", "missing: the network has several inputs (" + names + "), so the first layer must say "
                          "which it reads, e.g. \"inputs\": [\"" + network_inputs[0].name + "\"]");
  }
  const json& value = reader.raw().at("inputs");
  std::vector<std::string> names;
  if (value.is_string()) {
    names.push_back(value.get<std::string>());
  } else if (value.is_array() && !value.empty()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        reader.fail("inputs[" + std::to_string(i) + "]", "must be a layer or input name, got " + json_type_name(value[i]));
      }
      names.push_back(value[i].get<std::string>());
    }
  } else {
    reader.fail("inputs", "must be a name or a non-empty list of names of earlier layers or network inputs");
  }
  return names;
}

/// The layers in a dependency order, file order among independent ones
/// (Kahn's algorithm); a cycle is exit 2 naming the layers on it.
std::vector<size_t> dependency_order(const std::vector<LayerEntry>& entries,
                                     const std::map<std::string, size_t>& layer_index) {
  const size_t n = entries.size();
  std::vector<std::vector<size_t>> readers(n);
  std::vector<size_t> waiting(n, 0);
  for (const LayerEntry& entry : entries) {
    for (const std::string& input : entry.inputs) {
      const auto it = layer_index.find(input);
      if (it == layer_index.end()) continue;  // a network input
      readers[it->second].push_back(entry.index);
      ++waiting[entry.index];
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(next);
    for (size_t reader : readers[next]) {
      if (--waiting[reader] == 0) ready.insert(reader);
    }
  }
  if (order.size() == n) return order;
  // Walk back along unfinished inputs from an unfinished layer until one repeats: that loop is a cycle.
  size_t at = 0;
  while (waiting[at] == 0) ++at;
  std::vector<size_t> path;
  std::vector<int> seen(n, -1);
  while (seen[at] < 0) {
    seen[at] = static_cast<int>(path.size());
    path.push_back(at);
    for (const std::string& input : entries[at].inputs) {
      const auto it = layer_index.find(input);
      if (it != layer_index.end() && waiting[it->second] > 0) {
        at = it->second;
        break;
      }
    }
  }
  std::string cycle;
  for (size_t i = static_cast<size_t>(seen[at]); i < path.size(); ++i) cycle += entries[path[i]].name + " reads ";
  cycle += entries[at].name;
  entries[at].reader.fail("inputs", "the layers read each other in a cycle (" + cycle +
                                        "); a network is a graph without cycles");
}

Model parse_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) {
    throw InputError(source, "", "a network file is a JSON object, got " + json_type_name(doc));
  }
  NetworkFields top(doc, "", source);
  top.allow_only({"name", "batch", "input", "inputs", "layers", "description", "comment"}, "a network");
  Model model;
  model.source = source;
  // Free text, but text: as in machine files (a 100k-deep array is no comment).
  top.optional_string("comment", "");
  top.optional_string("description", "");
  model.name = top.optional_string("name", std::filesystem::path(source).stem().string());
  if (model.name.empty()) top.fail("name", "must not be empty");
  model.batch = top.required_positive("batch", "samples in one run");
  model.inputs = parse_inputs(top);
  model.input = model.inputs.front().shape;

  const json& layers = top.required("layers", "the list of layers");
  if (!layers.is_array()) top.fail("layers", "must be an array of layers, got " + json_type_name(layers));
  if (layers.empty()) top.fail("layers", "the list is empty; a network needs at least one layer");

  // 1. Each layer's kind, name and inputs, in file order.
  std::map<std::string, size_t> layer_index;
  std::map<std::string, Shape> input_shape_of;
  for (const NetworkInput& input : model.inputs) input_shape_of[input.name] = input.shape;
  std::vector<LayerEntry> entries;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string path = "layers[" + std::to_string(i) + "]";
    const json& entry = layers[i];
    if (!entry.is_object()) {
      throw InputError(source, path, "a layer is a JSON object, got " + json_type_name(entry));
    }
    NetworkFields reader(entry, path, source);
    const json& type = reader.required("type", "one of " + layer_type_list());
    if (!type.is_string()) reader.fail("type", "must be a string, got " + json_type_name(type));
    const auto kind = layer_kind_from_type(type.get<std::string>());
    if (!kind) {
      reader.fail("type", "unknown layer type '" + type.get<std::string>() + "'; known types are " +
                              layer_type_list());
    }
    reader.optional_string("comment", "");  // free text, but text
    std::string name = reader.optional_string("name", std::string(layer_type(*kind)) + std::to_string(i));
    if (name.empty()) reader.fail("name", "must not be empty");
    if (input_shape_of.count(name)) reader.fail("name", "'" + name + "' is already the name of a network input");
    if (auto [it, inserted] = layer_index.emplace(name, i); !inserted) {
      reader.fail("name", "'" + name + "' is already the name of layers[" + std::to_string(it->second) + "]");
    }
    std::vector<std::string> inputs = parse_layer_inputs(reader, entries, model.inputs);
    entries.push_back(LayerEntry{i, reader, *kind, std::move(name), std::move(inputs)});
  }

  // 2. Every input names a layer or a network input; every layer and input but the output is read.
  std::set<std::string> read;
  for (const LayerEntry& entry : entries) {
    for (size_t slot = 0; slot < entry.inputs.size(); ++slot) {
      const std::string& input = entry.inputs[slot];
      if (!layer_index.count(input) && !input_shape_of.count(input)) {
        std::string known;
        for (const NetworkInput& network_input : model.inputs) known += (known.empty() ? "" : ", ") + network_input.name;
        for (const LayerEntry& other : entries) known += ", " + other.name;
        entry.reader.fail("inputs", "no layer or network input is named '" + input + "'; the names are " + known);
      }
      if (input == entry.name) entry.reader.fail("inputs", "'" + input + "' reads itself; a network has no cycles");
      read.insert(input);
    }
  }
  const std::vector<size_t> order = dependency_order(entries, layer_index);
  const LayerEntry& output = entries[order.back()];
  for (const LayerEntry& entry : entries) {
    if (!read.count(entry.name) && entry.index != output.index) {
      entry.reader.fail("", "layer '" + entry.name + "' is not used: no layer reads it, and the network's one "
                            "output is '" + output.name + "'; name it in a later layer's \"inputs\" or remove it");
    }
  }
  for (const NetworkInput& input : model.inputs) {
    if (!read.count(input.name)) {
      const std::string problem = "the network input '" + input.name + "' is not read by any layer";
      if (!top.has("inputs")) top.fail("input", problem);
      NetworkFields(top.raw().at("inputs"), "inputs", source).fail(input.name, problem);
    }
  }

  // 3. Shapes, in dependency order.
  std::map<std::string, Shape> shape_of = input_shape_of;
  for (size_t i : order) {
    const LayerEntry& entry = entries[i];
    std::vector<Shape> shapes;
    for (const std::string& input : entry.inputs) shapes.push_back(shape_of.at(input));
    Layer layer = parse_layer(entry.reader, entry.kind, entry.inputs, shapes);
    layer.name = entry.name;
    shape_of[layer.name] = layer.output_shape;
    model.layers.push_back(std::move(layer));
  }
  check_model_limits(model);
  return model;
}

}  // namespace

Model parse_model_text(std::string_view text, const std::string& source) {
  return parse_document(parse_json_text(text, source), source);
}

Model load_model_file(const std::string& path) { return parse_model_text(read_input_file(path), path); }

}  // namespace splitscope
