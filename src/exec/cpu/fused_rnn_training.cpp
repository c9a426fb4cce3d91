#include "exec/cpu/fused_rnn_training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <span>

#include "exec/cpu/fused_rnn_loop.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/cell_grad_products.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/optimizer_step.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"
#include "exec/cpu/kernels/recurrent_cell_backward.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "ir/layer_costs.hpp"
#include "ir/params.hpp"
#include "ir/training.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// The gate-gradient columns each product takes (recurrent_cell_backward.hpp).
constexpr std::array<int, 4> kLstmColumns{0, 1, 2, 3};
constexpr std::array<int, 3> kGruInputColumns{0, 1, 2};
constexpr std::array<int, 3> kGruHiddenColumns{0, 1, 3};

void check_request(const Graph& graph, const RunOptions& options) {
  const Model& model = graph.model();
  if (!graph.is_training()) throw InputError(model.source, "", "the fused training loop takes a training graph");
  if (model.layers.size() != 1 || !is_recurrent(model.layers.front().kind)) {
    throw InputError(model.source, "layers",
                     "the fused training loop trains a network that is one stacked lstm or gru layer");
  }
  if (graph.training()->loss != LossKind::kMeanSquaredError) {
    throw InputError(model.source, "layers", "the fused training loop trains with mean squared error");
  }
  if (options.repeats < 1) throw InputError("--repeat", "", "give at least 1 step");
}

/// One stacked layer: its weights, optimizer state and what its forward
/// keeps for the backward. Sequences are [B·T × features] with row b·T + t,
/// the layout of the network input.
struct StackedLayer {
  WeightSlice weights;
  int64_t inputs = 0;            ///< I: features of its x
  std::vector<float> output;     ///< h of every step
  std::vector<float> pre;        ///< gate pre-activations of every step (GRU: the input side, x·Wx + b)
  std::vector<float> recurrent;  ///< LSTM: c of every step; GRU: h·Wh of every step
  std::vector<float> gradient;   ///< flat dWx, dWh, db (weight_slices.hpp's tensor order)
  std::vector<float> state;      ///< optimizer state, state_per_param() floats a weight
  int64_t updates = 0;
};

class FusedTrainer {
 public:
  FusedTrainer(const Graph& graph, uint64_t seed, IntraOpPool& pool)
      : graph_(graph),
        seed_(seed),
        layer_(graph.model().layers.front()),
        lstm_(layer_.kind == OpKind::kLstmCell),
        gates_(gate_count(layer_.kind)),
        batch_(graph.batch()),
        steps_(layer_.input_shape.at(0)),
        hidden_(layer_.attrs.hidden),
        pool_(pool),
        input_(network_input(graph, seed).data) {
    const int64_t rows = batch_ * steps_;
    const Optimizer& optimizer = graph.training()->optimizer;
    for (int64_t l = 0; l < layer_.stacked; ++l) {
      const NodeId cell = stacked_layer_cell(graph, 0, l);
      StackedLayer& s = layers_.emplace_back();
      s.weights = materialise_weights(graph, cell, full_slice(graph.node(cell), {0, batch_}), seed, pool_);
      s.inputs = graph.node(cell).input_shapes.at(kCellInputSlot).at(0);
      s.output.assign(static_cast<size_t>(rows * hidden_), 0.0f);
      s.pre.assign(static_cast<size_t>(rows * width()), 0.0f);
      s.recurrent.assign(static_cast<size_t>(rows * (lstm_ ? hidden_ : width())), 0.0f);
      int64_t weights = 0;
      for (const auto& tensor : s.weights.tensors) weights += static_cast<int64_t>(tensor.size());
      s.gradient.assign(static_cast<size_t>(weights), 0.0f);
      s.state.assign(static_cast<size_t>(weights * optimizer.state_per_param()), 0.0f);
    }
    int64_t widest = hidden_;
    for (const StackedLayer& s : layers_) widest = std::max(widest, s.inputs);
    sequence_gradient_.assign(static_cast<size_t>(rows * widest), 0.0f);
    below_gradient_.assign(static_cast<size_t>(rows * widest), 0.0f);
    gate_gradients_.assign(static_cast<size_t>(rows * hidden_ * kCellGradColumns), 0.0f);
    shifted_.assign(static_cast<size_t>(rows * hidden_), 0.0f);
    products_.assign(static_cast<size_t>(cell_grad_product_workspace_floats(rows, hidden_, gates_)), 0.0f);
    for (auto* buffer : {&dh_, &dh_next_, &dc_next_, &second_}) buffer->assign(static_cast<size_t>(batch_ * hidden_), 0.0f);
  }

  /// One training step; returns its forward pass's loss.
  double step() {
    for (size_t l = 0; l < layers_.size(); ++l) forward(l);
    output_ = output();
    const double loss = step_loss(graph_, output_.data, seed_);
    output_gradient();
    for (size_t l = layers_.size(); l-- > 0;) backward(l);
    for (StackedLayer& s : layers_) update(s);
    return loss;
  }

  const HostTensor& last_output() const { return output_; }

