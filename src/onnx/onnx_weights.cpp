#include "onnx/onnx_weights.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "onnx/onnx_constants.hpp"
#include "onnx/onnx_network_builder.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

using Form = OnnxLayerWeights::Form;

/// The tensor named `name`: an initializer, or a Constant node's value, or what an Identity of one gives
/// (PyTorch's exporter keeps one copy of equal initializers, such as fresh layer norms' ones and zeros, and
/// writes an Identity for each other use); null where none.
const ::onnx::TensorProto* find_tensor(const ::onnx::ModelProto& model, const std::string& name, int depth = 0) {
  for (const auto& tensor : model.graph().initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  for (const auto& node : model.graph().node()) {
    if (node.op_type() == "Identity" && node.input_size() == 1 && node.output_size() >= 1 && node.output(0) == name &&
        depth < 16) {
      return find_tensor(model, node.input(0), depth + 1);
    }
  }
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "Constant" || node.output_size() < 1 || node.output(0) != name) continue;
    for (const auto& attribute : node.attribute()) {
      if (attribute.name() == "value" && attribute.has_t()) return &attribute.t();
    }
  }
  return nullptr;
}

/// The tensor's elements by its dims; -1 for a negative dim or a count past 2^48 (no weight is that large).
int64_t element_count_of(const ::onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (const int64_t dim : tensor.dims()) {
    if (dim < 0 || (dim > 0 && count > (int64_t{1} << 48) / dim)) return -1;
    count *= dim;
  }
  return count;
}

/// Whether the tensor's elements are in the file as float or double, all of them (without decoding them:
/// `inspect` of a large model checks every weight).
bool holds_floats(const ::onnx::TensorProto& tensor) {
  const int64_t count = element_count_of(tensor);
  const auto type = tensor.data_type();
  if (type != ::onnx::TensorProto::FLOAT && type != ::onnx::TensorProto::DOUBLE) return false;
  if (tensor.has_raw_data()) {
    const size_t element = type == ::onnx::TensorProto::FLOAT ? sizeof(float) : sizeof(double);
    return count >= 0 && tensor.raw_data().size() == static_cast<size_t>(count) * element;
  }
  const int64_t held = type == ::onnx::TensorProto::FLOAT ? tensor.float_data_size() : tensor.double_data_size();
  return held == count;
}

/// Every element of tensor `name`, which onnx_weights_problem() found readable.
std::vector<double> values_of(const ::onnx::ModelProto& model, const std::string& name) {
  const ::onnx::TensorProto* tensor = find_tensor(model, name);
  SPLITSCOPE_CHECK(tensor != nullptr, "onnx weights: no tensor " + name);
  std::vector<double> values = onnx_tensor_values(*tensor, element_count_of(*tensor));
  SPLITSCOPE_CHECK(!values.empty() || element_count_of(*tensor) == 0, "onnx weights: unreadable tensor " + name);
  return values;
}

std::vector<float> as_floats(const std::vector<double>& values) { return {values.begin(), values.end()}; }

/// ONNX's gate order in a cell's stacked weights, by splitscope's gate
/// (params.hpp): LSTM i, f, g, o from ONNX's i, o, f, c; GRU r, z, n from
/// ONNX's z, r, h.
constexpr std::array<int64_t, 4> kLstmOnnxGate{0, 2, 3, 1};
constexpr std::array<int64_t, 3> kGruOnnxGate{1, 0, 2};

/// A cell's [Wx, Wh, b] (gate-major columns g·H + u) from ONNX's W [1, G·H, in], R [1, G·H, H] and B [1, 2·G·H].
std::vector<std::vector<float>> cell_tensors(const ::onnx::ModelProto& model, const OnnxLayerWeights& layer) {
  const bool lstm = layer.form == Form::kLstm;
  const int64_t gates = lstm ? 4 : 3;
  const int64_t hidden = layer.hidden;
  const auto onnx_gate = [&](int64_t gate) {
    return lstm ? kLstmOnnxGate[static_cast<size_t>(gate)] : kGruOnnxGate[static_cast<size_t>(gate)];
  };
  const std::vector<double> w = values_of(model, layer.tensors.at(0));
  const std::vector<double> r = values_of(model, layer.tensors.at(1));
  const int64_t in = static_cast<int64_t>(w.size()) / (gates * hidden);
  const int64_t columns = gates * hidden;
  std::vector<std::vector<float>> out(layer.tensors.at(2).empty() ? 2 : 3);
  out[0].resize(static_cast<size_t>(in * columns));
  out[1].resize(static_cast<size_t>(hidden * columns));
  for (int64_t g = 0; g < gates; ++g) {
    const int64_t from = onnx_gate(g) * hidden;
    for (int64_t u = 0; u < hidden; ++u) {
      for (int64_t i = 0; i < in; ++i) {
        out[0][static_cast<size_t>(i * columns + g * hidden + u)] = static_cast<float>(w[static_cast<size_t>((from + u) * in + i)]);
      }
      for (int64_t h = 0; h < hidden; ++h) {
        out[1][static_cast<size_t>(h * columns + g * hidden + u)] =
            static_cast<float>(r[static_cast<size_t>((from + u) * hidden + h)]);
      }
    }
  }
  if (out.size() == 3) {
    // One bias: ONNX's input and recurrent biases summed, but for a GRU's new gate, whose recurrent bias sits
    // inside the reset gate's product (onnx_weights_problem() requires it zero).
    const std::vector<double> b = values_of(model, layer.tensors.at(2));
    out[2].resize(static_cast<size_t>(columns));
    for (int64_t g = 0; g < gates; ++g) {
      const int64_t from = onnx_gate(g) * hidden;
      const bool recurrent_bias = lstm || g != 2;
      for (int64_t u = 0; u < hidden; ++u) {
        const double input_bias = b[static_cast<size_t>(from + u)];
        const double recurrent = recurrent_bias ? b[static_cast<size_t>(columns + from + u)] : 0.0;
        out[2][static_cast<size_t>(g * hidden + u)] = static_cast<float>(input_bias + recurrent);
      }
    }
  }
  return out;
}

