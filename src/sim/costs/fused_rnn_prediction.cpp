#include "sim/costs/fused_rnn_prediction.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "ir/training.hpp"
#include "sim/costs/gemm_efficiency.hpp"
#include "sim/costs/op_cost_model.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = sizeof(float);

/// The T + L - 1 slices of an L-layer, T-step wavefront on one device: slice
/// k holds the cells with l + t = k, which share the device (up to `full`
/// seconds a cell side by side) and none of which ends sooner than `alone`;
/// one launch a slice.
double wavefront_seconds(int64_t steps, int64_t layers, double launch, double alone, double full) {
  double seconds = 0;
  for (int64_t k = 0; k < steps + layers - 1; ++k) {
    const int64_t cells = std::min(k, layers - 1) - std::max<int64_t>(0, k - (steps - 1)) + 1;
    seconds += launch + std::max(alone, static_cast<double>(cells) * full);
  }
  return seconds;
}

/// A step's FLOPs and bytes at the peaks, at the share the device achieves
/// of them for a product of `rows` rows (the cells of a full slice together):
/// what cells side by side reach at most.
double full_device_seconds(const OpCostModel& costs, int64_t flops, int64_t bytes, int64_t rows) {
  const DeviceFacts& facts = costs.facts();
  return costs.achieved_product_seconds(std::max(static_cast<double>(flops) / facts.matrix_flops_per_second,
                                                 static_cast<double>(bytes) / facts.dram_bytes_per_second),
                                        rows);
}

/// How the machine prices the stack, for the method sentence.
std::string_view rules_name(const Machine& machine, bool rules) {
  if (!rules) return "";
  return machine.device.achieved_rates != nullptr ? " (the datasheet rules at the achieved rates)" : " (datasheet rules)";
}

}  // namespace

FusedRnnPrediction predict_fused_rnn(const Machine& machine, const Graph& graph, int layer) {
  const Model& model = graph.model();
  if (layer < 0 || layer >= static_cast<int>(model.layers.size()) ||
      !is_recurrent(model.layers[static_cast<size_t>(layer)].kind)) {
    throw InputError(model.source, fmt::format("layers[{}]", layer), "is not an lstm or gru layer");
  }
  const Layer& rnn = model.layers[static_cast<size_t>(layer)];
  const Machine one_device = machine_for_plan(machine, 1);
  const OpCostModel costs(one_device);
  const bool lstm = rnn.kind == OpKind::kLstmCell;
  // A machine priced by the datasheet rules (docs/cost-model.md) prices the
  // products by the GEMM rule and launches at the rules' overhead.
  const bool rules = costs.priced_by_rules(lstm ? OpKind::kLstmCell : OpKind::kGruCell);
  const DeviceFacts& facts = costs.facts();
  const double launch = rules ? facts.launch_seconds : one_device.device.launch_overhead_seconds();
  // The roofline without its launch: what an op occupies the device for.
  const auto work = [&](std::string_view kind, int64_t flops, int64_t bytes) {
    return costs.roofline_seconds(kind, flops, bytes) - one_device.device.launch_overhead_seconds();
  };
  const int64_t gates = gate_count(rnn.kind);
  const int64_t batch = graph.batch();
  const int64_t steps = rnn.input_shape.at(0);
  const int64_t hidden = rnn.attrs.hidden;
  const int64_t width = gates * hidden;
  const std::string cell_kind(to_string(lstm ? OpKind::kLstmCell : OpKind::kGruCell));

  const int64_t step_flops = 2 * width * hidden * batch;
  const int64_t step_bytes =
      kFloat * (batch * hidden + hidden * width + batch * width + batch * hidden + (lstm ? 2 * batch * hidden : 0));
  double step_alone = work(cell_kind, step_flops, step_bytes);
  double step_full = work(to_string(OpKind::kDense), step_flops, step_bytes);
  if (rules) {
    // Alone: the recurrent product by the GEMM rule, then the gate kernel's
    // bytes (both products' pre-activations, the bias, the state in and out);
    // side by side: the same FLOPs and bytes at the peaks.
    const int64_t gate_bytes = kFloat * (2 * batch * width + width + batch * hidden * (lstm ? 3 : 2));
    const GemmShape recurrent{batch, width, hidden, 1};
    step_alone = costs.product_work_seconds(recurrent, gemm_bytes(recurrent)) + costs.streaming_work_seconds(gate_bytes);
    step_full = full_device_seconds(costs, step_flops, step_bytes, batch * rnn.stacked);
  }

  FusedRnnPrediction prediction;
  for (int64_t l = 0; l < rnn.stacked; ++l) {
    const int64_t input = l == 0 ? rnn.input_shape.at(1) : hidden;
    const int64_t rows = batch * steps;
    const int64_t input_flops = 2 * width * input * rows;
    const int64_t input_bytes = kFloat * (rows * input + input * width + (rnn.attrs.bias ? width : 0) + rows * width);
    prediction.input_products_seconds +=
        rules ? costs.product_work_seconds(GemmShape{rows, width, input, 1}, input_bytes)
              : work(to_string(OpKind::kDense), input_flops, input_bytes);
    prediction.launches += steps + 1;
  }
  // The first input product runs alone before the first step; every later
  // launch hides behind another stream's work except one per wavefront slice.
  prediction.input_products_seconds += launch;
  const int64_t slices = steps + rnn.stacked - 1;
  prediction.recurrent_steps_seconds = wavefront_seconds(steps, rnn.stacked, launch, step_alone, step_full);
  prediction.exposed_launches = 1 + slices;
  prediction.seconds = prediction.input_products_seconds + prediction.recurrent_steps_seconds;
  prediction.method = fmt::format(
      "predicted from {}'s cost model{}: cuDNN's wavefront over the {} stacked layers on one device (per layer one "
      "input product over T*B = {} rows at dense efficiency and {} recurrent steps; the cells of one wavefront slice "
      "share the device, at {} efficiency alone and at most dense efficiency together; of the {} launches only the "
      "{} on the wavefront's critical path cost time)",
      machine.name, rules_name(one_device, rules), rnn.stacked, batch * steps, steps, cell_kind,
      prediction.launches, prediction.exposed_launches);
  return prediction;
}

