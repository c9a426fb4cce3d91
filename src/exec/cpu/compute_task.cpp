#include "exec/cpu/compute_task.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <fmt/format.h>
#include <optional>
#include <tuple>

#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/attention.hpp"
#include "exec/cpu/kernels/embedding.hpp"
#include "exec/cpu/kernels/gelu.hpp"
#include "exec/cpu/kernels/conv2d.hpp"
#include "exec/cpu/kernels/conv2d_backward.hpp"
#include "exec/cpu/kernels/dense.hpp"
#include "exec/cpu/kernels/dense_backward.hpp"
#include "exec/cpu/kernels/dropout.hpp"
#include "exec/cpu/kernels/normalization.hpp"
#include "exec/cpu/kernels/optimizer_step.hpp"
#include "exec/cpu/kernels/pooling.hpp"
#include "exec/cpu/kernels/pooling_backward.hpp"
#include "exec/cpu/kernels/cell_grad_products.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"
#include "exec/cpu/kernels/recurrent_cell_backward.hpp"
#include "exec/cpu/kernels/softmax.hpp"
#include "exec/cpu/stored_precision.hpp"
#include "ir/ops/cell_rules.hpp"
#include "ir/ops/concat_rules.hpp"
#include "ir/ops/norm_rules.hpp"
#include "ir/params.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// A strided matrix of floats: row r starts at data + r·stride.
struct Rows {
  const float* data = nullptr;
  int64_t stride = 0;
};

/// Copies a [rows × width] strided matrix.
void copy_rows(Rows from, float* to, int64_t to_stride, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) std::copy_n(from.data + r * from.stride, width, to + r * to_stride);
}

/// Resolves the buffers of one compute op, checking them against the Plan's rules.
class OpBinding {
 public:
  OpBinding(const Plan& plan, const PlanOp& op, ValueBuffers& buffers)
      : plan_(plan), op_(op), buffers_(buffers), graph_(*plan.graph), node_(graph_.node(op.node)) {}

  const OpNode& node() const { return node_; }
  int64_t rows() const { return op_.slice.batch.size(); }
  const Slice& slice() const { return op_.slice; }
  /// The parameter value the op reads its weights from (PlanOp::params).
  const Value& params() const {
    SPLITSCOPE_CHECK(op_.params >= 0, fmt::format("{} has weights but no parameter value", label()));
    return plan_.value(op_.params);
  }

  /// Where slot `slot` is read: its needed channels, at their offset in the
  /// input value. nullopt for a slot with no producer (a cell's state at t = 0).
  std::optional<Rows> input(int slot) const {
    SPLITSCOPE_CHECK(slot < static_cast<int>(op_.inputs.size()), fmt::format("{} has no input slot {}", label(), slot));
    const int id = op_.inputs[static_cast<size_t>(slot)];
    if (id < 0) return std::nullopt;
    const Value& value = plan_.value(id);
    const Range needed = needed_input_channels(graph_, op_.node, op_.slice, slot);
    SPLITSCOPE_CHECK(value.batch == op_.slice.batch && value.channels.contains(needed),
                     fmt::format("{}: input slot {} holds rows {} channels {}, but the op needs rows {} channels {}",
                                 label(), slot, value.batch.to_string(), value.channels.to_string(),
                                 op_.slice.batch.to_string(), needed.to_string()));
    SPLITSCOPE_CHECK(value.features == needed_input_features(graph_, op_.node, op_.slice, slot),
                     fmt::format("{}: input slot {} holds other features than the op reads", label(), slot));
    const ConstChannelBlock block = std::as_const(buffers_).block(id);
    return Rows{block.at(0, needed.begin), block.row_floats()};
  }

  Rows required_input(int slot) const {
    const std::optional<Rows> rows = input(slot);
    SPLITSCOPE_CHECK(rows.has_value(), fmt::format("{}: input slot {} has no value", label(), slot));
    return *rows;
  }

  /// Output `index`, which holds exactly the slice's rows and output channels.
  ChannelBlock output(int index) const {
    SPLITSCOPE_CHECK(index < static_cast<int>(op_.outputs.size()), fmt::format("{} has no output {}", label(), index));
    const int id = op_.outputs[static_cast<size_t>(index)];
    const Value& value = plan_.value(id);
    SPLITSCOPE_CHECK(value.batch == op_.slice.batch && value.channels == op_.slice.out,
                     fmt::format("{}: output {} holds rows {} channels {}, not the slice's rows {} channels {}",
                                 label(), index, value.batch.to_string(), value.channels.to_string(),
                                 op_.slice.batch.to_string(), op_.slice.out.to_string()));
    SPLITSCOPE_CHECK(value.features == output_features(node_, op_.slice),
                     fmt::format("{}: output {} holds other features than the slice writes", label(), index));
    return buffers_.block(id);
  }

  /// A weight-gradient op's output: its weights' gradient, flat (value_buffers.hpp).
  float* gradient_output() const {
    SPLITSCOPE_CHECK(op_.outputs.size() == 1, fmt::format("{} writes {} values, not one gradient", label(), op_.outputs.size()));
    return buffers_.block(op_.outputs[0]).data;
  }
  /// The running sum of earlier micro-batches' gradients it adds to (the
  /// extra last input), or null for the first.
  const float* previous_gradient() const {
    if (op_.inputs.size() <= node_.input_shapes.size()) return nullptr;
    return std::as_const(buffers_).block(op_.inputs.back()).data;
  }

  std::string label() const { return op_label(plan_, op_); }
  const Plan& plan() const { return plan_; }
  const PlanOp& op() const { return op_; }

 private:
  const Plan& plan_;
  const PlanOp& op_;
  ValueBuffers& buffers_;
  const Graph& graph_;
  const OpNode& node_;
};

TaskFunction dense_task(const PlanOp& op, const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  DenseArgs args;
  args.rows = b.rows();
  args.inputs = op.slice.reduce.size();
  args.outputs = op.slice.out.size();
  const Rows x = b.required_input(0);
  args.x = x.data;
  args.x_stride = x.stride;
  args.w = weights->data(kWeight);
  args.bias = weights->data(kBias);
  // A partial sum gets its activation after the all-reduce (an epilogue op).
  args.activation = op.slice.is_partial(b.node()) ? Activation::kNone : b.node().attrs.activation;
  const ChannelBlock y = b.output(0);
  args.y = y.data;
  args.y_stride = y.row_floats();
  return [args, weights = std::move(weights)](TaskContext& context) { dense(context.parallel, args); };
}

TaskFunction conv2d_task(const PlanOp& op, const OpBinding& b, std::shared_ptr<const WeightSlice> weights,
                         float* scratch) {
  Conv2dArgs args;
  args.geometry = conv_geometry(b.node());
  args.filters = op.slice.out;
  args.rows = b.rows();
  const Rows in = b.required_input(0);
  args.input = in.data;
  args.input_stride = in.stride;
  args.weights = weights->data(kWeight);
  args.bias = weights->data(kBias);
  args.activation = b.node().attrs.activation;
  const ChannelBlock out = b.output(0);
  args.output = out.data;
  args.output_stride = out.row_floats();
  args.workspace = scratch;
  return [args, weights = std::move(weights)](TaskContext& context) { conv2d(context.parallel, args); };
}

