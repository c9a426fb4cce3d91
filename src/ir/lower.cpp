#include "ir/lower.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "ir/layer_costs.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/slice.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = sizeof(float);

/// One layer's (or network input's) output, kept whole, as one tensor per
/// time step (between recurrent layers), or both once a reader needed the
/// other form.
struct LayerOutput {
  std::optional<TensorRef> whole;
  std::vector<TensorRef> steps;
  int layer = -1;  ///< the producing layer; -1 for a network input
};

/// Walks the layers in their dependency order, giving each the tensors it
/// reads in the form it needs: converting a sequence between whole and
/// per-step only where a reader needs the other form, once per tensor.
class Lowering {
 public:
  explicit Lowering(const Model& model) : graph_(model), batch_(model.batch) {}

  Graph run() {
    const Model& model = graph_.model();
    for (size_t i = 0; i < model.inputs.size(); ++i) add_network_input(static_cast<int>(i), model.inputs[i]);
    for (size_t i = 0; i < model.layers.size(); ++i) {
      const Layer& layer = model.layers[i];
      if (is_recurrent(layer.kind)) {
        add_recurrent(static_cast<int>(i), layer);
      } else {
        add_single(static_cast<int>(i), layer);
      }
    }
    graph_.set_output(whole_tensor(model.layers.back().name));
    return std::move(graph_);
  }

 private:
  OpNode make_node(OpKind kind, std::string name, int layer, std::vector<Shape> inputs,
                   std::vector<Shape> outputs) const {
    OpNode node;
    node.kind = kind;
    node.name = std::move(name);
    node.layer = layer;
    if (layer >= 0) {
      const Layer& source = graph_.model().layers.at(static_cast<size_t>(layer));
      node.layer_name = source.name;
      node.recurrent_layer = is_recurrent(source.kind);
      node.stacked = static_cast<int>(source.stacked);
      node.attrs = source.attrs;
    } else {
      node.layer_name = "input";
    }
    node.input_shapes = std::move(inputs);
    node.output_shapes = std::move(outputs);
    for (const Shape& shape : node.output_shapes) node.bytes_written += tensor_bytes(shape, batch_);
    return node;
  }

  /// Whether every reader of network input `name` is a recurrent layer: then
  /// a [T, F] input is provided one step at a time, and no reader needs it whole.
  bool read_per_step(const std::string& name) const {
    bool any = false;
    for (const Layer& layer : graph_.model().layers) {
      for (const std::string& input : layer.inputs) {
        if (input != name) continue;
        if (!is_recurrent(layer.kind)) return false;
        any = true;
      }
    }
    return any;
  }

  void add_network_input(int index, const NetworkInput& input) {
    // The only input keeps the name "input"; named inputs are "input/NAME".
    const std::string name = graph_.model().inputs.size() == 1 ? "input" : "input/" + input.name;
    LayerOutput& out = outputs_[input.name];
    if (input.shape.size() == 2 && read_per_step(input.name)) {
      for (int64_t t = 0; t < input.shape[0]; ++t) {
        OpNode node = make_node(OpKind::kInput, name + "/t" + std::to_string(t), -1, {}, {{input.shape[1]}});
        node.step = static_cast<int>(t);
        node.attrs.input_index = index;
        node.attrs.sample = input.shape;
        out.steps.push_back(TensorRef{graph_.add_node(std::move(node)), 0});
      }
      return;
    }
    OpNode node = make_node(OpKind::kInput, name, -1, {}, {input.shape});
    node.attrs.input_index = index;
    node.attrs.sample = input.shape;
    out.whole = TensorRef{graph_.add_node(std::move(node)), 0};
  }

  /// Tensor `name` as one whole tensor, stacking its per-step outputs once if needed.
  TensorRef whole_tensor(const std::string& name) {
    LayerOutput& out = outputs_.at(name);
    if (out.whole) return *out.whole;
    SPLITSCOPE_CHECK(!out.steps.empty() && out.layer >= 0, "no tensor " + name + " while lowering");
    const Layer& layer = graph_.model().layers.at(static_cast<size_t>(out.layer));
    const Shape step_shape = graph_.node(out.steps.front().node).output_shapes.at(0);
    const int64_t steps = static_cast<int64_t>(out.steps.size());
    std::vector<Shape> inputs(out.steps.size(), step_shape);
    OpNode stack = make_node(OpKind::kStack, layer.name + "/stack", out.layer, inputs, {{steps, step_shape[0]}});
    stack.sublayer = static_cast<int>(layer.stacked) - 1;
    stack.bytes_read = tensor_bytes({steps, step_shape[0]}, batch_);
    const NodeId id = graph_.add_node(std::move(stack));
    for (size_t t = 0; t < out.steps.size(); ++t) graph_.add_edge(out.steps[t], id, static_cast<int>(t));
    out.whole = TensorRef{id, 0};
    return *out.whole;
  }