FusedRnnTrainingPrediction predict_fused_rnn_training(const Machine& machine, const Graph& graph) {
  const Model& model = graph.model();
  if (!graph.is_training() || model.layers.size() != 1 || !is_recurrent(model.layers.front().kind)) {
    throw InputError(model.source, "layers",
                     "a fused training step is predicted for a training graph of one stacked lstm or gru layer");
  }
  const FusedRnnPrediction forward = predict_fused_rnn(machine, graph, 0);
  const Layer& rnn = model.layers.front();
  const Machine one_device = machine_for_plan(machine, 1);
  const OpCostModel costs(one_device);
  const bool lstm = rnn.kind == OpKind::kLstmCell;
  const bool rules = costs.priced_by_rules(lstm ? OpKind::kLstmCellGrad : OpKind::kGruCellGrad);
  const DeviceFacts& facts = costs.facts();
  const double launch = rules ? facts.launch_seconds : one_device.device.launch_overhead_seconds();
  const auto work = [&](std::string_view kind, int64_t flops, int64_t bytes) {
    return costs.roofline_seconds(kind, flops, bytes) - one_device.device.launch_overhead_seconds();
  };
  const auto product = [&](GemmShape shape) {
    const int64_t bytes = kFloat * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n);
    return rules ? costs.product_work_seconds(shape, bytes)
                 : work(to_string(OpKind::kDense), 2 * shape.m * shape.n * shape.k, bytes);
  };
  const int64_t gates = gate_count(rnn.kind);
  const int64_t batch = graph.batch();
  const int64_t steps = rnn.input_shape.at(0);
  const int64_t hidden = rnn.attrs.hidden;
  const int64_t width = gates * hidden;
  const int64_t rows = batch * steps;

  // One step back: dh·Whᵀ, and the gate gradients from the kept pre-activations.
  const int64_t step_flops = 2 * batch * hidden * width;
  const int64_t gate_bytes = kFloat * (batch * width + batch * hidden * (lstm ? 3 : 2) + batch * 4 * hidden +
                                       batch * hidden);
  const int64_t step_bytes = gate_bytes + kFloat * (hidden * width + batch * hidden);
  double step_alone = work(to_string(lstm ? OpKind::kLstmCellGrad : OpKind::kGruCellGrad), step_flops, step_bytes);
  double step_full = work(to_string(OpKind::kDense), step_flops, step_bytes);
  if (rules) {
    const GemmShape back{batch, hidden, width, 1};
    step_alone = costs.product_work_seconds(back, gemm_bytes(back)) + costs.streaming_work_seconds(gate_bytes);
    step_full = full_device_seconds(costs, step_flops, step_bytes, batch * rnn.stacked);
  }
  FusedRnnTrainingPrediction prediction;
  prediction.forward_seconds = forward.seconds;
  const int64_t slices = steps + rnn.stacked - 1;
  prediction.backward_seconds = wavefront_seconds(steps, rnn.stacked, launch, step_alone, step_full);
  int64_t weights = 0;
  for (int64_t l = 0; l < rnn.stacked; ++l) {
    const int64_t input = l == 0 ? rnn.input_shape.at(1) : hidden;
    if (l > 0) prediction.backward_seconds += launch + product(GemmShape{rows, input, width, 1});
    prediction.backward_seconds += 2 * launch + product(GemmShape{input, width, rows, 1}) +
                                   product(GemmShape{hidden, width, rows, 1});
    if (rnn.attrs.bias) {
      prediction.backward_seconds += costs.epilogue_seconds(rows * width, kFloat * (rows * width + width));  // launch included
    }
    weights += (input + hidden) * width + (rnn.attrs.bias ? width : 0);
  }
  const Optimizer& optimizer = graph.training()->optimizer;
  prediction.update_seconds =
      costs.epilogue_seconds(optimizer.update_flops(weights),
                                      optimizer.update_bytes_read(weights) + optimizer.update_bytes_written(weights));
  prediction.seconds = prediction.forward_seconds + prediction.backward_seconds + prediction.update_seconds;
  prediction.method = fmt::format(
      "predicted from {}'s cost model{}: the fused forward as without --train, the backward through time as the "
      "same wavefront of {} slices (each step dh*Wh^T and the gate-gradient kernel on the kept pre-activations), "
      "then per layer dx, dWx and dWh as single products over all T*B = {} rows, and one optimizer update of {} "
      "weights",
      machine.name, rules_name(one_device, rules), slices, rows, weights);
  return prediction;
}

}  // namespace splitscope