TaskFunction pool_task(const PlanOp& op, const OpBinding& b) {
  PoolArgs args;
  args.window = pool_geometry(b.node(), op.slice.out.size());
  args.rows = b.rows();
  const Rows in = b.required_input(0);
  args.input = in.data;
  args.input_stride = in.stride;
  const ChannelBlock out = b.output(0);
  args.output = out.data;
  args.output_stride = out.row_floats();
  if (b.node().kind == OpKind::kMaxPool) return [args](TaskContext&) { max_pool(args); };
  return [args](TaskContext&) { avg_pool(args); };
}

TaskFunction activation_task(Activation activation, const OpBinding& b) {
  const Rows in = b.required_input(0);
  const ChannelBlock out = b.output(0);
  const int64_t rows = b.rows();
  return [=](TaskContext&) {
    activation_rows(activation, in.data, in.stride, out.data, out.row_floats(), rows, out.row_floats());
  };
}

TaskFunction softmax_task(const PlanOp& op, const OpBinding& b) {
  // Network files give softmax a flat input (the parser says so otherwise): one vector per sample.
  const Shape& shape = b.node().output_shapes.at(0);
  SPLITSCOPE_CHECK(shape.size() == 1, b.label() + ": softmax over a non-flat tensor " + to_string(shape));
  const Rows in = b.required_input(0);
  const ChannelBlock out = b.output(0);
  // A slice writes its columns of the softmax, reading the whole row.
  const SoftmaxArgs args{b.rows(), shape[0], in.data, in.stride, op.slice.out, out.data, out.row_floats()};
  return [args](TaskContext&) { softmax(args); };
}

TaskFunction cell_task(const PlanOp& op, const OpBinding& b, std::shared_ptr<const WeightSlice> weights,
                       float* scratch) {
  const bool lstm = b.node().kind == OpKind::kLstmCell;
  CellArgs args;
  args.rows = b.rows();
  args.inputs = b.node().input_shapes.at(kCellInputSlot).at(0);
  args.hidden = b.node().attrs.hidden;
  args.unit_begin = op.slice.out.begin;
  args.units = op.slice.out.size();
  const Rows x = b.required_input(kCellInputSlot);
  args.x = x.data;
  args.x_stride = x.stride;
  if (const auto h = b.input(kCellHiddenSlot)) {
    args.h_prev = h->data;
    args.h_prev_stride = h->stride;
  }
  if (lstm) {
    if (const auto c = b.input(kCellStateSlot)) {
      args.c_prev = c->data;
      args.c_prev_stride = c->stride;
    }
  }
  args.wx = weights->data(kInputWeight);
  args.wh = weights->data(kRecurrentWeight);
  args.bias = weights->data(kCellBias);
  const ChannelBlock h_out = b.output(kCellHiddenOutput);
  args.h_out = h_out.data;
  args.h_out_stride = h_out.row_floats();
  if (lstm) {
    const ChannelBlock c_out = b.output(kCellStateOutput);
    args.c_out = c_out.data;
    args.c_out_stride = c_out.row_floats();
  }
  args.workspace = scratch;
  if (lstm) return [args, weights = std::move(weights)](TaskContext& context) { lstm_cell(context.parallel, args); };
  return [args, weights = std::move(weights)](TaskContext& context) { gru_cell(context.parallel, args); };
}

/// Stack: output channel t (a step) is the whole hidden vector of input slot t.
TaskFunction stack_task(const PlanOp& op, const OpBinding& b) {
  const ChannelBlock out = b.output(0);
  std::vector<Rows> steps;
  for (int64_t t = op.slice.out.begin; t < op.slice.out.end; ++t) steps.push_back(b.required_input(static_cast<int>(t)));
  const int64_t rows = b.rows();
  const Range range = op.slice.out;
  return [=](TaskContext&) {
    for (int64_t t = range.begin; t < range.end; ++t) {
      copy_rows(steps[static_cast<size_t>(t - range.begin)], out.at(0, t), out.row_floats(), rows, out.inner);
    }
  };
}

/// Step slice t: the features `out` of step t of a [T, F] input.
TaskFunction step_slice_task(const PlanOp& op, const OpBinding& b) {
  const Rows in = b.required_input(0);
  const int64_t features = b.node().output_shapes.at(0).at(0);
  const Rows from{in.data + b.node().step * features + op.slice.out.begin, in.stride};
  const ChannelBlock out = b.output(0);
  const int64_t rows = b.rows();
  return [=](TaskContext&) { copy_rows(from, out.data, out.row_floats(), rows, out.row_floats()); };
}

/// Flatten: a reshape; the slice's features are its input channels laid end to end.
TaskFunction flatten_task(const OpBinding& b) {
  const Rows in = b.required_input(0);
  const ChannelBlock out = b.output(0);
  const int64_t rows = b.rows();
  return [=](TaskContext&) { copy_rows(in, out.data, out.row_floats(), rows, out.row_floats()); };
}

/// add: the element-wise sum of every input's slice channels, in slot order.
TaskFunction add_task(const OpBinding& b) {
  std::vector<Rows> xs;
  for (size_t slot = 0; slot < b.node().input_shapes.size(); ++slot) xs.push_back(b.required_input(static_cast<int>(slot)));
  const ChannelBlock out = b.output(0);
  const int64_t rows = b.rows();
  return [=](TaskContext&) {
    const int64_t width = out.row_floats();
    for (int64_t r = 0; r < rows; ++r) {
      float* y = out.data + r * width;
      std::copy_n(xs[0].data + r * xs[0].stride, width, y);
      for (size_t k = 1; k < xs.size(); ++k) {
        const float* x = xs[k].data + r * xs[k].stride;
        for (int64_t i = 0; i < width; ++i) y[i] += x[i];
      }
    }
  };
}

/// concat: each input's part of the slice, copied to its place in the output
/// (slots the slice does not reach have no value and are skipped).
TaskFunction concat_task(const PlanOp& op, const Plan& plan, const OpBinding& b) {
  struct Piece {
    Rows from;
    int64_t at;     ///< float offset in an output row
    int64_t width;  ///< floats per row
  };
  std::vector<Piece> pieces;
  const ChannelBlock out = b.output(0);
  for (size_t slot = 0; slot < b.node().input_shapes.size(); ++slot) {
    const std::optional<Rows> from = b.input(static_cast<int>(slot));
    if (!from) continue;
    const Range need = needed_input_channels(*plan.graph, op.node, op.slice, static_cast<int>(slot));
    const int64_t at = concat_offset(b.node(), static_cast<int>(slot)) + need.begin - op.slice.out.begin;
    pieces.push_back({*from, at * out.inner, need.size() * out.inner});
  }
  const int64_t rows = b.rows();
  return [=](TaskContext&) {
    for (const Piece& piece : pieces) copy_rows(piece.from, out.data + piece.at, out.row_floats(), rows, piece.width);
  };
}

