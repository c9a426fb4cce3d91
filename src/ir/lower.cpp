#include "ir/lower.hpp"

#include <optional>
#include <string>

#include "ir/layer_costs.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = sizeof(float);

OpKind op_kind_of(LayerKind kind) {
  switch (kind) {
    case LayerKind::kDense: return OpKind::kDense;
    case LayerKind::kConv2d: return OpKind::kConv2d;
    case LayerKind::kMaxPool: return OpKind::kMaxPool;
    case LayerKind::kAvgPool: return OpKind::kAvgPool;
    case LayerKind::kFlatten: return OpKind::kFlatten;
    case LayerKind::kSoftmax: return OpKind::kSoftmax;
    case LayerKind::kRelu: return OpKind::kRelu;
    case LayerKind::kTanh: return OpKind::kTanh;
    case LayerKind::kSigmoid: return OpKind::kSigmoid;
    case LayerKind::kLstm: return OpKind::kLstmCell;
    case LayerKind::kGru: return OpKind::kGruCell;
  }
  return OpKind::kInput;
}

/// Walks the layers keeping the current tensor either whole (`whole`) or as
/// one tensor per time step (`steps`, between recurrent layers), converting
/// between the two only where a layer needs the other form.
class Lowering {
 public:
  explicit Lowering(const Model& model) : graph_(model), batch_(model.batch) {}

  Graph run() {
    const Model& model = graph_.model();
    const bool sequence_input_to_rnn = model.input.size() == 2 && !model.layers.empty() &&
                                       is_recurrent(model.layers.front().kind);
    if (sequence_input_to_rnn) {
      add_step_inputs(model.input);
    } else {
      OpNode input = make_node(OpKind::kInput, "input", -1, {}, {model.input});
      whole_ = TensorRef{graph_.add_node(std::move(input)), 0};
    }
    for (size_t i = 0; i < model.layers.size(); ++i) {
      const Layer& layer = model.layers[i];
      if (is_recurrent(layer.kind)) {
        add_recurrent(static_cast<int>(i), layer);
      } else {
        add_single(static_cast<int>(i), layer);
      }
    }
    graph_.set_output(whole_tensor(static_cast<int>(model.layers.size()) - 1));
    return std::move(graph_);
  }

 private:
  OpNode make_node(OpKind kind, std::string name, int layer, std::vector<Shape> inputs,
                   std::vector<Shape> outputs) const {
    OpNode node;
    node.kind = kind;
    node.name = std::move(name);
    node.layer = layer;
    node.input_shapes = std::move(inputs);
    node.output_shapes = std::move(outputs);
    for (const Shape& shape : node.output_shapes) node.bytes_written += tensor_bytes(shape, batch_);
    return node;
  }

  void add_step_inputs(const Shape& input) {
    steps_.clear();
    for (int64_t t = 0; t < input[0]; ++t) {
      OpNode node = make_node(OpKind::kInput, "input/t" + std::to_string(t), -1, {}, {{input[1]}});
      node.step = static_cast<int>(t);
      steps_.push_back(TensorRef{graph_.add_node(std::move(node)), 0});
    }
    whole_.reset();
  }

  /// The current tensor as one whole tensor, stacking per-step outputs if needed.
  TensorRef whole_tensor(int producing_layer) {
    if (whole_) return *whole_;
    SPLITSCOPE_CHECK(!steps_.empty(), "no current tensor while lowering");
    const Layer& layer = graph_.model().layers.at(static_cast<size_t>(producing_layer));
    const Shape step_shape = graph_.node(steps_.front().node).output_shapes.at(0);
    const int64_t steps = static_cast<int64_t>(steps_.size());
    std::vector<Shape> inputs(steps_.size(), step_shape);
    OpNode stack = make_node(OpKind::kStack, layer.name + "/stack", producing_layer, inputs,
                             {{steps, step_shape[0]}});
    stack.sublayer = static_cast<int>(layer.stacked) - 1;
    stack.bytes_read = tensor_bytes({steps, step_shape[0]}, batch_);
    const NodeId id = graph_.add_node(std::move(stack));
    for (size_t t = 0; t < steps_.size(); ++t) graph_.add_edge(steps_[t], id, static_cast<int>(t));
    whole_ = TensorRef{id, 0};
    return *whole_;
  }