  /// Tensor `name` as one tensor per step, slicing a whole [T, F] tensor if needed.
  std::vector<TensorRef> step_tensors(const std::string& name, int consuming_layer, const Layer& layer) {
    LayerOutput& out = outputs_.at(name);
    if (!out.steps.empty()) return out.steps;
    SPLITSCOPE_CHECK(out.whole.has_value(), "no tensor " + name + " while lowering");
    const Shape& sequence = layer.input_shape;
    std::vector<TensorRef> slices;
    for (int64_t t = 0; t < sequence[0]; ++t) {
      OpNode slice = make_node(OpKind::kStepSlice, layer.name + "/x/t" + std::to_string(t),
                               consuming_layer, {sequence}, {{sequence[1]}});
      slice.step = static_cast<int>(t);
      slice.bytes_read = tensor_bytes({sequence[1]}, batch_);
      const NodeId id = graph_.add_node(std::move(slice));
      graph_.add_edge(*out.whole, id, 0);
      slices.push_back(TensorRef{id, 0});
    }
    return slices;
  }

  void add_single(int index, const Layer& layer) {
    std::vector<TensorRef> inputs;
    for (const std::string& name : layer.inputs) inputs.push_back(whole_tensor(name));
    OpNode node = make_node(layer.kind, layer.name, index, layer.input_shapes, {layer.output_shape});
    node.flops = layer_flops(layer, batch_);
    node.param_count = layer_params(layer);
    if (node.param_count > 0) node.param_key = next_param_key_++;
    for (const Shape& shape : layer.input_shapes) node.bytes_read += tensor_bytes(shape, batch_);
    node.bytes_read += node.param_count * kFloat;
    if (node.kind == OpKind::kFlatten) {
      // A reshape of a contiguous tensor: no data moves.
      node.bytes_read = 0;
      node.bytes_written = 0;
    }
    if (node.kind == OpKind::kEmbedding || node.kind == OpKind::kAttention) {
      // A gather reads the rows it picks, not its whole table; attention reads Q | K | V once.
      const SliceCost cost = op_def(node.kind).cost(node, full_slice(node, {0, batch_}));
      node.bytes_read = cost.bytes_read;
      node.bytes_written = cost.bytes_written;
    }
    const NodeId id = graph_.add_node(std::move(node));
    for (size_t slot = 0; slot < inputs.size(); ++slot) graph_.add_edge(inputs[slot], id, static_cast<int>(slot));
    if (layer.kind == OpKind::kEmbedding && graph_.node(inputs[0].node).kind == OpKind::kInput) {
      // The network input it reads holds token ids: generated inputs draw them in [0, vocab).
      OpAttrs& tokens = graph_.mutable_node(inputs[0].node).attrs;
      tokens.vocab = tokens.vocab == 0 ? layer.attrs.vocab : std::min(tokens.vocab, layer.attrs.vocab);
    }
    LayerOutput& out = outputs_[layer.name];
    out.whole = TensorRef{id, 0};
    out.layer = index;
  }

  void add_recurrent(int index, const Layer& layer) {
    std::vector<TensorRef> below = step_tensors(layer.inputs.at(0), index, layer);
    const bool lstm = layer.kind == OpKind::kLstmCell;
    const OpKind kind = layer.kind;
    const int64_t hidden = layer.attrs.hidden;
    const int64_t gates = gate_count(layer.kind);
    const Shape state{hidden};
    for (int64_t l = 0; l < layer.stacked; ++l) {
      const int64_t input = l == 0 ? layer.input_shape[1] : hidden;
      const int key = next_param_key_++;
      const int64_t params = gates * hidden * (input + hidden) + (layer.attrs.bias ? gates * hidden : 0);
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
        cell.attrs.steps = static_cast<int64_t>(below.size());
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
    LayerOutput& out = outputs_[layer.name];
    out.layer = index;
    if (layer.return_sequences) {
      out.steps = std::move(below);
    } else {
      out.whole = below.back();
    }
  }

  Graph graph_;
  int64_t batch_;
  std::map<std::string, LayerOutput> outputs_;  ///< by layer or network-input name
  int next_param_key_ = 0;
};

}  // namespace

Graph lower(const Model& model) { return Lowering(model).run(); }

}  // namespace splitscope