/// Batch norm's gain and shift. Inference folds the running statistics in:
/// splitscope normalizes x by sqrt(1 + eps) there (a fresh layer's mean 0
/// and variance 1), so gamma' = scale·sqrt(1 + eps)/sqrt(var + eps) and
/// beta' = B - scale·mean/sqrt(var + eps) give the file's
/// scale·(x - mean)/sqrt(var + eps) + B.
std::vector<std::vector<float>> batch_norm_tensors(const ::onnx::ModelProto& model, const OnnxLayerWeights& layer,
                                                   bool training) {
  const std::vector<double> scale = values_of(model, layer.tensors.at(0));
  const std::vector<double> shift = values_of(model, layer.tensors.at(1));
  if (training) return {as_floats(scale), as_floats(shift)};
  const std::vector<double> mean = values_of(model, layer.tensors.at(2));
  const std::vector<double> variance = values_of(model, layer.tensors.at(3));
  std::vector<float> gamma(scale.size());
  std::vector<float> beta(scale.size());
  for (size_t c = 0; c < scale.size(); ++c) {
    const double inv_std = 1.0 / std::sqrt(variance[c] + layer.epsilon);
    gamma[c] = static_cast<float>(scale[c] * std::sqrt(1.0 + layer.epsilon) * inv_std);
    beta[c] = static_cast<float>(shift[c] - scale[c] * mean[c] * inv_std);
  }
  return {std::move(gamma), std::move(beta)};
}

}  // namespace

OnnxWeights::OnnxWeights(std::shared_ptr<const ::onnx::ModelProto> model, std::map<std::string, OnnxLayerWeights> layers)
    : model_(std::move(model)), layers_(std::move(layers)) {}

const std::vector<float>* OnnxWeights::tensor(const std::string& layer, int tensor, bool training) const {
  const auto found = layers_.find(layer);
  if (found == layers_.end()) return nullptr;
  // Only batch norm reads the two modes differently.
  const bool mode = found->second.form == Form::kBatchNorm && training;
  const std::lock_guard<std::mutex> lock(mutex_);
  auto converted = converted_.find({layer, mode});
  if (converted == converted_.end()) converted = converted_.emplace(std::pair{layer, mode}, convert(found->second, mode)).first;
  const auto& tensors = converted->second;
  return tensor >= 0 && static_cast<size_t>(tensor) < tensors.size() ? &tensors[static_cast<size_t>(tensor)] : nullptr;
}

