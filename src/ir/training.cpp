#include "ir/training.hpp"

#include <algorithm>
#include <cmath>

#include "ir/params.hpp"

#include "ir/gradient_builder.hpp"
#include "ir/ops/op_def.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// Refuses a graph with a kind that has no gradient rule, naming its layer.
void require_gradient_rules(const Graph& forward, LossKind loss) {
  const NodeId output = forward.output().node;
  for (NodeId id = 0; id < forward.num_nodes(); ++id) {
    const OpNode& node = forward.node(id);
    if (node.kind == OpKind::kInput || op_def(node.kind).gradient != nullptr) continue;
    // The output softmax's gradient is fused into the cross-entropy loss.
    if (node.kind == OpKind::kSoftmax && id == output && loss == LossKind::kSoftmaxCrossEntropy) continue;
    throw InputError("--train", "",
                     "layer '" + node.layer_name + "' of " + forward.name() + " (" + std::string(to_string(node.kind)) +
                         ") cannot be trained yet: training supports every layer type but a softmax before the "
                         "output");
  }
}

}  // namespace

std::string_view to_string(LossKind loss) {
  switch (loss) {
    case LossKind::kSoftmaxCrossEntropy: return "softmax_cross_entropy";
    case LossKind::kMeanSquaredError: return "mean_squared_error";
  }
  return "?";
}

LossKind default_loss(const Graph& forward) {
  return forward.node(forward.output().node).kind == OpKind::kSoftmax ? LossKind::kSoftmaxCrossEntropy
                                                                       : LossKind::kMeanSquaredError;
}

Graph training_graph(const Graph& forward, const Optimizer& optimizer) {
  SPLITSCOPE_CHECK(!forward.is_training(), "training_graph() of a training graph");
  const LossKind loss = default_loss(forward);
  require_gradient_rules(forward, loss);
  Graph graph = forward;
  // A kind that runs otherwise in a training step (batch norm's batch statistics) says how.
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (const auto form = op_def(graph.node(id).kind).training_form) form(graph.mutable_node(id));
  }
  graph.set_training(TrainingSpec{loss, optimizer});
  GradientBuilder builder(graph);

  // The loss reads the prediction and the targets; its gradient goes to the
  // softmax's input (cross-entropy, fused) or to the prediction (MSE).
  const TensorRef prediction = forward.output();
  const OpNode& predictor = forward.node(prediction.node);
  const bool cross_entropy = loss == LossKind::kSoftmaxCrossEntropy;
  const TensorRef logits = cross_entropy ? builder.input(prediction.node, 0) : prediction;
  const Shape& predicted = predictor.output_shapes.at(static_cast<size_t>(prediction.output));

  OpNode target;
  target.kind = OpKind::kInput;
  target.name = "target";
  target.layer_name = "target";
  target.attrs.target = true;
  target.attrs.loss = loss;
  target.attrs.input_index = -1;
  target.attrs.sample = cross_entropy ? Shape{1} : predicted;
  target.attrs.classes = cross_entropy ? predicted.at(0) : 0;
  target.output_shapes = {target.attrs.sample};
  target.bytes_written = tensor_bytes(target.attrs.sample, graph.batch());
  const NodeId target_id = graph.add_node(std::move(target));

  OpAttrs loss_attrs;
  loss_attrs.loss = loss;
  const Shape& logits_shape = graph.node(logits.node).output_shapes.at(static_cast<size_t>(logits.output));
  const NodeId loss_node =
      builder.add(OpKind::kLoss, prediction.node, "loss", {prediction, TensorRef{target_id, 0}}, logits_shape,
                  loss_attrs);
  builder.contribute(logits, TensorRef{loss_node, 0});

  // Reverse dependency order: every reader of a tensor has contributed its
  // gradient before the tensor's producer asks for the sum.
  std::vector<NodeId> order = forward.topological_order();
  std::reverse(order.begin(), order.end());
  for (NodeId id : order) {
    const OpNode& node = forward.node(id);
    if (node.kind == OpKind::kInput) continue;
    std::vector<std::optional<TensorRef>> gradients;
    bool any = false;
    for (size_t output = 0; output < node.output_shapes.size(); ++output) {
      gradients.push_back(builder.gradient_of(TensorRef{id, static_cast<int>(output)}));
      any = any || gradients.back().has_value();
    }
    if (!any) continue;  // nothing the loss depends on (or the fused softmax)
    const auto rule = op_def(node.kind).gradient;
    SPLITSCOPE_CHECK(rule != nullptr, "no gradient rule for " + node.name);
    rule(builder, id, gradients);
  }
  return graph;
}

double rows_loss(const Graph& graph, std::span<const float> prediction, uint64_t seed, Range rows) {
  SPLITSCOPE_CHECK(graph.is_training(), "rows_loss() of a graph that does not train");
  SPLITSCOPE_CHECK(!rows.empty() && rows.begin >= 0 && rows.end <= graph.batch(), "rows outside the batch");
  const OpAttrs& target = graph.node(target_node(graph)).attrs;
  const auto width = static_cast<int64_t>(prediction.size()) / rows.size();
  SPLITSCOPE_CHECK(width * rows.size() == static_cast<int64_t>(prediction.size()), "a prediction that is not [rows, ...]");
  double total = 0.0;
  for (int64_t r = 0; r < rows.size(); ++r) {
    const int64_t b = rows.begin + r;
    const float* row = prediction.data() + r * width;
    if (target.loss == LossKind::kSoftmaxCrossEntropy) {
      const auto label = static_cast<int64_t>(target_value(seed, b, target.loss, target.classes));
      total -= std::log(std::max(static_cast<double>(row[label]), 1e-30));
      continue;
    }
    double squares = 0.0;
    for (int64_t e = 0; e < width; ++e) {
      const double error = static_cast<double>(row[e]) - target_value(seed, b * width + e, target.loss, 0);
      squares += error * error;
    }
    total += squares / static_cast<double>(width);
  }
  return total / static_cast<double>(rows.size());
}

double step_loss(const Graph& graph, std::span<const float> prediction, uint64_t seed) {
  return rows_loss(graph, prediction, seed, Range{0, graph.batch()});
}

NodeId target_node(const Graph& graph) {
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).kind == OpKind::kInput && graph.node(id).attrs.target) return id;
  }
  SPLITSCOPE_CHECK(false, "a graph without a target input");
  return 0;
}

}  // namespace splitscope
