#include "exec/cpu/fused_rnn_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "ir/layer_costs.hpp"
#include "ir/params.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

void check_request(const Graph& graph, int layer, const RunOptions& options) {
  const Model& model = graph.model();
  if (layer < 0 || layer >= static_cast<int>(model.layers.size())) {
    throw InputError(model.source, "layers", fmt::format("there is no layer {}", layer));
  }
  const Layer& chosen = model.layers[static_cast<size_t>(layer)];
  if (!is_recurrent(chosen.kind)) {
    throw InputError(model.source, fmt::format("layers[{}]", layer),
                     fmt::format("'{}' is a {} layer; the fused loop runs an lstm or gru layer", chosen.name,
                                 layer_type(chosen.kind)));
  }
  if (layer != 0) {
    throw InputError(model.source, fmt::format("layers[{}]", layer),
                     "the fused loop runs the network's first layer (its input is the network input)");
  }
  if (options.repeats < 1) throw InputError("--repeat", "", "give at least 1 timed run");
  if (options.warmup < 0) throw InputError("--warmup", "", "give 0 or more warm-up runs");
}

/// One stacked recurrent layer, its weights and buffers made once; run()
/// is one timed forward pass.
class FusedStack {
 public:
  FusedStack(const Graph& graph, int layer, uint64_t seed, IntraOpPool& pool)
      : layer_(graph.model().layers.at(static_cast<size_t>(layer))),
        lstm_(layer_.kind == OpKind::kLstmCell),
        gates_(gate_count(layer_.kind)),
        batch_(graph.batch()),
        steps_(layer_.input_shape.at(0)),
        hidden_(layer_.attrs.hidden),
        pool_(pool),
        input_(network_input(graph, seed).data) {
    for (int64_t l = 0; l < layer_.stacked; ++l) {
      const NodeId cell = stacked_layer_cell(graph, layer, l);
      weights_.push_back(
          materialise_weights(graph, cell, full_slice(graph.node(cell), {0, batch_}), seed, pool_));
      inputs_.push_back(graph.node(cell).input_shapes.at(kCellInputSlot).at(0));
    }
    const int64_t rows = batch_ * steps_;
    for (auto& sequence : sequences_) sequence.assign(static_cast<size_t>(rows * hidden_), 0.0f);
    pre_.assign(static_cast<size_t>(rows * gates_ * hidden_), 0.0f);
    state_.assign(static_cast<size_t>(batch_ * hidden_), 0.0f);
    from_h_.assign(static_cast<size_t>(batch_ * gates_ * hidden_), 0.0f);
  }

  /// The whole stack over the whole sequence. Samples are independent, so
  /// each of the pool's threads runs the whole stack over its own block of
  /// the batch, on its own (one sgemm thread), with no hand-off between
  /// threads until the end: the fewest synchronisations a loop can have.
  void run() {
    pool_.run(batch_, 1, [&](int64_t begin, int64_t end) { run_rows(begin, end - begin); });
  }

  HostTensor output() const {
    return stack_network_output(sequences_[(weights_.size() - 1) % 2], batch_, steps_, hidden_,
                                layer_.return_sequences);
  }

 private:
  int64_t width() const { return gates_ * hidden_; }

  /// Samples [first, first + count). Sequences are [B·T × features] with row
  /// b·T + t, the layout of the network input, so that a block of samples is
  /// a block of rows, one product covers all its steps, and step t's rows are
  /// every T-th row of it.
  void run_rows(int64_t first, int64_t count) {
    SerialFor serial;
    const float* x = input_.data() + first * steps_ * inputs_.front();
    for (size_t l = 0; l < weights_.size(); ++l) {
      float* out = sequences_[l % 2].data() + first * steps_ * hidden_;
      float* pre = pre_.data() + first * steps_ * width();
      input_projection(serial, l, count, x, pre);
      for (int64_t t = 0; t < steps_; ++t) step(serial, l, t, count, pre, out, first);
      x = out;
    }
  }

  /// pre = X·Wx + b over all T·count rows of the block at once.
  void input_projection(ParallelFor& serial, size_t l, int64_t count, const float* x, float* pre) const {
    const int64_t rows = count * steps_;
    const float* bias = weights_[l].data(kCellBias);
    float beta = 0.0f;
    if (bias != nullptr) {
      for (int64_t r = 0; r < rows; ++r) std::copy_n(bias, width(), pre + r * width());
      beta = 1.0f;
    }
    gemm(serial, rows, width(), inputs_[l], {x, inputs_[l]}, {weights_[l].data(kInputWeight), width()}, beta, pre,
         width());
  }

