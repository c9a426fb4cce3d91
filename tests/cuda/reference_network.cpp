#include "reference_network.hpp"

#include <stdexcept>
#include <algorithm>
#include <cmath>
#include <map>

#include "exec/cpu/kernels/activation.hpp"
#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/ops/dropout_mask.hpp"
#include "ir/params.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/check.hpp"

namespace splitscope::testing {
namespace {

using Tensor = std::vector<float>;  // [batch][per-sample elements]

/// Element `index` of weight tensor `tensor` of a node.
class Weights {
 public:
  Weights(const Graph& graph, NodeId node, uint64_t seed)
      : tensors_(param_tensors(graph, node)), key_(graph.node(node).param_key), seed_(seed) {}
  float operator()(int tensor, int64_t index) const {
    const ParamTensor& t = tensors_.at(static_cast<size_t>(tensor));
    return t.offset + param_value(seed_, key_, tensor, index, t.scale);
  }

 private:
  std::vector<ParamTensor> tensors_;
  int key_;
  uint64_t seed_;
};

class Evaluator {
 public:
  Evaluator(const Graph& graph, uint64_t seed) : graph_(graph), seed_(seed), batch_(graph.batch()) {}

  HostTensor run() {
    for (NodeId id : graph_.topological_order()) evaluate(id);
    const TensorRef out = graph_.output();
    HostTensor result;
    result.shape.push_back(batch_);
    const Shape& shape = graph_.node(out.node).output_shapes.at(static_cast<size_t>(out.output));
    result.shape.insert(result.shape.end(), shape.begin(), shape.end());
    result.data = tensors_.at({out.node, out.output});
    return result;
  }

 private:
  const Tensor& input(NodeId id, int slot) const {
    const auto sources = graph_.inputs(id);
    const auto& source = sources.at(static_cast<size_t>(slot));
    SPLITSCOPE_CHECK(source.has_value(), "missing input");
    return tensors_.at({source->node, source->output});
  }
  bool connected(NodeId id, int slot) const {
    const auto sources = graph_.inputs(id);
    return static_cast<size_t>(slot) < sources.size() && sources[static_cast<size_t>(slot)].has_value();
  }