TaskFunction epilogue_task(const Plan& plan, const PlanOp& op, ValueBuffers& buffers) {
  SPLITSCOPE_CHECK(op.inputs.size() == 1 && op.outputs.size() == 1, "an epilogue reads one value and writes one");
  const Value& sum = plan.value(op.inputs[0]);
  const Value& result = plan.value(op.outputs[0]);
  SPLITSCOPE_CHECK(sum.batch == result.batch && sum.channels == result.channels,
                   "an epilogue's input and output differ in shape");
  const Activation activation = plan.graph->node(op.node).attrs.activation;
  const ConstChannelBlock in = std::as_const(buffers).block(sum.id);
  const ChannelBlock out = buffers.block(result.id);
  return [=](TaskContext&) {
    activation_rows(activation, in.data, in.row_floats(), out.data, out.row_floats(), out.rows, out.row_floats());
  };
}

/// The loss's gradient w.r.t. the logits (cross-entropy: (p - onehot) / B
/// from the softmax's p) or the prediction (MSE: 2 (y - t) / (B·n)); B is the
/// whole batch, whatever rows a micro-batch holds.
TaskFunction loss_task(const OpBinding& b) {
  const Rows prediction = b.required_input(0);
  const Rows target = b.required_input(1);
  const ChannelBlock out = b.output(0);
  const int64_t rows = b.rows();
  const bool cross_entropy = b.node().attrs.loss == LossKind::kSoftmaxCrossEntropy;
  const auto batch = static_cast<float>(b.plan().graph->batch());
  // A vocabulary shard (FeatureCut, head_split.hpp) holds `kept` of each
  // position's `features` logits, from `first` on; the targets are whole.
  const FeatureCut cut = b.op().slice.features;
  SPLITSCOPE_CHECK(cut.whole() || (!cross_entropy && cut.blocks == 1), "a cross-entropy loss cut by features");
  const Shape& logits = b.node().input_shapes.at(0);
  const int64_t features = logits.size() < 2 ? 1 : logits.back();
  const int64_t kept = cut.whole() ? features : cut.range.size();
  const int64_t first = cut.whole() ? 0 : cut.range.begin;
  const int64_t whole_width = element_count(logits);
  // A cut sample's elements lie end to end at the start of its row (ir/feature_cut.hpp).
  const int64_t width = cut.whole() ? out.row_floats() : logits.at(0) * kept;
  return [=](TaskContext&) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* p = prediction.data + r * prediction.stride;
      const float* t = target.data + r * target.stride;
      float* g = out.data + r * out.row_floats();
      if (cross_entropy) {
        const auto label = static_cast<int64_t>(t[0]);
        for (int64_t j = 0; j < width; ++j) g[j] = (p[j] - (j == label ? 1.0f : 0.0f)) / batch;
      } else {
        // The mean is over every element of the whole prediction, whatever share this slice holds.
        const float scale = 2.0f / (batch * static_cast<float>(whole_width));
        for (int64_t j = 0; j < width; ++j) {
          const int64_t whole_j = (j / kept) * features + first + j % kept;
          g[j] = scale * (p[j] - t[whole_j]);
        }
      }
    }
  };
}

TaskFunction activation_grad_task(const OpBinding& b) {
  const Rows dy = b.required_input(0);
  const Rows y = b.required_input(1);
  const ChannelBlock dx = b.output(0);
  const Activation activation = b.node().attrs.activation;
  const int64_t rows = b.rows();
  return [=](TaskContext&) {
    activation_grad_rows(activation, dy.data, dy.stride, y.data, y.stride, dx.data, dx.row_floats(), rows,
                         dx.row_floats());
  };
}

TaskFunction dense_grad_input_task(const PlanOp& op, const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  DenseGradInputArgs args;
  args.rows = b.rows();
  args.inputs = op.slice.out.size();      // the layer's input features
  args.outputs = op.slice.reduce.size();  // its units
  const Rows dz = b.required_input(0);
  args.dz = dz.data;
  args.dz_stride = dz.stride;
  args.w = weights->data(kWeight);  // W[in slice][unit slice]: this op's weight slice, transposed
  const ChannelBlock dx = b.output(0);
  args.dx = dx.data;
  args.dx_stride = dx.row_floats();
  return [args, weights = std::move(weights)](TaskContext& context) { dense_grad_input(context.parallel, args); };
}

TaskFunction dense_grad_weight_task(const PlanOp& op, const OpBinding& b) {
  DenseGradWeightArgs args;
  args.rows = b.rows();
  args.inputs = op.slice.reduce.size();
  args.outputs = op.slice.out.size();
  const Rows x = b.required_input(0);
  const Rows dz = b.required_input(1);
  args.x = x.data;
  args.x_stride = x.stride;
  args.dz = dz.data;
  args.dz_stride = dz.stride;
  const bool bias = slice_carries_bias(b.node(), op.slice.reduce);
  const int64_t w_floats = args.inputs * args.outputs;
  args.dw = b.gradient_output();
  args.db = bias ? args.dw + w_floats : nullptr;
  if (const float* previous = b.previous_gradient()) {
    args.previous_w = previous;
    args.previous_b = bias ? previous + w_floats : nullptr;
  }
  return [args](TaskContext& context) { dense_grad_weight(context.parallel, args); };
}

/// The forward layer's geometry, from a conv2d_grad_input node (whose shapes are the layer's, swapped).
ConvGeometry grad_input_geometry(const OpNode& node) {
  return conv_geometry(node.attrs, node.output_shapes.at(0), node.input_shapes.at(0).at(0));
}

TaskFunction conv2d_grad_input_task(const PlanOp& op, const OpBinding& b, std::shared_ptr<const WeightSlice> weights,
                                     float* scratch) {
  Conv2dGradInputArgs args;
  args.geometry = grad_input_geometry(b.node());
  args.filters = op.slice.reduce;
  args.channels = op.slice.out;
  args.rows = b.rows();
  const Rows dz = b.required_input(0);
  args.dz = dz.data;
  args.dz_stride = dz.stride;
  args.weights = weights->data(kWeight);
  const ChannelBlock dx = b.output(0);
  args.dx = dx.data;
  args.dx_stride = dx.row_floats();
  args.workspace = scratch;
  return [args, weights = std::move(weights)](TaskContext& context) { conv2d_grad_input(context.parallel, args); };
}