 private:
  int64_t width() const { return gates_ * hidden_; }
  int64_t rows() const { return batch_ * steps_; }
  const float* x_of(size_t l) const { return l == 0 ? input_.data() : layers_[l - 1].output.data(); }

  /// Layer l over the whole sequence, keeping what its backward reads.
  void forward(size_t l) {
    StackedLayer& s = layers_[l];
    const float* bias = s.weights.data(kCellBias);
    float beta = 0.0f;
    if (bias != nullptr) {
      for (int64_t r = 0; r < rows(); ++r) std::copy_n(bias, width(), s.pre.data() + r * width());
      beta = 1.0f;
    }
    gemm(pool_, rows(), width(), s.inputs, {x_of(l), s.inputs}, {s.weights.data(kInputWeight), width()}, beta,
         s.pre.data(), width());
    const int64_t pre_stride = steps_ * width();
    const int64_t seq_stride = steps_ * hidden_;
    const float* wh = s.weights.data(kRecurrentWeight);
    for (int64_t t = 0; t < steps_; ++t) {
      float* pre_t = s.pre.data() + t * width();
      CellArgs args;
      args.rows = batch_;
      args.hidden = hidden_;
      args.units = hidden_;
      args.h_prev = t > 0 ? s.output.data() + (t - 1) * hidden_ : nullptr;
      args.h_prev_stride = seq_stride;
      args.h_out = s.output.data() + t * hidden_;
      args.h_out_stride = seq_stride;
      if (lstm_) {
        if (args.h_prev != nullptr) {
          gemm(pool_, batch_, width(), hidden_, {args.h_prev, seq_stride}, {wh, width()}, 1.0f, pre_t, pre_stride);
        }
        args.c_prev = t > 0 ? s.recurrent.data() + (t - 1) * hidden_ : nullptr;
        args.c_prev_stride = seq_stride;
        args.c_out = s.recurrent.data() + t * hidden_;
        args.c_out_stride = seq_stride;
        lstm_cell_pointwise(args, pre_t, pre_stride);
        continue;
      }
      float* from_h = s.recurrent.data() + t * width();
      if (args.h_prev != nullptr) {
        gemm(pool_, batch_, width(), hidden_, {args.h_prev, seq_stride}, {wh, width()}, 0.0f, from_h, pre_stride);
      } else {
        for (int64_t b = 0; b < batch_; ++b) std::fill_n(from_h + b * pre_stride, width(), 0.0f);
      }
      gru_cell_pointwise(args, pre_t, pre_stride, from_h, pre_stride);
    }
  }

  /// The network output: the top layer's h at the last step, or every step's.
  HostTensor output() const {
    return stack_network_output(layers_.back().output, batch_, steps_, hidden_, layer_.return_sequences);
  }

