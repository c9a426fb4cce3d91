#include "ir/model_parser.hpp"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/layer_costs.hpp"
#include "ir/model_limits.hpp"
#include "util/errors.hpp"
#include "util/json_fields.hpp"

namespace splitscope {
namespace {

using nlohmann::json;

// No per-sample tensor may hold more than kMaxElements (model_limits.hpp), so
// that byte counts over a whole batch stay far from int64 overflow.

/// The shared input-file reader (util/json_fields.hpp) plus what only
/// network files have: sizes, kernel extents, activations.
class ObjectReader : public JsonFields {
 public:
  using JsonFields::JsonFields;

  void allow_only(const std::set<std::string>& allowed, const std::string& what) const {
    for (const auto& [key, value] : raw().items()) {
      if (allowed.count(key)) continue;
      std::string names;
      for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
      fail(key, "unknown field for " + what + "; allowed fields are " + names);
    }
  }

  int64_t positive_int(const json& value, const std::string& field) const {
    return checked_integer(value, field, 1, kMaxElements);
  }
  int64_t required_positive(const std::string& field, const std::string& what) const {
    return integer(field, what, 1, kMaxElements);
  }
  int64_t optional_positive(const std::string& field, int64_t fallback) const {
    return optional_integer(field, fallback, 1, kMaxElements);
  }

  /// An int or [h, w]; each part >= minimum.
  Extent2 extent(const std::string& field, Extent2 fallback, int64_t minimum) const {
    if (!has(field)) return fallback;
    const json& value = raw().at(field);
    if (value.is_array()) {
      if (value.size() != 2) fail(field, "must be an integer or [height, width]");
      return {checked_integer(value[0], field, minimum, kMaxElements),
              checked_integer(value[1], field, minimum, kMaxElements)};
    }
    const int64_t both = checked_integer(value, field, minimum, kMaxElements);
    return {both, both};
  }