TaskFunction conv2d_grad_weight_task(const PlanOp& op, const OpBinding& b, float* scratch) {
  Conv2dGradWeightArgs args;
  args.geometry = conv_geometry(b.node());
  args.filters = op.slice.out;
  args.rows = b.rows();
  const Rows x = b.required_input(0);
  const Rows dz = b.required_input(1);
  args.x = x.data;
  args.x_stride = x.stride;
  args.dz = dz.data;
  args.dz_stride = dz.stride;
  const int64_t w_floats = args.filters.size() * args.geometry.patch_size();
  const bool bias = b.node().attrs.bias;
  args.dw = b.gradient_output();
  args.db = bias ? args.dw + w_floats : nullptr;
  if (const float* previous = b.previous_gradient()) {
    args.previous_w = previous;
    args.previous_b = bias ? previous + w_floats : nullptr;
  }
  args.workspace = scratch;
  return [args](TaskContext& context) { conv2d_grad_weight(context.parallel, args); };
}

TaskFunction pool_grad_task(const PlanOp& op, const OpBinding& b) {
  const bool max = b.node().kind == OpKind::kMaxPoolGrad;
  const Shape& x = b.node().output_shapes.at(0);
  PoolArgs args;
  args.window = pool_geometry(b.node().attrs, x, op.slice.out.size());
  args.rows = b.rows();
  const Rows dy = b.required_input(max ? 1 : 0);
  if (max) {
    const Rows in = b.required_input(0);
    args.input = in.data;
    args.input_stride = in.stride;
  }
  const ChannelBlock dx = b.output(0);
  if (max) return [=](TaskContext&) { max_pool_grad(args, dy.data, dy.stride, dx.data, dx.row_floats()); };
  return [=](TaskContext&) { avg_pool_grad(args, dy.data, dy.stride, dx.data, dx.row_floats()); };
}

NormRows norm_rows(Rows rows) { return NormRows{rows.data, rows.stride}; }

TaskFunction batch_norm_task(const PlanOp& op, const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  BatchNormArgs args;
  args.rows = b.rows();
  args.channels = op.slice.out.size();
  args.inner = norm_rules::channel_inner(b.node());
  args.epsilon = static_cast<float>(b.node().attrs.epsilon);
  args.training = b.node().attrs.training;
  args.x = norm_rows(b.required_input(0));
  args.gamma = weights->data(norm_rules::kGamma);
  args.beta = weights->data(norm_rules::kBeta);
  const ChannelBlock y = b.output(0);
  args.y = y.data;
  args.y_stride = y.row_floats();
  return [args, weights = std::move(weights)](TaskContext& context) { batch_norm(context.parallel, args); };
}

TaskFunction batch_norm_grad_input_task(const PlanOp& op, const OpBinding& b,
                                        std::shared_ptr<const WeightSlice> weights) {
  BatchNormGradInputArgs args;
  args.rows = b.rows();
  args.channels = op.slice.out.size();
  args.inner = norm_rules::channel_inner(b.node());
  args.epsilon = static_cast<float>(b.node().attrs.epsilon);
  args.x = norm_rows(b.required_input(0));
  args.dy = norm_rows(b.required_input(1));
  args.gamma = weights->data(norm_rules::kGamma);
  const ChannelBlock dx = b.output(0);
  args.dx = dx.data;
  args.dx_stride = dx.row_floats();
  return [args, weights = std::move(weights)](TaskContext& context) { batch_norm_grad_input(context.parallel, args); };
}

TaskFunction batch_norm_grad_weight_task(const PlanOp& op, const OpBinding& b) {
  BatchNormGradWeightArgs args;
  args.rows = b.rows();
  args.channels = op.slice.out.size();
  args.inner = norm_rules::channel_inner(b.node());
  args.epsilon = static_cast<float>(b.node().attrs.epsilon);
  args.x = norm_rows(b.required_input(0));
  args.dy = norm_rows(b.required_input(1));
  args.dgamma = b.gradient_output();
  args.previous = b.previous_gradient();
  return [args](TaskContext& context) { batch_norm_grad_weight(context.parallel, args); };
}

/// Layer norm's arguments: every run of features of the slice's samples (its
/// positions of each: all of them, but under sequence parallelism).
LayerNormArgs layer_norm_args(const OpBinding& b) {
  LayerNormArgs args;
  args.rows = b.rows();
  args.features = norm_rules::features(b.node());
  args.groups = b.slice().out.size() * inner_count(b.node().output_shapes.at(0)) / args.features;
  args.epsilon = static_cast<float>(b.node().attrs.epsilon);
  args.x = norm_rows(b.required_input(0));
  return args;
}

TaskFunction layer_norm_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  LayerNormArgs args = layer_norm_args(b);
  args.gamma = weights->data(norm_rules::kGamma);
  args.beta = weights->data(norm_rules::kBeta);
  const ChannelBlock y = b.output(0);
  args.out = y.data;
  args.out_stride = y.row_floats();
  return [args, weights = std::move(weights)](TaskContext& context) { layer_norm(context.parallel, args); };
}

TaskFunction layer_norm_grad_input_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  LayerNormArgs args = layer_norm_args(b);
  args.dy = norm_rows(b.required_input(1));
  args.gamma = weights->data(norm_rules::kGamma);
  const ChannelBlock dx = b.output(0);
  args.out = dx.data;
  args.out_stride = dx.row_floats();
  return [args, weights = std::move(weights)](TaskContext& context) { layer_norm_grad_input(context.parallel, args); };
}

TaskFunction layer_norm_grad_weight_task(const OpBinding& b) {
  LayerNormArgs args = layer_norm_args(b);
  args.dy = norm_rows(b.required_input(1));
  args.out = b.gradient_output();
  args.previous = b.previous_gradient();
  return [args](TaskContext&) { layer_norm_grad_weight(args); };
}

TaskFunction gelu_task(const OpBinding& b) {
  const Rows x = b.required_input(0);
  const ChannelBlock y = b.output(0);
  const int64_t rows = b.rows();
  return [=](TaskContext&) { gelu_rows(x.data, x.stride, y.data, y.row_floats(), rows, y.row_floats()); };
}

TaskFunction gelu_grad_task(const OpBinding& b) {
  const Rows x = b.required_input(0);
  const Rows dy = b.required_input(1);
  const ChannelBlock dx = b.output(0);
  const int64_t rows = b.rows();
  return [=](TaskContext&) {
    gelu_grad_rows(x.data, x.stride, dy.data, dy.stride, dx.data, dx.row_floats(), rows, dx.row_floats());
  };
}

TaskFunction embedding_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  const Shape& shape = b.node().output_shapes.at(0);
  EmbeddingArgs args;
  args.rows = b.rows();
  args.positions = shape.at(0);
  args.features = shape.at(1);
  args.vocab = b.node().attrs.vocab;
  const Rows ids = b.required_input(0);
  args.ids = ids.data;
  args.ids_stride = ids.stride;
  args.table = weights->data(0);
  args.positional = b.node().attrs.positions ? weights->data(1) : nullptr;
  const ChannelBlock y = b.output(0);
  args.out = y.data;
  args.out_stride = y.row_floats();
  return [args, weights = std::move(weights)](TaskContext&) { embedding(args); };
}