  void evaluate(NodeId id) {
    const OpNode& node = graph_.node(id);
    const int64_t out_size = element_count(node.output_shapes.at(0));
    Tensor out(static_cast<size_t>(batch_ * out_size), 0.0f);
    const Weights weights(graph_, id, seed_);
    switch (node.kind) {
      case OpKind::kInput: {
        const Shape& input = node.attrs.sample;
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t e = 0; e < out_size; ++e) {
            const int64_t index = node.step >= 0 ? b * input[0] * input[1] + node.step * input[1] + e
                                                 : b * element_count(input) + e;
            out[static_cast<size_t>(b * out_size + e)] = input_value(seed_, index, node.attrs.input_index);
          }
        }
        break;
      }
      case OpKind::kDense: {
        const Layer& layer = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
        const Tensor& x = input(id, 0);
        const int64_t in = node.input_shapes[0][0];
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t u = 0; u < layer.units; ++u) {
            double sum = layer.bias ? weights(kBias, u) : 0.0;
            for (int64_t i = 0; i < in; ++i) sum += double(x[static_cast<size_t>(b * in + i)]) * weights(kWeight, i * layer.units + u);
            out[static_cast<size_t>(b * layer.units + u)] = activate(layer.activation, static_cast<float>(sum));
          }
        }
        break;
      }
      case OpKind::kConv2d: {
        const Layer& l = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
        const Tensor& x = input(id, 0);
        const int64_t c_in = l.input_shape[0], h = l.input_shape[1], w = l.input_shape[2];
        const int64_t oh = l.output_shape[1], ow = l.output_shape[2];
        const int64_t per_group = c_in / l.groups, filters_per_group = l.filters / l.groups;
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t f = 0; f < l.filters; ++f) {
            const int64_t group = f / filters_per_group;
            for (int64_t y = 0; y < oh; ++y) {
              for (int64_t z = 0; z < ow; ++z) {
                double sum = l.bias ? weights(kBias, f) : 0.0;
                for (int64_t c = 0; c < per_group; ++c) {
                  for (int64_t ky = 0; ky < l.kernel.h; ++ky) {
                    for (int64_t kx = 0; kx < l.kernel.w; ++kx) {
                      const int64_t iy = y * l.stride.h - l.padding.h + ky;
                      const int64_t ix = z * l.stride.w - l.padding.w + kx;
                      if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                      const int64_t channel = group * per_group + c;
                      sum += double(x[static_cast<size_t>(((b * c_in + channel) * h + iy) * w + ix)]) *
                             weights(kWeight, ((f * per_group + c) * l.kernel.h + ky) * l.kernel.w + kx);
                    }
                  }
                }
                out[static_cast<size_t>(((b * l.filters + f) * oh + y) * ow + z)] =
                    activate(l.activation, static_cast<float>(sum));
              }
            }
          }
        }
        break;
      }
      case OpKind::kMaxPool:
      case OpKind::kAvgPool: {
        const Layer& l = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
        const Tensor& x = input(id, 0);
        const int64_t c = l.input_shape[0], h = l.input_shape[1], w = l.input_shape[2];
        const int64_t oh = l.output_shape[1], ow = l.output_shape[2];
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int64_t y = 0; y < oh; ++y) {
              for (int64_t z = 0; z < ow; ++z) {
                float best = -INFINITY;
                double sum = 0;
                int64_t count = 0;  // padding adds no values (cuDNN's COUNT_EXCLUDE_PADDING)
                for (int64_t ky = 0; ky < l.kernel.h; ++ky) {
                  for (int64_t kx = 0; kx < l.kernel.w; ++kx) {
                    const int64_t row = y * l.stride.h - l.padding.h + ky, col = z * l.stride.w - l.padding.w + kx;
                    if (row < 0 || row >= h || col < 0 || col >= w) continue;
                    const float v = x[static_cast<size_t>(((b * c + ch) * h + row) * w + col)];
                    best = std::max(best, v);
                    sum += v;
                    ++count;
                  }
                }
                out[static_cast<size_t>(((b * c + ch) * oh + y) * ow + z)] =
                    node.kind == OpKind::kMaxPool ? best : static_cast<float>(sum / double(count));
              }
            }
          }
        }
        break;
      }
      case OpKind::kRelu:
      case OpKind::kTanh:
      case OpKind::kSigmoid: {
        const Activation act = node.kind == OpKind::kRelu   ? Activation::kRelu
                               : node.kind == OpKind::kTanh ? Activation::kTanh
                                                            : Activation::kSigmoid;
        const Tensor& x = input(id, 0);
        for (size_t i = 0; i < out.size(); ++i) out[i] = activate(act, x[i]);
        break;
      }
      case OpKind::kFlatten:
        out = input(id, 0);
        break;
      case OpKind::kBatchNorm:
      case OpKind::kLayerNorm: {
        // Batch norm: per channel over (batch, inner), batch statistics in a
        // training step, else a fresh layer's running ones; layer norm: per
        // run of the last axis.
        const Tensor& x = input(id, 0);
        const bool batch_norm = node.kind == OpKind::kBatchNorm;
        const int64_t channels = node.output_shapes[0][0];
        const int64_t inner = inner_count(node.output_shapes[0]);
        const int64_t features = node.output_shapes[0].back();
        const int64_t groups = batch_norm ? channels : batch_ * out_size / features;
        for (int64_t g = 0; g < groups; ++g) {
          std::vector<size_t> elements;
          if (batch_norm) {
            for (int64_t b = 0; b < batch_; ++b) {
              for (int64_t i = 0; i < inner; ++i) elements.push_back(static_cast<size_t>((b * channels + g) * inner + i));
            }
          } else {
            for (int64_t f = 0; f < features; ++f) elements.push_back(static_cast<size_t>(g * features + f));
          }
          double mean = 0, var = 1;
          if (!batch_norm || node.attrs.training) {
            double sum = 0, squares = 0;
            for (size_t e : elements) sum += x[e];
            mean = sum / static_cast<double>(elements.size());
            for (size_t e : elements) squares += (x[e] - mean) * (x[e] - mean);
            var = squares / static_cast<double>(elements.size());
          }
          const double inv_std = 1 / std::sqrt(var + node.attrs.epsilon);
          for (size_t k = 0; k < elements.size(); ++k) {
            const int64_t p = batch_norm ? g : static_cast<int64_t>(k);
            out[elements[k]] = static_cast<float>((x[elements[k]] - mean) * inv_std * weights(0, p) + weights(1, p));
          }
        }
        break;
      }
      case OpKind::kDropout: {
        const Tensor& x = input(id, 0);
        const float scale = 1.0f / (1.0f - static_cast<float>(node.attrs.rate));
        for (size_t i = 0; i < out.size(); ++i) {
          const bool keep = dropout_keeps(node.layer, static_cast<int64_t>(i), static_cast<float>(node.attrs.rate));
          out[i] = !node.attrs.training ? x[i] : keep ? x[i] * scale : 0.0f;
        }
        break;
      }
      case OpKind::kSoftmax: {
        const Tensor& x = input(id, 0);
        for (int64_t b = 0; b < batch_; ++b) {
          const float* row = x.data() + b * out_size;
          const float top = *std::max_element(row, row + out_size);
          double total = 0;
          for (int64_t i = 0; i < out_size; ++i) total += std::exp(double(row[i] - top));
          for (int64_t i = 0; i < out_size; ++i) {
            out[static_cast<size_t>(b * out_size + i)] = static_cast<float>(std::exp(double(row[i] - top)) / total);
          }
        }
        break;
      }
      case OpKind::kLstmCell:
      case OpKind::kGruCell:
        cell(id, weights);
        return;
      case OpKind::kStack: {
        const int64_t steps = node.output_shapes[0][0], features = node.output_shapes[0][1];
        for (int64_t t = 0; t < steps; ++t) {
          const Tensor& x = input(id, static_cast<int>(t));
          for (int64_t b = 0; b < batch_; ++b) {
            for (int64_t f = 0; f < features; ++f) {
              out[static_cast<size_t>((b * steps + t) * features + f)] = x[static_cast<size_t>(b * features + f)];
            }
          }
        }
        break;
      }
      case OpKind::kAdd:
        out = input(id, 0);
        for (size_t slot = 1; slot < node.input_shapes.size(); ++slot) {
          const Tensor& x = input(id, static_cast<int>(slot));
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
        throw std::logic_error("the reference network computes forward passes only, not " + node.name);
      case OpKind::kGelu:
      case OpKind::kGeluGrad:
      case OpKind::kEmbedding:
      case OpKind::kEmbeddingGradWeight:
      case OpKind::kAttention:
      case OpKind::kAttentionGrad:
      case OpKind::kLinear:
      case OpKind::kLinearGradInput:
      case OpKind::kLinearGradWeight:
        throw std::logic_error("the cuda backend runs no transformer kinds yet, not " + node.name);
      case OpKind::kConcat: {
        const int64_t per_sample = element_count(node.output_shapes[0]);
        int64_t at = 0;
        for (size_t slot = 0; slot < node.input_shapes.size(); ++slot) {
          const Tensor& x = input(id, static_cast<int>(slot));
          const int64_t size = element_count(node.input_shapes[slot]);
          for (int64_t b = 0; b < batch_; ++b) {
            for (int64_t i = 0; i < size; ++i) {
              out[static_cast<size_t>(b * per_sample + at + i)] = x[static_cast<size_t>(b * size + i)];
            }
          }
          at += size;
        }
        break;
      }
      case OpKind::kStepSlice: {
        const Tensor& x = input(id, 0);
        const int64_t steps = node.input_shapes[0][0], features = node.input_shapes[0][1];
        for (int64_t b = 0; b < batch_; ++b) {
          for (int64_t f = 0; f < features; ++f) {
            out[static_cast<size_t>(b * features + f)] = x[static_cast<size_t>((b * steps + node.step) * features + f)];
          }
        }
        break;
      }
    }
    tensors_[{id, 0}] = std::move(out);
  }

  void cell(NodeId id, const Weights& weights) {
    const OpNode& node = graph_.node(id);
    const Layer& layer = graph_.model().layers.at(static_cast<size_t>(graph_.node(id).layer));
    const bool lstm = node.kind == OpKind::kLstmCell;
    const int64_t hidden = layer.hidden, in = node.input_shapes[kCellInputSlot][0];
    const int64_t gates = gate_count(layer.kind), columns = gates * hidden;
    const Tensor& x = input(id, kCellInputSlot);
    const Tensor zeros(static_cast<size_t>(batch_ * hidden), 0.0f);
    const Tensor& h = connected(id, kCellHiddenSlot) ? input(id, kCellHiddenSlot) : zeros;
    const Tensor& c = lstm && connected(id, kCellStateSlot) ? input(id, kCellStateSlot) : zeros;
    Tensor h_out(zeros.size());
    Tensor c_out(zeros.size());
    for (int64_t b = 0; b < batch_; ++b) {
      // Per gate column g·H + u: the input product, and (kept apart for the GRU's n gate) the recurrent one.
      std::vector<double> from_x(static_cast<size_t>(columns)), from_h(static_cast<size_t>(columns));
      for (int64_t j = 0; j < columns; ++j) {
        double sx = layer.bias ? weights(kCellBias, j) : 0.0, sh = 0;
        for (int64_t i = 0; i < in; ++i) sx += double(x[static_cast<size_t>(b * in + i)]) * weights(kInputWeight, i * columns + j);
        for (int64_t i = 0; i < hidden; ++i) sh += double(h[static_cast<size_t>(b * hidden + i)]) * weights(kRecurrentWeight, i * columns + j);
        from_x[static_cast<size_t>(j)] = sx;
        from_h[static_cast<size_t>(j)] = sh;
      }
      for (int64_t u = 0; u < hidden; ++u) {
        auto gate = [&](int g) { return static_cast<float>(from_x[static_cast<size_t>(g * hidden + u)] + from_h[static_cast<size_t>(g * hidden + u)]); };
        const size_t at = static_cast<size_t>(b * hidden + u);
        if (lstm) {
          const float i = sigmoid(gate(0)), f = sigmoid(gate(1)), g = std::tanh(gate(2)), o = sigmoid(gate(3));
          c_out[at] = f * c[at] + i * g;
          h_out[at] = o * std::tanh(c_out[at]);
        } else {
          const float r = sigmoid(gate(0)), z = sigmoid(gate(1));
          const float n = std::tanh(static_cast<float>(from_x[static_cast<size_t>(2 * hidden + u)]) +
                                    r * static_cast<float>(from_h[static_cast<size_t>(2 * hidden + u)]));
          h_out[at] = (1 - z) * n + z * h[at];
        }
      }
    }
    tensors_[{id, kCellHiddenOutput}] = std::move(h_out);
    if (lstm) tensors_[{id, kCellStateOutput}] = std::move(c_out);
  }

  const Graph& graph_;
  uint64_t seed_;
  int64_t batch_;
  std::map<std::pair<NodeId, int>, Tensor> tensors_;
};

}  // namespace

HostTensor reference_output(const Graph& graph, uint64_t seed) { return Evaluator(graph, seed).run(); }

std::shared_ptr<const Graph> graph_from_text(const std::string& text) {
  return std::make_shared<const Graph>(lower(parse_model_text(text, "test.json")));
}

std::shared_ptr<const Graph> zoo_graph(const std::string& name) {
  return std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
}

Plan make_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices, int microbatches) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

double relative_error(const HostTensor& result, const HostTensor& reference) {
  SPLITSCOPE_CHECK(result.shape == reference.shape && result.data.size() == reference.data.size(),
                   "tensors of different shapes");
  double worst = 0;
  double scale = 0;
  for (size_t i = 0; i < reference.data.size(); ++i) {
    const double difference = std::abs(double(result.data[i]) - double(reference.data[i]));
    worst = std::isnan(difference) ? INFINITY : std::max(worst, difference);
    scale = std::max(scale, std::abs(double(reference.data[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace splitscope::testing