  /// Step t of stacked layer l for the block's `count` samples (the first
  /// of which is `first`): the recurrent product, then the gate math.
  void step(ParallelFor& serial, size_t l, int64_t t, int64_t count, float* pre, float* out, int64_t first) {
    const int64_t pre_stride = steps_ * width();
    const int64_t seq_stride = steps_ * hidden_;
    float* pre_t = pre + t * width();
    CellArgs args;
    args.rows = count;
    args.hidden = hidden_;
    args.units = hidden_;
    args.h_prev = t > 0 ? out + (t - 1) * hidden_ : nullptr;
    args.h_prev_stride = seq_stride;
    args.h_out = out + t * hidden_;
    args.h_out_stride = seq_stride;
    const float* wh = weights_[l].data(kRecurrentWeight);
    if (lstm_) {
      if (args.h_prev != nullptr) {
        gemm(serial, count, width(), hidden_, {args.h_prev, seq_stride}, {wh, width()}, 1.0f, pre_t, pre_stride);
      }
      float* state = state_.data() + first * hidden_;
      args.c_prev = t > 0 ? state : nullptr;  // updated in place: each unit reads its c before writing it
      args.c_prev_stride = hidden_;
      args.c_out = state;
      args.c_out_stride = hidden_;
      lstm_cell_pointwise(args, pre_t, pre_stride);
      return;
    }
    float* from_h = from_h_.data() + first * width();
    if (args.h_prev != nullptr) {
      gemm(serial, count, width(), hidden_, {args.h_prev, seq_stride}, {wh, width()}, 0.0f, from_h, width());
    } else {
      std::fill_n(from_h, count * width(), 0.0f);
    }
    gru_cell_pointwise(args, pre_t, pre_stride, from_h, width());
  }

  const Layer& layer_;
  bool lstm_;
  int64_t gates_;
  int64_t batch_;
  int64_t steps_;
  int64_t hidden_;
  IntraOpPool& pool_;
  std::vector<float> input_;
  std::vector<WeightSlice> weights_;
  std::vector<int64_t> inputs_;  ///< input features of each stacked layer
  std::vector<float> sequences_[2];  ///< layer outputs, alternating: layer l writes l % 2, reads the other
  std::vector<float> pre_;           ///< gate pre-activations of every step
  std::vector<float> state_;         ///< LSTM c
  std::vector<float> from_h_;        ///< GRU h·Wh of the current step
};

}  // namespace

HostTensor stack_network_output(const std::vector<float>& top, int64_t batch, int64_t steps, int64_t hidden,
                                bool return_sequences) {
  HostTensor tensor;
  if (return_sequences) {
    tensor.shape = {batch, steps, hidden};
    tensor.data = top;
    return tensor;
  }
  tensor.shape = {batch, hidden};
  tensor.data.resize(static_cast<size_t>(batch * hidden));
  for (int64_t b = 0; b < batch; ++b) {
    std::copy_n(top.data() + (b * steps + steps - 1) * hidden, hidden, tensor.data.data() + b * hidden);
  }
  return tensor;
}

NodeId stacked_layer_cell(const Graph& graph, int layer, int64_t sublayer) {
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const OpNode& node = graph.node(id);
    if (is_cell(node.kind) && node.layer == layer && node.sublayer == sublayer && node.step == 0) return id;
  }
  SPLITSCOPE_CHECK(false, fmt::format("no cell for stacked layer {} of layer {}", sublayer, layer));
  return 0;
}

FusedRnnLoopResult run_fused_rnn_loop(const Graph& graph, int layer, const RunOptions& options) {
  check_request(graph, layer, options);
  use_single_threaded_blas();
  RunOptions one_device = options;
  one_device.inter_op_threads = 0;
  const ThreadConfig threads = resolve_threads(one_device, 1, read_host_info().hardware_threads);
  IntraOpPool pool(threads.intra_op);
  FusedStack stack(graph, layer, options.seed, pool);

  FusedRnnLoopResult result;
  result.threads = threads.intra_op;
  for (int index = -options.warmup; index < options.repeats; ++index) {
    if (options.on_repeat) options.on_repeat(index, options.repeats);
    const auto start = std::chrono::steady_clock::now();
    stack.run();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (index >= 0) result.times_ms.push_back(took.count());
  }
  result.output = stack.output();
  return result;
}

}  // namespace splitscope