TaskFunction embedding_grad_weight_task(const OpBinding& b) {
  const Shape& shape = b.node().output_shapes.at(0);
  EmbeddingGradArgs args;
  args.rows = b.rows();
  args.positions = shape.at(0);
  args.features = shape.at(1);
  args.vocab = b.node().attrs.vocab;
  args.positional = b.node().attrs.positions;
  const Rows ids = b.required_input(0);
  args.ids = ids.data;
  args.ids_stride = ids.stride;
  const Rows dy = b.required_input(1);
  args.dy = dy.data;
  args.dy_stride = dy.stride;
  args.gradient = b.gradient_output();
  args.previous = b.previous_gradient();
  return [args](TaskContext&) { embedding_grad_weight(args); };
}

/// Attention's sizes and its Q | K | V input, for either direction. A slice
/// of the head-wise split holds its heads' Q | K | V end to end and writes
/// their context: the kernels run it as an attention of that many heads.
AttentionArgs attention_args(const OpBinding& b) {
  const OpNode& node = b.node();
  const Shape& context = node.kind == OpKind::kAttentionGrad ? node.input_shapes.at(1) : node.output_shapes.at(0);
  const FeatureCut& cut = b.op().slice.features;
  AttentionArgs args;
  args.rows = b.rows();
  args.positions = context.at(0);
  args.features = cut.count(context.at(1));
  args.heads = node.attrs.heads * args.features / context.at(1);
  args.causal = node.attrs.causal;
  const Rows qkv = b.required_input(0);
  args.qkv = qkv.data;
  args.qkv_stride = qkv.stride;
  const ChannelBlock out = b.output(0);
  args.out = out.data;
  args.out_stride = out.row_floats();
  return args;
}

TaskFunction attention_task(const OpBinding& b) {
  const AttentionArgs args = attention_args(b);
  return [args](TaskContext&) { attention(args); };
}

TaskFunction attention_grad_task(const OpBinding& b) {
  AttentionArgs args = attention_args(b);
  const Rows d_context = b.required_input(1);
  args.d_context = d_context.data;
  args.d_context_stride = d_context.stride;
  return [args](TaskContext&) { attention_grad(args); };
}

/// A linear slice's input features and units: the forward's, cut by the
/// head-wise split (ir/feature_cut.hpp) along W's rows or its columns.
std::pair<int64_t, int64_t> linear_slice_sizes(const OpNode& node, const Slice& slice) {
  const bool forward = node.kind == OpKind::kLinear || node.kind == OpKind::kLinearGradWeight;
  const int64_t inputs = forward ? node.input_shapes.at(0).at(1) : node.output_shapes.at(0).at(1);
  const int64_t units = forward ? node.output_shapes.at(0).at(1) : node.input_shapes.at(0).at(1);
  if (slice.features.whole()) return {inputs, units};
  if (slice.features.rows) return {slice.features.count(inputs), units};
  return {inputs, slice.features.count(units)};
}

/// linear: the dense kernels over each sample's T positions (rows of its [T, in] block).
TaskFunction linear_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  const Shape& x_shape = b.node().input_shapes.at(0);
  const Rows x = b.required_input(0);
  const ChannelBlock y = b.output(0);
  DenseArgs args;
  args.rows = x_shape.at(0);
  std::tie(args.inputs, args.outputs) = linear_slice_sizes(b.node(), b.op().slice);
  args.x_stride = args.inputs;
  args.w = weights->data(kWeight);
  args.bias = b.node().attrs.bias ? weights->data(kBias) : nullptr;  // null where a row split's slice has none
  args.y_stride = args.outputs;
  const int64_t samples = b.rows();
  return [args, x, y, samples, weights = std::move(weights)](TaskContext& context) {
    for (int64_t r = 0; r < samples; ++r) {
      DenseArgs sample = args;
      sample.x = x.data + r * x.stride;
      sample.y = y.data + r * y.row_floats();
      dense(context.parallel, sample);
    }
  };
}

TaskFunction linear_grad_input_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights) {
  const Shape& dx_shape = b.node().output_shapes.at(0);
  const Rows dy = b.required_input(0);
  const ChannelBlock dx = b.output(0);
  DenseGradInputArgs args;
  args.rows = dx_shape.at(0);
  std::tie(args.inputs, args.outputs) = linear_slice_sizes(b.node(), b.op().slice);
  args.dz_stride = args.outputs;
  args.w = weights->data(kWeight);
  args.dx_stride = args.inputs;
  const int64_t samples = b.rows();
  return [args, dy, dx, samples, weights = std::move(weights)](TaskContext& context) {
    for (int64_t r = 0; r < samples; ++r) {
      DenseGradInputArgs sample = args;
      sample.dz = dy.data + r * dy.stride;
      sample.dx = dx.data + r * dx.row_floats();
      dense_grad_input(context.parallel, sample);
    }
  };
}

/// Sample by sample into one sum: the first adds to the earlier micro-batches' (or starts at zero), the rest to it.
TaskFunction linear_grad_weight_task(const OpBinding& b) {
  const Shape& x_shape = b.node().input_shapes.at(0);
  const Rows x = b.required_input(0);
  const Rows dy = b.required_input(1);
  DenseGradWeightArgs args;
  args.rows = x_shape.at(0);
  std::tie(args.inputs, args.outputs) = linear_slice_sizes(b.node(), b.op().slice);
  args.x_stride = args.inputs;
  args.dz_stride = args.outputs;
  const FeatureCut& cut = b.op().slice.features;
  const bool bias = b.node().attrs.bias && (!cut.rows || cut.range.begin == 0);
  const int64_t w_floats = args.inputs * args.outputs;
  args.dw = b.gradient_output();
  args.db = bias ? args.dw + w_floats : nullptr;
  const float* previous = b.previous_gradient();
  const int64_t samples = b.rows();
  return [args, x, dy, bias, w_floats, previous, samples](TaskContext& context) {
    for (int64_t r = 0; r < samples; ++r) {
      DenseGradWeightArgs sample = args;
      sample.x = x.data + r * x.stride;
      sample.dz = dy.data + r * dy.stride;
      const float* sum = r == 0 ? previous : args.dw;
      if (sum != nullptr) {
        sample.previous_w = sum;
        sample.previous_b = bias ? sum + w_floats : nullptr;
      }
      dense_grad_weight(context.parallel, sample);
    }
  };
}

