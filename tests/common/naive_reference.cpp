#include "naive_reference.hpp"

#include <stdexcept>
#include <algorithm>
#include <cmath>
#include <map>

#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/dropout_mask.hpp"
#include "ir/params.hpp"
#include "ir/zoo.hpp"

namespace splitscope::testing_support {
namespace {

using Tensor = std::vector<double>;  // [batch][...sample shape]

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// Every element of weight tensor `index` of `node`, one of them nudged.
Tensor weights(const Graph& graph, NodeId node, int index, uint64_t seed, const WeightNudge& nudge) {
  const auto params = param_tensors(graph, node);
  if (index >= static_cast<int>(params.size())) return {};
  const ParamTensor& tensor = params[static_cast<size_t>(index)];
  Tensor out(static_cast<size_t>(element_count(tensor.shape)));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = tensor.offset + param_value(seed, graph.node(node).param_key, index, static_cast<int64_t>(i), tensor.scale);
  }
  if (nudge.param_key == graph.node(node).param_key && nudge.tensor == index) {
    out.at(static_cast<size_t>(nudge.element)) += nudge.delta;
  }
  return out;
}

class Evaluator {
 public:
  Evaluator(const Graph& graph, uint64_t seed, WeightNudge nudge = {})
      : graph_(graph), seed_(seed), nudge_(nudge), batch_(graph.batch()) {}

  Tensor output() {
    for (NodeId id : graph_.topological_order()) evaluate(id);
    return values_.at({graph_.output().node, graph_.output().output});
  }

 private:
  const Tensor* input(NodeId id, int slot) const {
    const auto ref = graph_.inputs(id).at(static_cast<size_t>(slot));
    if (!ref) return nullptr;
    return &values_.at({ref->node, ref->output});
  }