  /// The current tensor as one tensor per step, slicing a whole [T, F] tensor if needed.
  std::vector<TensorRef> step_tensors(int consuming_layer, const Layer& layer) {
    if (!steps_.empty()) return steps_;
    SPLITSCOPE_CHECK(whole_.has_value(), "no current tensor while lowering");
    const Shape& sequence = layer.input_shape;
    std::vector<TensorRef> slices;
    for (int64_t t = 0; t < sequence[0]; ++t) {
      OpNode slice = make_node(OpKind::kStepSlice, layer.name + "/x/t" + std::to_string(t),
                               consuming_layer, {sequence}, {{sequence[1]}});
      slice.step = static_cast<int>(t);
      slice.bytes_read = tensor_bytes({sequence[1]}, batch_);
      const NodeId id = graph_.add_node(std::move(slice));
      graph_.add_edge(*whole_, id, 0);
      slices.push_back(TensorRef{id, 0});
    }
    return slices;
  }

  void add_single(int index, const Layer& layer) {
    const TensorRef in = whole_tensor(index - 1);
    OpNode node = make_node(op_kind_of(layer.kind), layer.name, index, {layer.input_shape},
                            {layer.output_shape});
    node.flops = layer_flops(layer, batch_);
    node.param_count = layer_params(layer);
    if (node.param_count > 0) node.param_key = next_param_key_++;
    node.bytes_read = tensor_bytes(layer.input_shape, batch_) + node.param_count * kFloat;
    if (node.kind == OpKind::kFlatten) {
      // A reshape of a contiguous tensor: no data moves.
      node.bytes_read = 0;
      node.bytes_written = 0;
    }
    const NodeId id = graph_.add_node(std::move(node));
    graph_.add_edge(in, id, 0);
    whole_ = TensorRef{id, 0};
    steps_.clear();
  }

  void add_recurrent(int index, const Layer& layer) {
    std::vector<TensorRef> below = step_tensors(index, layer);
    const bool lstm = layer.kind == LayerKind::kLstm;
    const OpKind kind = op_kind_of(layer.kind);
    const int64_t hidden = layer.hidden;
    const int64_t gates = gate_count(layer.kind);
    const Shape state{hidden};
    for (int64_t l = 0; l < layer.stacked; ++l) {
      const int64_t input = l == 0 ? layer.input_shape[1] : hidden;
      const int key = next_param_key_++;
      const int64_t params = gates * hidden * (input + hidden) + (layer.bias ? gates * hidden : 0);
      std::vector<TensorRef> outputs;
      std::optional<NodeId> previous;
      for (size_t t = 0; t < below.size(); ++t) {
        std::vector<Shape> inputs{{input}, state};
        std::vector<Shape> outs{state};
        if (lstm) {
          inputs.push_back(state);
          outs.push_back(state);
        }
        OpNode cell = make_node(kind, layer.name + "/l" + std::to_string(l) + "/t" + std::to_string(t),
                                index, inputs, outs);
        cell.sublayer = static_cast<int>(l);
        cell.step = static_cast<int>(t);
        cell.flops = recurrent_cell_flops(layer.kind, input, hidden, batch_);
        cell.param_key = key;
        cell.param_count = params;
        const int64_t state_bytes = tensor_bytes(state, batch_);
        cell.bytes_read = tensor_bytes({input}, batch_) + params * kFloat +
                          (previous ? state_bytes * (lstm ? 2 : 1) : 0);
        const NodeId id = graph_.add_node(std::move(cell));
        graph_.add_edge(below[t], id, kCellInputSlot);
        if (previous) {
          graph_.add_edge({*previous, kCellHiddenOutput}, id, kCellHiddenSlot);
          if (lstm) graph_.add_edge({*previous, kCellStateOutput}, id, kCellStateSlot);
        }
        outputs.push_back(TensorRef{id, kCellHiddenOutput});
        previous = id;
      }
      below = std::move(outputs);
    }
    if (layer.return_sequences) {
      steps_ = std::move(below);
      whole_.reset();
    } else {
      whole_ = below.back();
      steps_.clear();
    }
  }

  Graph graph_;
  int64_t batch_;
  std::optional<TensorRef> whole_;
  std::vector<TensorRef> steps_;
  int next_param_key_ = 0;
};

}  // namespace

Graph lower(const Model& model) { return Lowering(model).run(); }

}  // namespace splitscope