TaskFunction dropout_task(const PlanOp& op, const OpBinding& b) {
  const OpNode& node = b.node();
  const Shape& shape = node.output_shapes.at(0);
  DropoutArgs args;
  args.rows = b.rows();
  args.width = op.slice.out.size() * inner_count(shape);
  args.first_row = op.slice.batch.begin;
  args.first_element = op.slice.out.begin * inner_count(shape);
  args.sample_elements = element_count(shape);
  args.layer = node.layer;
  args.rate = static_cast<float>(node.attrs.rate);
  args.training = node.attrs.training;
  const Rows x = b.required_input(0);
  args.x = x.data;
  args.x_stride = x.stride;
  const ChannelBlock y = b.output(0);
  args.y = y.data;
  args.y_stride = y.row_floats();
  return [args](TaskContext&) { dropout(args); };
}

/// The optimizer step of one parameter value, in place (training_spec.hpp
/// gives the equations). The gradient lies flat, its tensors end to end in
/// the WeightSlice's order; so does the state.
TaskFunction update_task(const Plan& plan, const PlanOp& op, ValueBuffers& buffers, WeightStore& store) {
  SPLITSCOPE_CHECK(plan.graph->is_training() && op.inputs.size() == 1, op_label(plan, op) + " is not an update");
  const Optimizer optimizer = plan.graph->training()->optimizer;
  const Value& params = plan.value(op.params);
  std::shared_ptr<WeightSlice> weights = store.get_mutable(params);
  // The step updates the masters; store_update() writes what the products read from them.
  std::shared_ptr<WeightSlice> masters = store.masters(params);
  const StoredFormats formats = stored_formats(plan.precision);
  const int per_weight = optimizer.state_per_param();
  float* state = per_weight > 0 ? store.optimizer_state(params, per_weight).data() : nullptr;
  int64_t* updates = &store.updates(params);
  const ConstChannelBlock gradient = std::as_const(buffers).block(op.inputs[0]);
  const int64_t count = gradient.floats();
  SPLITSCOPE_CHECK(count * static_cast<int64_t>(sizeof(float)) == weights->bytes(),
                   op_label(plan, op) + ": its gradient and weights differ in size");
  const std::span<float> state_values(state, state != nullptr ? static_cast<size_t>(count * per_weight) : 0);
  return [=](TaskContext& context) {
    *updates += 1;
    apply_optimizer_step(context.parallel, optimizer_step(optimizer, optimizer.learning_rate, *updates),
                         masters->tensors, gradient.data, state);
    if (!formats.all_float32()) store_update(formats, *masters, *weights, state_values);
  };
}

/// A cell step's backward, element-wise half: gate gradients and the second
/// output (LSTM dc_{t-1}; GRU the direct part of dh_{t-1}).
TaskFunction cell_grad_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights, float* scratch) {
  const bool gru = b.node().kind == OpKind::kGruCellGrad;
  CellGradArgs args;
  args.rows = b.rows();
  args.inputs = b.node().attrs.cell_inputs;
  args.hidden = b.node().attrs.hidden;
  args.unit_begin = b.op().slice.out.begin;
  args.units = b.op().slice.out.size();
  const Rows x = b.required_input(0);
  args.x = x.data;
  args.x_stride = x.stride;
  if (const auto h = b.input(1)) {
    args.h_prev = h->data;
    args.h_prev_stride = h->stride;
  }
  if (!gru) {
    if (const auto c = b.input(2)) {
      args.c_prev = c->data;
      args.c_prev_stride = c->stride;
    }
    if (const auto dc = b.input(4)) {
      args.dc = dc->data;
      args.dc_stride = dc->stride;
    }
  }
  const Rows dh = b.required_input(gru ? 2 : 3);
  args.dh = dh.data;
  args.dh_stride = dh.stride;
  args.wx = weights->data(kInputWeight);
  args.wh = weights->data(kRecurrentWeight);
  args.bias = weights->data(kCellBias);
  const ChannelBlock dgates = b.output(0);
  const ChannelBlock second = b.output(1);
  args.dgates = dgates.data;
  args.dgates_stride = dgates.row_floats();
  args.second = second.data;
  args.second_stride = second.row_floats();
  args.workspace = scratch;
  if (gru) return [args, weights = std::move(weights)](TaskContext& context) { gru_cell_grad(context.parallel, args); };
  return [args, weights = std::move(weights)](TaskContext& context) { lstm_cell_grad(context.parallel, args); };
}

/// The gate-gradient columns each product takes (recurrent_cell_backward.hpp).
constexpr std::array<int, 4> kLstmColumns{0, 1, 2, 3};
constexpr std::array<int, 3> kGruInputColumns{0, 1, 2};
constexpr std::array<int, 3> kGruHiddenColumns{0, 1, 3};

CellGradProductArgs cell_product_args(const OpBinding& b, int dgates_slot, float* scratch) {
  const bool gru = b.node().attrs.gru;
  CellGradProductArgs args;
  args.rows = b.rows();
  args.inputs = b.node().attrs.cell_inputs;
  args.hidden = b.node().attrs.hidden;
  const Range units = cell_rules::gradient_units(b.node(), b.op().slice);
  args.unit_begin = units.begin;
  args.units = units.size();
  args.x_columns = gru ? std::span<const int>(kGruInputColumns) : std::span<const int>(kLstmColumns);
  args.h_columns = gru ? std::span<const int>(kGruHiddenColumns) : std::span<const int>(kLstmColumns);
  const Rows dgates = b.required_input(dgates_slot);
  args.dgates = dgates.data;
  args.dgates_stride = dgates.stride;
  args.workspace = scratch;
  return args;
}

TaskFunction cell_grad_input_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights, float* scratch) {
  const CellGradProductArgs args = cell_product_args(b, 0, scratch);
  const ChannelBlock dx = b.output(0);
  return [args, dx, weights = std::move(weights)](TaskContext& context) {
    cell_grad_input(context.parallel, args, weights->data(kInputWeight), dx.data, dx.row_floats());
  };
}

TaskFunction cell_grad_hidden_task(const OpBinding& b, std::shared_ptr<const WeightSlice> weights, float* scratch) {
  const CellGradProductArgs args = cell_product_args(b, 0, scratch);
  const std::optional<Rows> direct = b.node().attrs.gru ? b.input(1) : std::nullopt;
  const float* direct_data = direct ? direct->data : nullptr;
  const int64_t direct_stride = direct ? direct->stride : 0;
  const ChannelBlock dh = b.output(0);
  return [=, weights = std::move(weights)](TaskContext& context) {
    cell_grad_hidden(context.parallel, args, weights->data(kRecurrentWeight), direct_data, direct_stride, dh.data,
                     dh.row_floats());
  };
}

TaskFunction cell_grad_weight_task(const OpBinding& b, float* scratch) {
  const CellGradProductArgs args = cell_product_args(b, 2, scratch);
  const Rows x = b.required_input(0);
  const std::optional<Rows> h = b.input(1);
  const float* h_data = h ? h->data : nullptr;
  const int64_t h_stride = h ? h->stride : 0;
  const bool bias = b.node().attrs.bias;
  const float* previous = b.previous_gradient();
  float* gradient = b.gradient_output();
  return [=](TaskContext& context) {
    cell_grad_weight(context.parallel, args, x.data, x.stride, h_data, h_stride, bias, previous, gradient);
  };
}