std::vector<std::vector<float>> OnnxWeights::convert(const OnnxLayerWeights& layer, bool training) const {
  const ::onnx::ModelProto& model = *model_;
  switch (layer.form) {
    case Form::kDense:
    case Form::kEmbedding:
    case Form::kConv: {
      std::vector<std::vector<float>> out{as_floats(values_of(model, layer.tensors.at(0)))};
      if (!layer.tensors.at(1).empty()) out.push_back(as_floats(values_of(model, layer.tensors.at(1))));
      return out;
    }
    case Form::kDenseTransposed: {
      // Gemm's B [units, in] -> W [in, units].
      const ::onnx::TensorProto* b = find_tensor(model, layer.tensors.at(0));
      const int64_t units = b->dims(0);
      const int64_t in = b->dims(1);
      const std::vector<double> values = values_of(model, layer.tensors.at(0));
      std::vector<float> w(values.size());
      for (int64_t u = 0; u < units; ++u) {
        for (int64_t i = 0; i < in; ++i) w[static_cast<size_t>(i * units + u)] = static_cast<float>(values[static_cast<size_t>(u * in + i)]);
      }
      std::vector<std::vector<float>> out{std::move(w)};
      if (!layer.tensors.at(1).empty()) out.push_back(as_floats(values_of(model, layer.tensors.at(1))));
      return out;
    }
    case Form::kJoinedProjections: {
      // W [in, 3·width]: each row Wq's, Wk's and Wv's end to end; b likewise.
      std::vector<std::vector<double>> w;
      for (size_t i = 0; i < 3; ++i) w.push_back(values_of(model, layer.tensors.at(i)));
      const size_t width = static_cast<size_t>(find_tensor(model, layer.tensors.at(0))->dims(1));
      const size_t in = width == 0 ? 0 : w[0].size() / width;
      std::vector<float> joined(3 * in * width);
      for (size_t row = 0; row < in; ++row) {
        for (size_t part = 0; part < 3; ++part) {
          for (size_t col = 0; col < width; ++col) {
            joined[row * 3 * width + part * width + col] = static_cast<float>(w[part][row * width + col]);
          }
        }
      }
      std::vector<std::vector<float>> out{std::move(joined)};
      if (!layer.tensors.at(3).empty()) {
        std::vector<float> bias;
        for (size_t i = 3; i < 6; ++i) {
          const std::vector<float> part = as_floats(values_of(model, layer.tensors.at(i)));
          bias.insert(bias.end(), part.begin(), part.end());
        }
        out.push_back(std::move(bias));
      }
      return out;
    }
    case Form::kBatchNorm: return batch_norm_tensors(model, layer, training);
    case Form::kLayerNorm: {
      // A decomposed layer norm without its Mul or Add scales by 1 or shifts by 0.
      std::vector<float> gamma = layer.tensors.at(0).empty() ? std::vector<float>(static_cast<size_t>(layer.hidden), 1.0f)
                                                            : as_floats(values_of(model, layer.tensors.at(0)));
      std::vector<float> beta = layer.tensors.at(1).empty() ? std::vector<float>(gamma.size(), 0.0f)
                                                           : as_floats(values_of(model, layer.tensors.at(1)));
      return {std::move(gamma), std::move(beta)};
    }
    case Form::kLstm:
    case Form::kGru: return cell_tensors(model, layer);
  }
  return {};
}

std::string onnx_weights_problem(const ::onnx::ModelProto& model, const std::map<std::string, OnnxLayerWeights>& layers) {
  // Named members, not a structured binding: clang 14 (scripts/fuzz) refuses lambdas that capture those.
  for (const auto& entry : layers) {
    const std::string& layer = entry.first;
    const OnnxLayerWeights& weights = entry.second;
    for (const std::string& name : weights.tensors) {
      if (name.empty()) continue;
      const ::onnx::TensorProto* tensor = find_tensor(model, name);
      if (tensor == nullptr || element_count_of(*tensor) < 0) {
        return fmt::format("layer '{}': its weights '{}' are computed in the graph, not stored in the file",
                           onnx_printable(layer), onnx_printable(name));
      }
      if (tensor->data_location() == ::onnx::TensorProto::EXTERNAL) {
        return fmt::format("layer '{}': its weights '{}' are external data, which splitscope does not read",
                           onnx_printable(layer), onnx_printable(name));
      }
      if (!holds_floats(*tensor)) {
        return fmt::format("layer '{}': its weights '{}' are not stored as float or double", onnx_printable(layer),
                           onnx_printable(name));
      }
    }
    // The sizes the conversions index by, where the node's mapping did not check them already.
    const auto count_of = [&](size_t slot) {
      return weights.tensors.at(slot).empty() ? -1 : element_count_of(*find_tensor(model, weights.tensors.at(slot)));
    };
    std::vector<std::pair<size_t, int64_t>> expected;  // (slot, elements)
    if (weights.form == Form::kLstm || weights.form == Form::kGru) {
      const int64_t columns = (weights.form == Form::kLstm ? 4 : 3) * weights.hidden;
      expected = {{1, columns * weights.hidden}, {2, 2 * columns}};
    } else if (weights.form == Form::kLayerNorm && count_of(0) >= 0) {
      expected = {{1, count_of(0)}};
    } else if (weights.form == Form::kConv) {
      const ::onnx::TensorProto* filters = find_tensor(model, weights.tensors.at(0));
      expected = {{1, filters->dims_size() > 0 ? filters->dims(0) : 0}};
    }
    for (const auto& [slot, elements] : expected) {
      const int64_t held = count_of(slot);
      if (held >= 0 && held != elements) {
        return fmt::format("layer '{}': its tensor '{}' holds {} elements where {} were expected", onnx_printable(layer),
                           onnx_printable(weights.tensors.at(slot)), held, elements);
      }
    }
    if (weights.form == Form::kGru && !weights.tensors.at(2).empty()) {
      const std::vector<double> b = values_of(model, weights.tensors.at(2));
      const auto hidden = static_cast<size_t>(weights.hidden);
      // ONNX's B is [Wb_z, Wb_r, Wb_h, Rb_z, Rb_r, Rb_h]: Rb_h from 5·H.
      for (size_t u = 0; u < hidden && 5 * hidden + u < b.size(); ++u) {
        if (b[5 * hidden + u] != 0.0) {
          return fmt::format("layer '{}' (GRU): its recurrent bias of the new gate (PyTorch's b_hn) is not zero, and "
                             "splitscope's GRU has one bias, outside the reset gate (docs/network-format.md)",
                             onnx_printable(layer));
        }
      }
    }
  }
  return "";
}

}  // namespace splitscope
