// The fused RNN's request, checked before any GPU is sought (fused_rnn.hpp).

#include <fmt/format.h>

#include "exec/cuda/fused_rnn.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/layer_costs.hpp"
#include "ir/params.hpp"
#include "util/errors.hpp"

namespace splitscope::gpu {

FusedRnnShape check_fused_rnn_request(const FusedRnnRequest& request) {
  if (!request.graph) throw InputError("fused rnn", "graph", "no network given");
  const Model& model = request.graph->model();
  if (request.layer < 0 || request.layer >= static_cast<int>(model.layers.size())) {
    throw InputError(model.source, "layers", fmt::format("there is no layer {}", request.layer));
  }
  const Layer& layer = model.layers[static_cast<size_t>(request.layer)];
  if (!is_recurrent(layer.kind)) {
    throw InputError(model.source, fmt::format("layers[{}]", request.layer),
                     fmt::format("'{}' is a {} layer; the fused baseline runs an lstm or gru layer", layer.name,
                                 layer_type(layer.kind)));
  }
  if (parse_dtype(request.dtype) == Dtype::kBf16) {
    throw InputError("--dtype", "", "the fused cuDNN RNN runs float32 tensors in fp32 or tf32 math, not bf16");
  }
  FusedRnnShape shape;
  shape.lstm = layer.kind == OpKind::kLstmCell;
  shape.gates = static_cast<int>(gate_count(layer.kind));
  shape.batch = request.graph->batch();
  shape.steps = layer.input_shape.at(0);
  shape.input = layer.input_shape.at(1);
  shape.hidden = layer.attrs.hidden;
  shape.layers = layer.stacked;
  shape.bias = layer.attrs.bias;
  if (!request.input.data.empty()) {
    const std::vector<int64_t> expected{shape.batch, shape.steps, shape.input};
    if (request.input.shape != expected ||
        static_cast<int64_t>(request.input.data.size()) != shape.batch * shape.steps * shape.input) {
      throw InputError("fused rnn", "input",
                       fmt::format("expected a [{}, {}, {}] tensor", shape.batch, shape.steps, shape.input));
    }
  } else if (request.layer != 0) {
    throw InputError("fused rnn", "input",
                     "the layer is not the network's first, so its input must be given (it is another layer's output)");
  }
  return shape;
}

std::vector<float> fused_rnn_input(const FusedRnnRequest& request, const FusedRnnShape& shape) {
  if (!request.input.data.empty()) return request.input.data;
  // Element b·T·I + t·I + f, the same numbering as the plan's step inputs.
  const int64_t count = shape.batch * shape.steps * shape.input;
  std::vector<float> input(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) input[static_cast<size_t>(i)] = input_value(request.seed, i);
  return input;
}

}  // namespace splitscope::gpu