/// One kernel per op kind: how to bind it, and the scratch it needs.
struct CpuKernel {
  TaskFunction (*bind)(const PlanOp& op, const OpBinding& binding, WeightStore& weights, float* scratch) = nullptr;
  int64_t (*scratch_floats)(const OpNode& node, const Slice& slice) = nullptr;
  /// Whether its kernel spreads its work over the device's intra-op threads
  /// (takes the TaskContext's ParallelFor); the others run on one thread.
  bool splits_over_threads = false;
};

std::shared_ptr<const WeightSlice> weights_of(const OpBinding& binding, WeightStore& weights) {
  return weights.get(binding.params());
}

TaskFunction bind_dense(const PlanOp& op, const OpBinding& b, WeightStore& w, float*) {
  return dense_task(op, b, weights_of(b, w));
}
TaskFunction bind_conv2d(const PlanOp& op, const OpBinding& b, WeightStore& w, float* scratch) {
  return conv2d_task(op, b, weights_of(b, w), scratch);
}
TaskFunction bind_cell(const PlanOp& op, const OpBinding& b, WeightStore& w, float* scratch) {
  return cell_task(op, b, weights_of(b, w), scratch);
}
TaskFunction bind_pool(const PlanOp& op, const OpBinding& b, WeightStore&, float*) { return pool_task(op, b); }
TaskFunction bind_relu(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return activation_task(Activation::kRelu, b);
}
TaskFunction bind_tanh(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return activation_task(Activation::kTanh, b);
}
TaskFunction bind_sigmoid(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return activation_task(Activation::kSigmoid, b);
}
TaskFunction bind_softmax(const PlanOp& op, const OpBinding& b, WeightStore&, float*) { return softmax_task(op, b); }
TaskFunction bind_flatten(const PlanOp&, const OpBinding& b, WeightStore&, float*) { return flatten_task(b); }
TaskFunction bind_stack(const PlanOp& op, const OpBinding& b, WeightStore&, float*) { return stack_task(op, b); }
TaskFunction bind_add(const PlanOp&, const OpBinding& b, WeightStore&, float*) { return add_task(b); }
TaskFunction bind_concat(const PlanOp& op, const OpBinding& b, WeightStore&, float*) {
  return concat_task(op, b.plan(), b);
}
TaskFunction bind_step_slice(const PlanOp& op, const OpBinding& b, WeightStore&, float*) {
  return step_slice_task(op, b);
}

TaskFunction bind_loss(const PlanOp&, const OpBinding& b, WeightStore&, float*) { return loss_task(b); }
TaskFunction bind_activation_grad(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return activation_grad_task(b);
}
TaskFunction bind_dense_grad_input(const PlanOp& op, const OpBinding& b, WeightStore& w, float*) {
  return dense_grad_input_task(op, b, weights_of(b, w));
}
TaskFunction bind_dense_grad_weight(const PlanOp& op, const OpBinding& b, WeightStore&, float*) {
  return dense_grad_weight_task(op, b);
}
TaskFunction bind_conv2d_grad_input(const PlanOp& op, const OpBinding& b, WeightStore& w, float* scratch) {
  return conv2d_grad_input_task(op, b, weights_of(b, w), scratch);
}
TaskFunction bind_conv2d_grad_weight(const PlanOp& op, const OpBinding& b, WeightStore&, float* scratch) {
  return conv2d_grad_weight_task(op, b, scratch);
}
TaskFunction bind_pool_grad(const PlanOp& op, const OpBinding& b, WeightStore&, float*) { return pool_grad_task(op, b); }

TaskFunction bind_cell_grad(const PlanOp&, const OpBinding& b, WeightStore& w, float* scratch) {
  return cell_grad_task(b, weights_of(b, w), scratch);
}
TaskFunction bind_cell_grad_input(const PlanOp&, const OpBinding& b, WeightStore& w, float* scratch) {
  return cell_grad_input_task(b, weights_of(b, w), scratch);
}
TaskFunction bind_cell_grad_hidden(const PlanOp&, const OpBinding& b, WeightStore& w, float* scratch) {
  return cell_grad_hidden_task(b, weights_of(b, w), scratch);
}
TaskFunction bind_cell_grad_weight(const PlanOp&, const OpBinding& b, WeightStore&, float* scratch) {
  return cell_grad_weight_task(b, scratch);
}

TaskFunction bind_batch_norm(const PlanOp& op, const OpBinding& b, WeightStore& w, float*) {
  return batch_norm_task(op, b, weights_of(b, w));
}
TaskFunction bind_batch_norm_grad_input(const PlanOp& op, const OpBinding& b, WeightStore& w, float*) {
  return batch_norm_grad_input_task(op, b, weights_of(b, w));
}
TaskFunction bind_batch_norm_grad_weight(const PlanOp& op, const OpBinding& b, WeightStore&, float*) {
  return batch_norm_grad_weight_task(op, b);
}
TaskFunction bind_layer_norm(const PlanOp&, const OpBinding& b, WeightStore& w, float*) {
  return layer_norm_task(b, weights_of(b, w));
}
TaskFunction bind_layer_norm_grad_input(const PlanOp&, const OpBinding& b, WeightStore& w, float*) {
  return layer_norm_grad_input_task(b, weights_of(b, w));
}
TaskFunction bind_layer_norm_grad_weight(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return layer_norm_grad_weight_task(b);
}
TaskFunction bind_dropout(const PlanOp& op, const OpBinding& b, WeightStore&, float*) { return dropout_task(op, b); }
TaskFunction bind_gelu(const PlanOp&, const OpBinding& b, WeightStore&, float*) { return gelu_task(b); }
TaskFunction bind_gelu_grad(const PlanOp&, const OpBinding& b, WeightStore&, float*) { return gelu_grad_task(b); }
TaskFunction bind_embedding(const PlanOp&, const OpBinding& b, WeightStore& w, float*) {
  return embedding_task(b, weights_of(b, w));
}
TaskFunction bind_embedding_grad_weight(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return embedding_grad_weight_task(b);
}
TaskFunction bind_linear(const PlanOp&, const OpBinding& b, WeightStore& w, float*) {
  return linear_task(b, weights_of(b, w));
}
TaskFunction bind_linear_grad_input(const PlanOp&, const OpBinding& b, WeightStore& w, float*) {
  return linear_grad_input_task(b, weights_of(b, w));
}
TaskFunction bind_linear_grad_weight(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return linear_grad_weight_task(b);
}
TaskFunction bind_attention(const PlanOp&, const OpBinding& b, WeightStore&, float*) { return attention_task(b); }
TaskFunction bind_attention_grad(const PlanOp&, const OpBinding& b, WeightStore&, float*) {
  return attention_grad_task(b);
}

