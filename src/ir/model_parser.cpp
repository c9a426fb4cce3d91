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
    const std::set<std::string> common{"type", "name", "comment"};
    auto with = [&](std::set<std::string> extra) {
      extra.insert(common.begin(), common.end());
      return extra;
    };
    return std::map<LayerKind, std::set<std::string>>{
        {LayerKind::kDense, with({"units", "activation", "bias"})},
        {LayerKind::kConv2d,
         with({"filters", "kernel", "stride", "padding", "groups", "activation", "bias"})},
        {LayerKind::kMaxPool, with({"kernel", "stride"})},
        {LayerKind::kAvgPool, with({"kernel", "stride"})},
        {LayerKind::kFlatten, common},
        {LayerKind::kSoftmax, common},
        {LayerKind::kRelu, common},
        {LayerKind::kTanh, common},
        {LayerKind::kSigmoid, common},
        {LayerKind::kLstm, with({"hidden", "layers", "return_sequences", "bias"})},
        {LayerKind::kGru, with({"hidden", "layers", "return_sequences", "bias"})},
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

/// Reads one layer's fields and infers its output shape from `in`.
Layer parse_layer(const ObjectReader& reader, LayerKind kind, const Shape& in) {
  Layer layer;
  layer.kind = kind;
  layer.input_shape = in;
  reader.allow_only(allowed_fields().at(kind), std::string(to_string(kind)));
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
      require_image(reader, layer, in);
      check_kernel_fits(reader, layer, in, {0, 0});
      layer.output_shape = {in[0], window_output(in[1], layer.kernel.h, layer.stride.h, 0),
                            window_output(in[2], layer.kernel.w, layer.stride.w, 0)};
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
  }
  for (int64_t size : layer.output_shape) {
    if (size <= 0) reader.fail("", "the output shape " + to_string(layer.output_shape) + " is empty");
  }
  if (element_count(layer.output_shape) > kMaxElements) {
    reader.fail("", "the output " + to_string(layer.output_shape) + " is too large");
  }
  return layer;
}

Shape parse_input(const ObjectReader& top) {
  const json& value = top.required("input", "the shape of one sample");
  if (!value.is_array() || value.empty() || value.size() > 3) {
    top.fail("input", "must be [features], [channels, height, width] or [steps, features]");
  }
  const ObjectReader elements(value, "input", top.source());
  Shape shape;
  for (size_t i = 0; i < value.size(); ++i) {
    shape.push_back(elements.positive_int(value[i], "[" + std::to_string(i) + "]"));
  }
  if (element_count(shape) > kMaxElements) top.fail("input", "is too large");
  return shape;
}

Model parse_document(const json& doc, const std::string& source) {
  if (!doc.is_object()) {
    throw InputError(source, "", "a network file is a JSON object, got " + json_type_name(doc));
  }
  ObjectReader top(doc, "", source);
  top.allow_only({"name", "batch", "input", "layers", "description", "comment"}, "a network");
  Model model;
  model.source = source;
  // Free text, but text: as in machine files (a 100k-deep array is no comment).
  top.optional_string("comment", "");
  top.optional_string("description", "");
  model.name = top.optional_string("name", std::filesystem::path(source).stem().string());
  if (model.name.empty()) top.fail("name", "must not be empty");
  model.batch = top.required_positive("batch", "samples in one run");
  model.input = parse_input(top);

  const json& layers = top.required("layers", "the list of layers");
  if (!layers.is_array()) top.fail("layers", "must be an array of layers, got " + json_type_name(layers));
  if (layers.empty()) top.fail("layers", "the list is empty; a network needs at least one layer");

  Shape shape = model.input;
  std::map<std::string, size_t> names;
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
    reader.optional_string("comment", "");
    Layer layer = parse_layer(reader, *kind, shape);
    layer.name = reader.optional_string("name", std::string(to_string(*kind)) + std::to_string(i));
    if (layer.name.empty()) reader.fail("name", "must not be empty");
    if (auto [it, inserted] = names.emplace(layer.name, i); !inserted) {
      reader.fail("name", "'" + layer.name + "' is already the name of layers[" +
                              std::to_string(it->second) + "]");
    }
    shape = layer.output_shape;
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