  Activation activation() const {
    const std::string name = optional_string("activation", "none");
    const auto activation = activation_from_string(name);
    if (!activation) fail("activation", "unknown activation '" + name + "'; use none, relu, tanh or sigmoid");
    return *activation;
  }
};

const std::map<LayerKind, std::set<std::string>>& allowed_fields() {
  static const std::map<LayerKind, std::set<std::string>> fields = [] {
    const std::set<std::string> common{"type", "name", "comment", "inputs"};
    auto with = [&](std::set<std::string> extra) {
      extra.insert(common.begin(), common.end());
      return extra;
    };
    return std::map<LayerKind, std::set<std::string>>{
        {LayerKind::kDense, with({"units", "activation", "bias"})},
        {LayerKind::kConv2d,
         with({"filters", "kernel", "stride", "padding", "groups", "activation", "bias"})},
        {LayerKind::kMaxPool, with({"kernel", "stride", "padding"})},
        {LayerKind::kAvgPool, with({"kernel", "stride", "padding"})},
        {LayerKind::kFlatten, common},
        {LayerKind::kSoftmax, common},
        {LayerKind::kRelu, common},
        {LayerKind::kTanh, common},
        {LayerKind::kSigmoid, common},
        {LayerKind::kLstm, with({"hidden", "layers", "return_sequences", "bias"})},
        {LayerKind::kGru, with({"hidden", "layers", "return_sequences", "bias"})},
        {LayerKind::kAdd, common},
        {LayerKind::kConcat, common},
        {LayerKind::kBatchNorm, with({"epsilon", "momentum"})},
        {LayerKind::kLayerNorm, with({"epsilon"})},
        {LayerKind::kDropout, with({"rate"})},
        {LayerKind::kEmbedding, with({"vocab", "features", "positions"})},
        {LayerKind::kGelu, common},
        {LayerKind::kAttention, with({"heads", "causal"})},
        {LayerKind::kLinear, with({"units", "bias"})},
    };
  }();
  return fields;
}

std::string kind_list() {
  std::string text;
  for (const auto& [kind, fields] : allowed_fields()) {
    if (!text.empty()) text += ", ";
    text += std::string(to_string(kind));
  }
  return text;
}

/// Shape of the image after a window of `kernel` with `stride` and `padding`.
int64_t window_output(int64_t size, int64_t kernel, int64_t stride, int64_t padding) {
  return (size + 2 * padding - kernel) / stride + 1;
}

void check_kernel_fits(const ObjectReader& reader, const Layer& layer, const Shape& in,
                        Extent2 padding) {
  if (layer.kernel.h > in[1] + 2 * padding.h || layer.kernel.w > in[2] + 2 * padding.w) {
    reader.fail("kernel", "kernel " + std::to_string(layer.kernel.h) + "x" +
                              std::to_string(layer.kernel.w) + " is larger than the " +
                              (padding.h || padding.w ? "padded " : "") + "input " +
                              std::to_string(in[1] + 2 * padding.h) + "x" +
                              std::to_string(in[2] + 2 * padding.w));
  }
}

void require_image(const ObjectReader& reader, const Layer& layer, const Shape& in) {
  if (in.size() != 3) {
    reader.fail("", std::string(to_string(layer.kind)) +
                        " needs an image input [channels, height, width], but gets " +
                        to_string(in));
  }
}

bool is_join(LayerKind kind) { return kind == LayerKind::kAdd || kind == LayerKind::kConcat; }

/// add: two or more inputs of one shape.
Shape add_output(const ObjectReader& reader, const Layer& layer) {
  for (size_t i = 1; i < layer.input_shapes.size(); ++i) {
    if (layer.input_shapes[i] != layer.input_shapes[0]) {
      reader.fail("inputs", "add needs inputs of one shape, but '" + layer.inputs[0] + "' is " +
                                to_string(layer.input_shapes[0]) + " and '" + layer.inputs[i] + "' is " +
                                to_string(layer.input_shapes[i]));
    }
  }
  return layer.input_shapes[0];
}

/// concat: along axis 0 of flat vectors or of images of one height and width.
Shape concat_output(const ObjectReader& reader, const Layer& layer) {
  const Shape& first = layer.input_shapes[0];
  if (first.size() == 2) {
    reader.fail("inputs", "concat joins vectors [features] or images [channels, height, width], but '" +
                              layer.inputs[0] + "' is the sequence " + to_string(first) +
                              "; give its recurrent layer \"return_sequences\": false");
  }
  Shape out = first;
  for (size_t i = 1; i < layer.input_shapes.size(); ++i) {
    const Shape& shape = layer.input_shapes[i];
    const bool same_rank = shape.size() == first.size();
    const bool same_image = same_rank && (first.size() == 1 || (shape[1] == first[1] && shape[2] == first[2]));
    if (!same_image) {
      reader.fail("inputs", "concat joins along channels (or features) only, so its inputs must agree on the "
                            "other axes, but '" + layer.inputs[0] + "' is " + to_string(first) + " and '" +
                            layer.inputs[i] + "' is " + to_string(shape));
    }
    out[0] += shape[0];
  }
  return out;
}

/// Reads one layer's fields and infers its output shape from its inputs' shapes.
Layer parse_layer(const ObjectReader& reader, LayerKind kind, const std::vector<std::string>& inputs,
                  const std::vector<Shape>& input_shapes) {
  Layer layer;
  layer.kind = kind;
  layer.inputs = inputs;
  layer.input_shapes = input_shapes;
  layer.input_shape = input_shapes.at(0);
  const Shape& in = layer.input_shape;
  reader.allow_only(allowed_fields().at(kind), std::string(to_string(kind)));
  if (is_join(kind) && inputs.size() < 2) {
    reader.fail("inputs", std::string(to_string(kind)) + " joins two or more inputs, but reads only '" +
                              inputs[0] + "'; name them in \"inputs\"");
  }
  if (!is_join(kind) && inputs.size() != 1) {
    reader.fail("inputs", std::string(to_string(kind)) + " reads one input, but \"inputs\" names " +
                              std::to_string(inputs.size()) + "; join them first with an add or concat layer");
  }
  switch (kind) {
    case LayerKind::kDense: {
      layer.units = reader.required_positive("units", "the number of output neurons");
      layer.activation = reader.activation();
      layer.bias = reader.optional_bool("bias", true);
      if (in.size() == 3) {
        reader.fail("", "dense needs a flat input [features], but gets the image " + to_string(in) +
                            "; add {\"type\": \"flatten\"} before it");
      }
      if (in.size() == 2) {
        reader.fail("", "dense needs a flat input [features], but gets the sequence " +
                            to_string(in) +
                            "; give the recurrent layer \"return_sequences\": false, or add "
                            "{\"type\": \"flatten\"} before it");
      }
      layer.output_shape = {layer.units};
      break;
    }
    case LayerKind::kConv2d: {
      layer.filters = reader.required_positive("filters", "the number of output channels");
      reader.required("kernel", "the filter size, an int or [h, w]");
      layer.kernel = reader.extent("kernel", {0, 0}, 1);
      layer.stride = reader.extent("stride", {1, 1}, 1);
      layer.padding = reader.extent("padding", {0, 0}, 0);
      layer.groups = reader.optional_positive("groups", 1);
      layer.activation = reader.activation();
      layer.bias = reader.optional_bool("bias", true);
      require_image(reader, layer, in);
      if (in[0] % layer.groups != 0) {
        reader.fail("groups", "the input's " + std::to_string(in[0]) +
                                  " channels are not divisible by groups = " +
                                  std::to_string(layer.groups));
      }
      if (layer.filters % layer.groups != 0) {
        reader.fail("groups", "filters = " + std::to_string(layer.filters) +
                                  " is not divisible by groups = " + std::to_string(layer.groups));
      }
      check_kernel_fits(reader, layer, in, layer.padding);
      layer.output_shape = {layer.filters,
                            window_output(in[1], layer.kernel.h, layer.stride.h, layer.padding.h),
                            window_output(in[2], layer.kernel.w, layer.stride.w, layer.padding.w)};
      break;
    }
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      reader.required("kernel", "the window size, an int or [h, w]");
      layer.kernel = reader.extent("kernel", {0, 0}, 1);
      layer.stride = reader.extent("stride", layer.kernel, 1);
      layer.padding = reader.extent("padding", {0, 0}, 0);
      // At most half a window of padding, as in cuDNN and PyTorch: every
      // window then holds at least one real element, so a max is never -inf
      // and an average (over the real elements only) never divides by zero.
      if (2 * layer.padding.h > layer.kernel.h || 2 * layer.padding.w > layer.kernel.w) {
        reader.fail("padding", "padding " + std::to_string(layer.padding.h) + "x" + std::to_string(layer.padding.w) +
                                   " is more than half the " + std::to_string(layer.kernel.h) + "x" +
                                   std::to_string(layer.kernel.w) + " window; use at most kernel / 2");
      }
      require_image(reader, layer, in);
      check_kernel_fits(reader, layer, in, layer.padding);
      layer.output_shape = {in[0], window_output(in[1], layer.kernel.h, layer.stride.h, layer.padding.h),
                            window_output(in[2], layer.kernel.w, layer.stride.w, layer.padding.w)};
      break;
    }
    case LayerKind::kFlatten:
      layer.output_shape = {element_count(in)};
      break;
    case LayerKind::kSoftmax:
      if (in.size() != 1) {
        reader.fail("", "softmax needs a flat input [features], but gets " + to_string(in) +
                            "; add {\"type\": \"flatten\"} before it");
      }
      layer.output_shape = in;
      break;
    case LayerKind::kRelu:
    case LayerKind::kTanh:
    case LayerKind::kSigmoid:
      layer.output_shape = in;
      break;
    case LayerKind::kLstm:
    case LayerKind::kGru: {
      layer.hidden = reader.required_positive("hidden", "the number of hidden units");
      layer.stacked = reader.optional_positive("layers", 1);
      layer.return_sequences = reader.optional_bool("return_sequences", true);
      layer.bias = reader.optional_bool("bias", true);
      if (in.size() != 2) {
        reader.fail("", std::string(to_string(kind)) +
                            " needs a sequence input [steps, features], but gets " + to_string(in) +
                            "; put it first (with \"input\": [steps, features]) or after a "
                            "recurrent layer with \"return_sequences\": true");
      }
      layer.output_shape =
          layer.return_sequences ? Shape{in[0], layer.hidden} : Shape{layer.hidden};
      break;
    }
    case LayerKind::kAdd:
      layer.output_shape = add_output(reader, layer);
      break;
    case LayerKind::kConcat:
      layer.output_shape = concat_output(reader, layer);
      break;
    case LayerKind::kBatchNorm:
      layer.epsilon = reader.optional_number("epsilon", 1e-5, NumberRule::kPositive);
      layer.momentum = reader.optional_number("momentum", 0.1, NumberRule::kFraction);
      if (in.size() == 2) {
        reader.fail("", "batch_norm normalizes the channels of an image [channels, height, width] (after conv2d) or "
                        "the features of a vector [features] (after dense), but gets the sequence " +
                            to_string(in) + "; use layer_norm for sequences");
      }
      layer.output_shape = in;
      break;
    case LayerKind::kLayerNorm:
      layer.epsilon = reader.optional_number("epsilon", 1e-5, NumberRule::kPositive);
      if (in.size() == 3) {
        reader.fail("", "layer_norm normalizes the last axis of a vector [features] or a sequence [steps, features], "
                        "but gets the image " +
                            to_string(in) + "; use batch_norm after a convolution, or add {\"type\": \"flatten\"} first");
      }
      layer.output_shape = in;
      break;
    case LayerKind::kDropout:
      layer.rate = reader.optional_number("rate", 0.5, NumberRule::kNonNegative);
      if (layer.rate >= 1.0) reader.fail("rate", "the share of elements dropped must be below 1 (0.5 drops half)");
      layer.output_shape = in;
      break;
    case LayerKind::kEmbedding:
      layer.vocab = reader.required_positive("vocab", "the number of token ids (rows of the table)");
      layer.features = reader.required_positive("features", "the width of each token's vector");
      layer.positions = reader.optional_bool("positions", false);
      if (in.size() != 1) {
        reader.fail("", "embedding reads a sequence of token ids [positions], but gets " + to_string(in) +
                            "; give the network \"input\": [positions]");
      }
      layer.output_shape = {in[0], layer.features};
      break;
    case LayerKind::kGelu:
      layer.output_shape = in;
      break;
    case LayerKind::kAttention:
      layer.heads = reader.required_positive("heads", "the number of attention heads");
      layer.causal = reader.optional_bool("causal", false);
      if (in.size() != 2 || in[1] % 3 != 0) {
        reader.fail("", "attention reads a sequence [positions, 3·features] (each position's Q, K and V end to end, "
                        "as a dense layer of 3·features units per position writes them), but gets " +
                            to_string(in));
      }
      if ((in[1] / 3) % layer.heads != 0) {
        reader.fail("heads", "the " + std::to_string(in[1] / 3) + " features are not divisible by heads = " +
                                 std::to_string(layer.heads));
      }
      layer.output_shape = {in[0], in[1] / 3};
      break;
    case LayerKind::kLinear:
      layer.units = reader.required_positive("units", "the number of output features at each position");
      layer.bias = reader.optional_bool("bias", true);
      if (in.size() != 2) {
        reader.fail("", "linear applies a dense layer at each position of a sequence [positions, features], but gets " +
                            to_string(in) + "; use dense for a vector [features]");
      }
      layer.output_shape = {in[0], layer.units};
      break;
  }
  for (int64_t size : layer.output_shape) {
    if (size <= 0) reader.fail("", "the output shape " + to_string(layer.output_shape) + " is empty");
  }
  if (element_count(layer.output_shape) > kMaxElements) {
    reader.fail("", "the output " + to_string(layer.output_shape) + " is too large");
  }
  return layer;
}

/// One sample's shape at `field` of `parent` (`input`, or `inputs.NAME`).
Shape parse_shape(const ObjectReader& parent, const json& value, const std::string& field) {
  if (!value.is_array() || value.empty() || value.size() > 3) {
    parent.fail(field, "must be [features], [channels, height, width] or [steps, features]");
  }
  const ObjectReader elements(value, parent.path().empty() ? field : parent.path() + "." + field, parent.source());
  Shape shape;
  for (size_t i = 0; i < value.size(); ++i) {
    shape.push_back(elements.positive_int(value[i], "[" + std::to_string(i) + "]"));
  }
  if (element_count(shape) > kMaxElements) parent.fail(field, "is too large");
  return shape;
}

/// `"input": [shape]` (one input, named "input") or `"inputs": {"name": [shape], ...}`.
std::vector<NetworkInput> parse_inputs(const ObjectReader& top) {
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
  const ObjectReader reader(named, "inputs", top.source());
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
  ObjectReader reader;
  LayerKind kind = LayerKind::kDense;
  std::string name;
  std::vector<std::string> inputs;
};

/// `inputs`: a name or a list of names; the previous layer (the network's only
/// input for the first) when absent.
std::vector<std::string> parse_layer_inputs(const ObjectReader& reader, const std::vector<LayerEntry>& before,
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
  ObjectReader top(doc, "", source);
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
    ObjectReader reader(entry, path, source);
    const json& type = reader.required("type", "one of " + kind_list());
    if (!type.is_string()) reader.fail("type", "must be a string, got " + json_type_name(type));
    const auto kind = layer_kind_from_string(type.get<std::string>());
    if (!kind) {
      reader.fail("type", "unknown layer type '" + type.get<std::string>() + "'; known types are " +
                              kind_list());
    }
    reader.optional_string("comment", "");  // free text, but text
    std::string name = reader.optional_string("name", std::string(to_string(*kind)) + std::to_string(i));
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
      ObjectReader(top.raw().at("inputs"), "inputs", source).fail(input.name, problem);
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
