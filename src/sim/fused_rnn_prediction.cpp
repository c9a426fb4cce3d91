#include "sim/fused_rnn_prediction.hpp"

#include <fmt/format.h>

#include "ir/layer_costs.hpp"
#include "sim/op_cost_model.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = sizeof(float);

}  // namespace

FusedRnnPrediction predict_fused_rnn(const Machine& machine, const Graph& graph, int layer) {
  const Model& model = graph.model();
  if (layer < 0 || layer >= static_cast<int>(model.layers.size()) ||
      !is_recurrent(model.layers[static_cast<size_t>(layer)].kind)) {
    throw InputError(model.source, fmt::format("layers[{}]", layer), "is not an lstm or gru layer");
  }
  const Layer& rnn = model.layers[static_cast<size_t>(layer)];
  const OpCostModel costs(machine_for_plan(machine, 1));
  const bool lstm = rnn.kind == LayerKind::kLstm;
  const int64_t gates = gate_count(rnn.kind);
  const int64_t batch = graph.batch();
  const int64_t steps = rnn.input_shape.at(0);
  const int64_t hidden = rnn.hidden;
  const int64_t width = gates * hidden;
  const std::string cell_kind(to_string(lstm ? OpKind::kLstmCell : OpKind::kGruCell));

  FusedRnnPrediction prediction;
  for (int64_t l = 0; l < rnn.stacked; ++l) {
    const int64_t input = l == 0 ? rnn.input_shape.at(1) : hidden;
    const int64_t rows = batch * steps;
    const int64_t input_flops = 2 * width * input * rows;
    const int64_t input_bytes = kFloat * (rows * input + input * width + (rnn.bias ? width : 0) + rows * width);
    prediction.input_products_seconds += costs.roofline_seconds(to_string(OpKind::kDense), input_flops, input_bytes);
    const int64_t step_flops = 2 * width * hidden * batch;
    const int64_t step_bytes =
        kFloat * (batch * hidden + hidden * width + batch * width + batch * hidden + (lstm ? 2 * batch * hidden : 0));
    prediction.recurrent_steps_seconds +=
        static_cast<double>(steps) * costs.roofline_seconds(cell_kind, step_flops, step_bytes);
    prediction.launches += steps + 1;
  }
  prediction.seconds = prediction.input_products_seconds + prediction.recurrent_steps_seconds;
  prediction.method = fmt::format(
      "predicted from {}'s cost model: per stacked layer one input product over T*B = {} rows (dense efficiency) "
      "and {} recurrent steps h*Wh + gate math ({} efficiency), one launch each ({} launches)",
      machine.name, batch * steps, steps, cell_kind, prediction.launches);
  return prediction;
}

}  // namespace splitscope
