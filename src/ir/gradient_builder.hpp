#pragma once
/// \file
/// What an op definition's gradient rule (ops/op_def.hpp) builds with: it adds
/// backward nodes to the training graph and says which tensor's gradient each
/// one contributes to. A tensor read by several ops gets the sum of their
/// contributions (training.hpp adds them up), so rules never see fan-out.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.hpp"

namespace splitscope {

class GradientBuilder {
 public:
  explicit GradientBuilder(Graph& graph) : graph_(graph) {}

  const Graph& graph() const { return graph_; }
  /// A node of the graph. The reference lasts until the next add(): adding
  /// a node may move them all (copy what you need first).
  const OpNode& node(NodeId id) const { return graph_.node(id); }
  /// The tensor feeding input slot `slot` of `id` (which must have one).
  TensorRef input(NodeId id, int slot) const;

  /// Adds a backward node of `kind` differentiating `forward`, reading
  /// `inputs` in slot order and writing one tensor of `output` shape. It
  /// takes the forward node's layer, step and weight set, and `attrs`.
  NodeId add(OpKind kind, NodeId forward, const std::string& suffix, const std::vector<TensorRef>& inputs,
             const Shape& output, const OpAttrs& attrs);
  /// The same with slots that may have no producer (nullopt: a cell's state
  /// at t = 0, a gradient nothing downstream gave), each with its shape, and
  /// several outputs.
  NodeId add_slots(OpKind kind, NodeId forward, const std::string& suffix,
                   const std::vector<std::pair<std::optional<TensorRef>, Shape>>& slots,
                   const std::vector<Shape>& outputs, const OpAttrs& attrs);
  /// Sets the time step a backward node works on (a stack's gradient takes step t).
  void set_step(NodeId id, int step) { graph_.mutable_node(id).step = step; }
  /// The tensor feeding input slot `slot` of `id`, or nullopt where it has none.
  std::optional<TensorRef> optional_input(NodeId id, int slot) const;
  /// Whether anything wants the gradient of `tensor` (network inputs and
  /// targets need none, so their gradients are never computed).
  bool wants(TensorRef tensor) const;
  /// Adds `gradient` to the gradient of `tensor`; ignored where not wanted.
  void contribute(TensorRef tensor, TensorRef gradient);
  /// The gradient of `tensor`: its one contribution, an add node summing
  /// several, or nullopt when nothing downstream depends on it. `forward`
  /// is the node writing `tensor`.
  std::optional<TensorRef> gradient_of(TensorRef tensor);

 private:
  Graph& graph_;
  std::map<std::pair<NodeId, int>, std::vector<TensorRef>> contributions_;
};

}  // namespace splitscope