int64_t conv2d_scratch(const OpNode& node, const Slice&) { return conv2d_workspace_floats(conv_geometry(node)); }
int64_t cell_grad_scratch(const OpNode&, const Slice& slice) {
  return cell_grad_workspace_floats(slice.batch.size(), slice.out.size());
}
int64_t cell_product_scratch(const OpNode& node, const Slice& slice) {
  return cell_grad_product_workspace_floats(slice.batch.size(), cell_rules::gradient_units(node, slice).size(),
                                            cell_rules::gradient_gates(node));
}
int64_t conv2d_grad_input_scratch(const OpNode& node, const Slice&) {
  return conv2d_backward_workspace_floats(grad_input_geometry(node));
}
int64_t conv2d_grad_weight_scratch(const OpNode& node, const Slice&) {
  return conv2d_backward_workspace_floats(conv_geometry(node));
}
int64_t lstm_scratch(const OpNode&, const Slice& slice) {
  return lstm_workspace_floats(slice.batch.size(), slice.out.size());
}
int64_t gru_scratch(const OpNode&, const Slice& slice) {
  return gru_workspace_floats(slice.batch.size(), slice.out.size());
}

/// The cpu backend's kernels, by OpKind. A kind left empty is one this
/// backend declares unsupported (the network input is provided, never run).
std::array<CpuKernel, kOpKindCount> make_kernel_table() {
  std::array<CpuKernel, kOpKindCount> table{};
  const auto set = [&](OpKind kind, CpuKernel kernel) { table[static_cast<size_t>(kind)] = kernel; };
  set(OpKind::kDense, {bind_dense, nullptr, true});
  set(OpKind::kConv2d, {bind_conv2d, conv2d_scratch, true});
  set(OpKind::kMaxPool, {bind_pool});
  set(OpKind::kAvgPool, {bind_pool});
  set(OpKind::kFlatten, {bind_flatten});
  set(OpKind::kSoftmax, {bind_softmax});
  set(OpKind::kRelu, {bind_relu});
  set(OpKind::kTanh, {bind_tanh});
  set(OpKind::kSigmoid, {bind_sigmoid});
  set(OpKind::kLstmCell, {bind_cell, lstm_scratch, true});
  set(OpKind::kGruCell, {bind_cell, gru_scratch, true});
  set(OpKind::kStack, {bind_stack});
  set(OpKind::kStepSlice, {bind_step_slice});
  set(OpKind::kAdd, {bind_add});
  set(OpKind::kConcat, {bind_concat});
  set(OpKind::kLoss, {bind_loss});
  set(OpKind::kActivationGrad, {bind_activation_grad});
  set(OpKind::kDenseGradInput, {bind_dense_grad_input, nullptr, true});
  set(OpKind::kDenseGradWeight, {bind_dense_grad_weight, nullptr, true});
  set(OpKind::kConv2dGradInput, {bind_conv2d_grad_input, conv2d_grad_input_scratch, true});
  set(OpKind::kConv2dGradWeight, {bind_conv2d_grad_weight, conv2d_grad_weight_scratch, true});
  set(OpKind::kMaxPoolGrad, {bind_pool_grad});
  set(OpKind::kAvgPoolGrad, {bind_pool_grad});
  set(OpKind::kUnflatten, {bind_flatten});  // the same contiguous copy, its shapes swapped
  set(OpKind::kChannelSlice, {bind_flatten});  // a contiguous copy from its first input channel
  set(OpKind::kLstmCellGrad, {bind_cell_grad, cell_grad_scratch, true});
  set(OpKind::kGruCellGrad, {bind_cell_grad, cell_grad_scratch, true});
  set(OpKind::kCellGradInput, {bind_cell_grad_input, cell_product_scratch, true});
  set(OpKind::kCellGradHidden, {bind_cell_grad_hidden, cell_product_scratch, true});
  set(OpKind::kCellGradWeight, {bind_cell_grad_weight, cell_product_scratch, true});
  set(OpKind::kBatchNorm, {bind_batch_norm, nullptr, true});
  set(OpKind::kLayerNorm, {bind_layer_norm, nullptr, true});
  set(OpKind::kDropout, {bind_dropout});
  set(OpKind::kBatchNormGradInput, {bind_batch_norm_grad_input, nullptr, true});
  set(OpKind::kBatchNormGradWeight, {bind_batch_norm_grad_weight, nullptr, true});
  set(OpKind::kLayerNormGradInput, {bind_layer_norm_grad_input, nullptr, true});
  set(OpKind::kLayerNormGradWeight, {bind_layer_norm_grad_weight});
  set(OpKind::kGelu, {bind_gelu});
  set(OpKind::kGeluGrad, {bind_gelu_grad});
  set(OpKind::kEmbedding, {bind_embedding});
  set(OpKind::kEmbeddingGradWeight, {bind_embedding_grad_weight});
  set(OpKind::kAttention, {bind_attention});
  set(OpKind::kAttentionGrad, {bind_attention_grad});
  set(OpKind::kLinear, {bind_linear, nullptr, true});
  set(OpKind::kLinearGradInput, {bind_linear_grad_input, nullptr, true});
  set(OpKind::kLinearGradWeight, {bind_linear_grad_weight, nullptr, true});
  return table;
}

const CpuKernel& kernel_of(OpKind kind) {
  static const std::array<CpuKernel, kOpKindCount> table = make_kernel_table();
  return table.at(static_cast<size_t>(kind));
}

}  // namespace

bool has_cpu_kernel(OpKind kind) { return kernel_of(kind).bind != nullptr; }

bool cpu_kernel_splits_over_threads(OpKind kind) { return kernel_of(kind).splits_over_threads; }

int64_t compute_scratch_floats(const Plan& plan, const PlanOp& op) {
  if (op.role != OpRole::kCompute) return 0;
  const OpNode& node = plan.graph->node(op.node);
  const CpuKernel& kernel = kernel_of(node.kind);
  return kernel.scratch_floats != nullptr ? kernel.scratch_floats(node, op.slice) : 0;
}

TaskFunction compute_task(const Plan& plan, const PlanOp& op, ValueBuffers& buffers, WeightStore& weights,
                          float* scratch) {
  if (op.role == OpRole::kEpilogue) return epilogue_task(plan, op, buffers);
  if (op.role == OpRole::kUpdate) return update_task(plan, op, buffers, weights);
  SPLITSCOPE_CHECK(op.role == OpRole::kCompute, "compute_task() of a data-movement op");
  const OpBinding binding(plan, op, buffers);
  const CpuKernel& kernel = kernel_of(binding.node().kind);
  SPLITSCOPE_CHECK(kernel.bind != nullptr,
                   "no CPU kernel for " + std::string(to_string(binding.node().kind)) + " (" + binding.label() + ")");
  return kernel.bind(op, binding, weights, scratch);
}

}  // namespace splitscope