  void evaluate(NodeId id) {
    const OpNode& node = graph_.node(id);
    const int64_t out_size = element_count(node.output_shapes.at(0));
    Tensor out(static_cast<size_t>(batch_ * out_size));
    switch (node.kind) {
      case OpKind::kInput: {
        const Shape& sample = graph_.model().inputs.at(static_cast<size_t>(node.attrs.input_index)).shape;
        const int64_t per_sample = element_count(sample);
        const int64_t offset = node.step >= 0 ? node.step * sample.at(1) : 0;
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t i = 0; i < out_size; ++i) {
            out[static_cast<size_t>(b * out_size + i)] = network_input_value(seed_, b * per_sample + offset + i, node.attrs.input_index, node.attrs.vocab);
          }
        }
        break;
      }
      case OpKind::kDense: {
        const Layer& layer = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
        const Tensor& x = *input(id, 0);
        const Tensor w = weights(graph_, id, kWeight, seed_, nudge_);
        const Tensor bias = weights(graph_, id, kBias, seed_, nudge_);
        const int64_t in = node.input_shapes[0][0], units = layer.units;
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t j = 0; j < units; ++j) {
            double sum = bias.empty() ? 0 : bias[static_cast<size_t>(j)];
            for (int64_t i = 0; i < in; ++i) sum += x[static_cast<size_t>(b * in + i)] * w[static_cast<size_t>(i * units + j)];
            out[static_cast<size_t>(b * units + j)] = naive_activation(layer.attrs.activation, sum);
          }
        }
        break;
      }
      case OpKind::kConv2d: {
        const Layer& l = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
        const NaiveConv conv{l.input_shape[0], l.input_shape[1], l.input_shape[2], l.filters, l.attrs.groups,
                             l.attrs.kernel.h, l.attrs.kernel.w, l.attrs.stride.h, l.attrs.stride.w,
                             l.attrs.padding.h, l.attrs.padding.w};
        out = naive_conv(conv, batch_, *input(id, 0), weights(graph_, id, kWeight, seed_, nudge_), weights(graph_, id, kBias, seed_, nudge_));
        for (double& v : out) v = naive_activation(l.attrs.activation, v);
        break;
      }
      case OpKind::kMaxPool:
      case OpKind::kAvgPool: {
        const Layer& l = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
        const Tensor& x = *input(id, 0);
        const int64_t c_count = l.input_shape[0], h = l.input_shape[1], w = l.input_shape[2];
        const int64_t oh = l.output_shape[1], ow = l.output_shape[2];
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t c = 0; c < c_count; ++c) {
            for (int64_t y = 0; y < oh; ++y) {
              for (int64_t xx = 0; xx < ow; ++xx) {
                double best = -1e300, sum = 0;
                int64_t count = 0;  // padding adds no values: an average is over the real ones
                for (int64_t i = 0; i < l.attrs.kernel.h; ++i) {
                  for (int64_t j = 0; j < l.attrs.kernel.w; ++j) {
                    const int64_t row = y * l.attrs.stride.h - l.attrs.padding.h + i,
                                  col = xx * l.attrs.stride.w - l.attrs.padding.w + j;
                    if (row < 0 || row >= h || col < 0 || col >= w) continue;
                    const double v = x[static_cast<size_t>(((b * c_count + c) * h + row) * w + col)];
                    best = std::max(best, v);
                    sum += v;
                    ++count;
                  }
                }
                out[static_cast<size_t>(((b * c_count + c) * oh + y) * ow + xx)] =
                    node.kind == OpKind::kMaxPool ? best : sum / static_cast<double>(count);
              }
            }
          }
        }
        break;
      }
      case OpKind::kFlatten:
        out = *input(id, 0);
        break;
      case OpKind::kRelu:
      case OpKind::kTanh:
      case OpKind::kSigmoid: {
        const Activation a = node.kind == OpKind::kRelu ? Activation::kRelu
                             : node.kind == OpKind::kTanh ? Activation::kTanh : Activation::kSigmoid;
        out = *input(id, 0);
        for (double& v : out) v = naive_activation(a, v);
        break;
      }
      case OpKind::kSoftmax: {
        // Over the last axis.
        const Tensor& x = *input(id, 0);
        const int64_t length = node.output_shapes[0].back();
        for (size_t start = 0; start < x.size(); start += static_cast<size_t>(length)) {
          double largest = -1e300, sum = 0;
          for (int64_t j = 0; j < length; ++j) largest = std::max(largest, x[start + static_cast<size_t>(j)]);
          for (int64_t j = 0; j < length; ++j) sum += std::exp(x[start + static_cast<size_t>(j)] - largest);
          for (int64_t j = 0; j < length; ++j) out[start + static_cast<size_t>(j)] = std::exp(x[start + static_cast<size_t>(j)] - largest) / sum;
        }
        break;
      }
      case OpKind::kLstmCell:
      case OpKind::kGruCell:
        cell(id, out);
        return;
      case OpKind::kStack: {
        const int64_t steps = node.output_shapes[0][0], hidden = node.output_shapes[0][1];
        for (int64_t t = 0; t < steps; ++t) {
          const Tensor& h = *input(id, static_cast<int>(t));
          for (int64_t b = 0; b < batch_; ++b) {
            for (int64_t u = 0; u < hidden; ++u) out[static_cast<size_t>((b * steps + t) * hidden + u)] = h[static_cast<size_t>(b * hidden + u)];
          }
        }
        break;
      }
      case OpKind::kAdd:
        out = *input(id, 0);
        for (size_t slot = 1; slot < node.input_shapes.size(); ++slot) {
          const Tensor& x = *input(id, static_cast<int>(slot));
          for (size_t i = 0; i < out.size(); ++i) out[i] += x[i];
        }
        break;
      case OpKind::kLoss:
      case OpKind::kActivationGrad:
      case OpKind::kDenseGradInput:
      case OpKind::kDenseGradWeight:
      case OpKind::kConv2dGradInput:
      case OpKind::kConv2dGradWeight:
      case OpKind::kMaxPoolGrad:
      case OpKind::kAvgPoolGrad:
      case OpKind::kUnflatten:
      case OpKind::kChannelSlice:
      case OpKind::kLstmCellGrad:
      case OpKind::kGruCellGrad:
      case OpKind::kCellGradInput:
      case OpKind::kCellGradHidden:
      case OpKind::kCellGradWeight:
      case OpKind::kBatchNormGradInput:
      case OpKind::kBatchNormGradWeight:
      case OpKind::kLayerNormGradInput:
      case OpKind::kLayerNormGradWeight:
      case OpKind::kGeluGrad:
      case OpKind::kEmbeddingGradWeight:
      case OpKind::kAttentionGrad:
      case OpKind::kLinearGradInput:
      case OpKind::kLinearGradWeight:
        throw std::logic_error("the naive reference computes forward passes only, not " + node.name);
      case OpKind::kConcat: {
        // Per sample: each input's elements in turn (axis 0 is the outermost).
        int64_t at = 0;
        for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
          const Tensor& x = *input(id, static_cast<int>(slot));
          const int64_t size = element_count(node.input_shapes[slot]);
          for (int64_t b = 0; b < batch_; ++b) {
            for (int64_t i = 0; i < size; ++i) out[static_cast<size_t>(b * out_size + at + i)] = x[static_cast<size_t>(b * size + i)];
          }
          at += size;
        }
        break;
      }
      case OpKind::kBatchNorm: {
        // Per channel over (batch, inner): the batch's statistics in a
        // training step, else a fresh layer's running ones (mean 0, variance 1).
        const Tensor& x = *input(id, 0);
        const Tensor gamma = weights(graph_, id, 0, seed_, nudge_);
        const Tensor beta = weights(graph_, id, 1, seed_, nudge_);
        const int64_t channels = node.output_shapes[0][0];
        const int64_t inner = inner_count(node.output_shapes[0]);
        const auto at = [&](int64_t b, int64_t c, int64_t i) { return static_cast<size_t>((b * channels + c) * inner + i); };
        for (int64_t c = 0; c < channels; ++c) {
          double mean = 0, var = 1;
          if (node.attrs.training) {
            double sum = 0, squares = 0;
            for (int64_t b = 0; b < batch_; ++b) for (int64_t i = 0; i < inner; ++i) sum += x[at(b, c, i)];
            mean = sum / static_cast<double>(batch_ * inner);
            for (int64_t b = 0; b < batch_; ++b) for (int64_t i = 0; i < inner; ++i) squares += (x[at(b, c, i)] - mean) * (x[at(b, c, i)] - mean);
            var = squares / static_cast<double>(batch_ * inner);
          }
          const double inv_std = 1 / std::sqrt(var + node.attrs.epsilon);
          for (int64_t b = 0; b < batch_; ++b) {
            for (int64_t i = 0; i < inner; ++i) {
              out[at(b, c, i)] = gamma[static_cast<size_t>(c)] * (x[at(b, c, i)] - mean) * inv_std + beta[static_cast<size_t>(c)];
            }
          }
        }
        break;
      }
      case OpKind::kLayerNorm: {
        const Tensor& x = *input(id, 0);
        const Tensor gamma = weights(graph_, id, 0, seed_, nudge_);
        const Tensor beta = weights(graph_, id, 1, seed_, nudge_);
        const int64_t features = node.output_shapes[0].back();
        for (size_t run = 0; run < out.size() / static_cast<size_t>(features); ++run) {
          const size_t first = run * static_cast<size_t>(features);
          double mean = 0, squares = 0;
          for (int64_t f = 0; f < features; ++f) mean += x[first + static_cast<size_t>(f)];
          mean /= static_cast<double>(features);
          for (int64_t f = 0; f < features; ++f) squares += (x[first + static_cast<size_t>(f)] - mean) * (x[first + static_cast<size_t>(f)] - mean);
          const double inv_std = 1 / std::sqrt(squares / static_cast<double>(features) + node.attrs.epsilon);
          for (int64_t f = 0; f < features; ++f) {
            const size_t i = first + static_cast<size_t>(f);
            out[i] = gamma[static_cast<size_t>(f)] * (x[i] - mean) * inv_std + beta[static_cast<size_t>(f)];
          }
        }
        break;
      }
      case OpKind::kLinear: {
        const Tensor& x = *input(id, 0);
        const Tensor w = weights(graph_, id, kWeight, seed_, nudge_);
        const Tensor bias = weights(graph_, id, kBias, seed_, nudge_);
        const int64_t positions = node.input_shapes[0][0], in = node.input_shapes[0][1];
        const int64_t units = node.output_shapes[0][1];
        for (int64_t row = 0; row < batch_ * positions; ++row) {
          for (int64_t j = 0; j < units; ++j) {
            double sum = bias.empty() ? 0 : bias[static_cast<size_t>(j)];
            for (int64_t i = 0; i < in; ++i) sum += x[static_cast<size_t>(row * in + i)] * w[static_cast<size_t>(i * units + j)];
            out[static_cast<size_t>(row * units + j)] = sum;
          }
        }
        break;
      }
      case OpKind::kGelu: {
        const Tensor& x = *input(id, 0);
        for (size_t i = 0; i < out.size(); ++i) out[i] = 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0)));
        break;
      }
      case OpKind::kEmbedding: {
        const Tensor& ids = *input(id, 0);
        const Tensor table = weights(graph_, id, 0, seed_, nudge_);
        const Tensor positional = weights(graph_, id, 1, seed_, nudge_);
        const int64_t positions = node.output_shapes[0][0], features = node.output_shapes[0][1];
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t t = 0; t < positions; ++t) {
            const auto row = static_cast<int64_t>(ids[static_cast<size_t>(b * positions + t)]);
            for (int64_t f = 0; f < features; ++f) {
              out[static_cast<size_t>((b * positions + t) * features + f)] =
                  table[static_cast<size_t>(row * features + f)] +
                  (positional.empty() ? 0.0 : positional[static_cast<size_t>(t * features + f)]);
            }
          }
        }
        break;
      }
      case OpKind::kAttention: {
        // softmax(Q·Kᵀ/√d + mask)·V per sample and head, straight from the definition.
        const Tensor& qkv = *input(id, 0);
        const int64_t positions = node.output_shapes[0][0], features = node.output_shapes[0][1];
        const int64_t heads = node.attrs.heads, d = features / heads;
        const auto q = [&](int64_t b, int64_t t, int64_t e) { return qkv[static_cast<size_t>((b * positions + t) * 3 * features + e)]; };
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t h = 0; h < heads; ++h) {
            for (int64_t i = 0; i < positions; ++i) {
              std::vector<double> p(static_cast<size_t>(positions), 0.0);
              double total = 0;
              for (int64_t j = 0; j < positions; ++j) {
                if (node.attrs.causal && j > i) continue;
                double dot = 0;
                for (int64_t e = 0; e < d; ++e) dot += q(b, i, h * d + e) * q(b, j, features + h * d + e);
                p[static_cast<size_t>(j)] = std::exp(dot / std::sqrt(static_cast<double>(d)));
                total += p[static_cast<size_t>(j)];
              }
              for (int64_t e = 0; e < d; ++e) {
                double sum = 0;
                for (int64_t j = 0; j < positions; ++j) sum += p[static_cast<size_t>(j)] / total * q(b, j, 2 * features + h * d + e);
                out[static_cast<size_t>((b * positions + i) * features + h * d + e)] = sum;
              }
            }
          }
        }
        break;
      }
      case OpKind::kDropout: {
        const Tensor& x = *input(id, 0);
        const double scale = 1 / (1 - static_cast<double>(static_cast<float>(node.attrs.rate)));
        for (size_t i = 0; i < out.size(); ++i) {
          const bool keep = dropout_keeps(node.layer, static_cast<int64_t>(i), static_cast<float>(node.attrs.rate));
          out[i] = !node.attrs.training ? x[i] : keep ? x[i] * scale : 0.0;
        }
        break;
      }
      case OpKind::kStepSlice: {
        const Tensor& x = *input(id, 0);
        const int64_t steps = node.input_shapes[0][0], features = node.input_shapes[0][1];
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t f = 0; f < features; ++f) out[static_cast<size_t>(b * features + f)] = x[static_cast<size_t>((b * steps + node.step) * features + f)];
        }
        break;
      }
    }
    values_[{id, 0}] = std::move(out);
  }

  /// params.hpp's gate equations, one unit at a time.
  void cell(NodeId id, Tensor& h_out) {
    const OpNode& node = graph_.node(id);
    const Layer& layer = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
    const bool lstm = node.kind == OpKind::kLstmCell;
    const int64_t gates = lstm ? 4 : 3, hidden = layer.attrs.hidden, in = node.input_shapes[0][0];
    const Tensor wx = weights(graph_, id, kInputWeight, seed_, nudge_);
    const Tensor wh = weights(graph_, id, kRecurrentWeight, seed_, nudge_);
    const Tensor bias = weights(graph_, id, kCellBias, seed_, nudge_);
    const Tensor& x = *input(id, kCellInputSlot);
    const Tensor* h = input(id, kCellHiddenSlot);
    const Tensor* c = lstm ? input(id, kCellStateSlot) : nullptr;
    Tensor c_out(static_cast<size_t>(batch_ * hidden));
    for (int64_t b = 0; b < batch_; ++b) {
      const auto gate = [&](int64_t g, int64_t u, bool with_h) {
        const int64_t column = g * hidden + u;
        double s = bias.empty() ? 0 : bias[static_cast<size_t>(column)];
        for (int64_t k = 0; k < in; ++k) s += x[static_cast<size_t>(b * in + k)] * wx[static_cast<size_t>(k * gates * hidden + column)];
        if (with_h && h != nullptr) {
          for (int64_t k = 0; k < hidden; ++k) s += (*h)[static_cast<size_t>(b * hidden + k)] * wh[static_cast<size_t>(k * gates * hidden + column)];
        }
        return s;
      };
      const auto recurrent = [&](int64_t g, int64_t u) {
        double s = 0;
        if (h == nullptr) return s;
        for (int64_t k = 0; k < hidden; ++k) s += (*h)[static_cast<size_t>(b * hidden + k)] * wh[static_cast<size_t>(k * gates * hidden + g * hidden + u)];
        return s;
      };
      for (int64_t u = 0; u < hidden; ++u) {
        const size_t at = static_cast<size_t>(b * hidden + u);
        const double h_prev = h != nullptr ? (*h)[at] : 0;
        if (lstm) {
          const double i = sigmoid(gate(0, u, true)), f = sigmoid(gate(1, u, true));
          const double g = std::tanh(gate(2, u, true)), o = sigmoid(gate(3, u, true));
          const double c_next = f * (c != nullptr ? (*c)[at] : 0) + i * g;
          c_out[at] = c_next;
          h_out[at] = o * std::tanh(c_next);
        } else {
          const double r = sigmoid(gate(0, u, true)), z = sigmoid(gate(1, u, true));
          const double n = std::tanh(gate(2, u, false) + r * recurrent(2, u));
          h_out[at] = (1 - z) * n + z * h_prev;
        }
      }
    }
    values_[{id, kCellHiddenOutput}] = std::move(h_out);
    if (lstm) values_[{id, kCellStateOutput}] = std::move(c_out);
  }

  const Graph& graph_;
  uint64_t seed_;
  WeightNudge nudge_;
  int64_t batch_;
  std::map<std::pair<NodeId, int>, Tensor> values_;
};

}  // namespace