  /// The top layer's sequence gradient from the loss: 2(y − t)/(B·n), as the
  /// plan's loss op, at the rows the output takes (zeros elsewhere).
  void output_gradient() {
    const auto width = static_cast<int64_t>(output_.data.size()) / batch_;
    const float scale = 2.0f / (static_cast<float>(batch_) * static_cast<float>(width));
    std::fill_n(sequence_gradient_.begin(), rows() * hidden_, 0.0f);
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t e = 0; e < width; ++e) {
        const int64_t element = b * width + e;
        const float target = target_value(seed_, element, LossKind::kMeanSquaredError, 0);
        // Without return_sequences the output is step T-1's h: row b·T + T-1.
        const int64_t at = layer_.return_sequences ? element : (b * steps_ + steps_ - 1) * hidden_ + e;
        sequence_gradient_[static_cast<size_t>(at)] = (output_.data[static_cast<size_t>(element)] - target) * scale;
      }
    }
  }

  CellGradProductArgs product_args(size_t l, int64_t rows, const float* dgates, int64_t dgates_stride) {
    CellGradProductArgs args;
    args.rows = rows;
    args.inputs = layers_[l].inputs;
    args.hidden = hidden_;
    args.x_columns = lstm_ ? std::span<const int>(kLstmColumns) : std::span<const int>(kGruInputColumns);
    args.h_columns = lstm_ ? std::span<const int>(kLstmColumns) : std::span<const int>(kGruHiddenColumns);
    args.dgates = dgates;
    args.dgates_stride = dgates_stride;
    args.workspace = products_.data();
    return args;
  }

  /// Layer l's backward, given the gradient of its output sequence in
  /// sequence_gradient_; leaves its input's in sequence_gradient_ (l > 0).
  void backward(size_t l) {
    StackedLayer& s = layers_[l];
    const int64_t pre_stride = steps_ * width();
    const int64_t seq_stride = steps_ * hidden_;
    const int64_t gates_stride = steps_ * hidden_ * kCellGradColumns;
    const float* wh = s.weights.data(kRecurrentWeight);
    std::fill(dh_next_.begin(), dh_next_.end(), 0.0f);
    std::fill(dc_next_.begin(), dc_next_.end(), 0.0f);
    for (int64_t t = steps_ - 1; t >= 0; --t) {
      // dh_t: the output's gradient at step t and the recurrence's from step t + 1.
      for (int64_t b = 0; b < batch_; ++b) {
        const float* from_output = sequence_gradient_.data() + (b * steps_ + t) * hidden_;
        const float* from_next = dh_next_.data() + b * hidden_;
        float* dh = dh_.data() + b * hidden_;
        for (int64_t u = 0; u < hidden_; ++u) dh[u] = from_output[u] + from_next[u];
      }
      CellGradArgs args;
      args.rows = batch_;
      args.inputs = s.inputs;
      args.hidden = hidden_;
      args.dh = dh_.data();
      args.dh_stride = hidden_;
      args.dgates = gate_gradients_.data() + t * hidden_ * kCellGradColumns;
      args.dgates_stride = gates_stride;
      args.second = second_.data();
      args.second_stride = hidden_;
      if (lstm_) {
        args.c_prev = t > 0 ? s.recurrent.data() + (t - 1) * hidden_ : nullptr;
        args.c_prev_stride = seq_stride;
        args.dc = dc_next_.data();
        args.dc_stride = hidden_;
        lstm_cell_grad_pointwise(pool_, args, s.pre.data() + t * width(), pre_stride);
        std::swap(dc_next_, second_);  // dc_{t-1}
      } else {
        args.h_prev = t > 0 ? s.output.data() + (t - 1) * hidden_ : nullptr;
        args.h_prev_stride = seq_stride;
        gru_cell_grad_pointwise(pool_, args, s.pre.data() + t * width(), pre_stride,
                                s.recurrent.data() + t * width(), pre_stride);
      }
      if (t == 0) break;  // h_{-1} is a constant: no gradient
      const CellGradProductArgs step = product_args(l, batch_, args.dgates, gates_stride);
      cell_grad_hidden(pool_, step, wh, lstm_ ? nullptr : second_.data(), hidden_, dh_next_.data(), hidden_);
    }
    // Over all T·B rows at once: dx, and the weights' gradient.
    const CellGradProductArgs all = product_args(l, rows(), gate_gradients_.data(), hidden_ * kCellGradColumns);
    if (l > 0) {
      cell_grad_input(pool_, all, s.weights.data(kInputWeight), below_gradient_.data(), s.inputs);
    }
    // h_{t-1} at row b·T + t, zeros at t = 0.
    for (int64_t b = 0; b < batch_; ++b) {
      float* rows_of_b = shifted_.data() + b * seq_stride;
      std::fill_n(rows_of_b, hidden_, 0.0f);
      std::copy_n(s.output.data() + b * seq_stride, (steps_ - 1) * hidden_, rows_of_b + hidden_);
    }
    cell_grad_weight(pool_, all, x_of(l), s.inputs, shifted_.data(), hidden_, s.weights.data(kCellBias) != nullptr,
                     nullptr, s.gradient.data());
    if (l > 0) std::swap(sequence_gradient_, below_gradient_);
  }

  void update(StackedLayer& s) {
    const Optimizer& optimizer = graph_.training()->optimizer;
    apply_optimizer_step(pool_, optimizer_step(optimizer, optimizer.learning_rate, ++s.updates), s.weights.tensors,
                         s.gradient.data(), s.state.empty() ? nullptr : s.state.data());
  }

  const Graph& graph_;
  uint64_t seed_;
  const Layer& layer_;
  bool lstm_;
  int64_t gates_;
  int64_t batch_;
  int64_t steps_;
  int64_t hidden_;
  IntraOpPool& pool_;
  std::vector<float> input_;
  std::vector<StackedLayer> layers_;
  HostTensor output_;
  std::vector<float> sequence_gradient_;  ///< gradient of the current layer's output sequence
  std::vector<float> below_gradient_;     ///< of its input sequence (the layer below's output)
  std::vector<float> gate_gradients_;     ///< every step's, unit-major, row b·T + t
  std::vector<float> shifted_;            ///< h_{t-1} at row b·T + t
  std::vector<float> products_;           ///< the gradient products' gathered gates
  std::vector<float> dh_, dh_next_, dc_next_, second_;  ///< [B × H] each
};

}  // namespace

FusedRnnTrainingResult run_fused_rnn_training(const Graph& graph, const RunOptions& options) {
  check_request(graph, options);
  use_single_threaded_blas();
  RunOptions one_device = options;
  one_device.inter_op_threads = 0;
  const ThreadConfig threads = resolve_threads(one_device, 1, read_host_info().hardware_threads);
  IntraOpPool pool(threads.intra_op);
  FusedTrainer trainer(graph, options.seed, pool);

  FusedRnnTrainingResult result;
  result.threads = threads.intra_op;
  for (int index = 0; index < options.repeats; ++index) {
    if (options.on_repeat) options.on_repeat(index, options.repeats);
    const auto start = std::chrono::steady_clock::now();
    result.losses.push_back(trainer.step());
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    result.times_ms.push_back(took.count());
  }
  result.output = trainer.last_output();
  return result;
}

}  // namespace splitscope