double naive_activation(Activation activation, double x) {
  switch (activation) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0 ? x : 0;
    case Activation::kTanh: return std::tanh(x);
    case Activation::kSigmoid: return 1 / (1 + std::exp(-x));
  }
  return x;
}

std::vector<double> naive_conv(const NaiveConv& g, int64_t rows, const std::vector<double>& in,
                               const std::vector<double>& w, const std::vector<double>& b) {
  const int64_t oh = g.out_h(), ow = g.out_w(), cg = g.in_channels / g.groups, fg = g.filters / g.groups;
  std::vector<double> out(static_cast<size_t>(rows * g.filters * oh * ow));
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t f = 0; f < g.filters; ++f) {
      const int64_t group = f / fg;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          double sum = b.empty() ? 0.0 : b[static_cast<size_t>(f)];
          for (int64_t c = 0; c < cg; ++c) {
            for (int64_t i = 0; i < g.kernel_h; ++i) {
              for (int64_t j = 0; j < g.kernel_w; ++j) {
                const int64_t iy = y * g.stride_h - g.pad_h + i, ix = x * g.stride_w - g.pad_w + j;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                sum += w[static_cast<size_t>(((f * cg + c) * g.kernel_h + i) * g.kernel_w + j)] *
                       in[static_cast<size_t>(((n * g.in_channels + group * cg + c) * g.in_h + iy) * g.in_w + ix)];
              }
            }
          }
          out[static_cast<size_t>(((n * g.filters + f) * oh + y) * ow + x)] = sum;
        }
      }
    }
  }
  return out;
}

std::vector<double> naive_output(const Graph& graph, uint64_t seed, const WeightNudge& nudge) {
  return Evaluator(graph, seed, nudge).output();
}

HostTensor naive_forward(const Graph& graph, uint64_t seed) {
  const std::vector<double> out = Evaluator(graph, seed).output();
  HostTensor tensor;
  tensor.shape.push_back(graph.batch());
  const Shape& sample = graph.node(graph.output().node).output_shapes.at(static_cast<size_t>(graph.output().output));
  tensor.shape.insert(tensor.shape.end(), sample.begin(), sample.end());
  tensor.data.assign(out.begin(), out.end());
  return tensor;
}

std::shared_ptr<const Graph> graph_from_json(const std::string& json) {
  return std::make_shared<const Graph>(lower(parse_model_text(json, "test.json")));
}

std::shared_ptr<const Graph> zoo_graph(const std::string& name) {
  return std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
}

}  // namespace splitscope::testing_support
