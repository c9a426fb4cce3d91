#pragma once
/// \file
/// The Graph: a DAG (Boost.Graph) of op instances lowered from a Model. A
/// recurrent layer is unrolled into one cell op per (stacked layer, step),
/// with edges (l-1, t) -> (l, t) and (l, t-1) -> (l, t).

#include <boost/graph/adjacency_list.hpp>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/model.hpp"
#include "ir/op.hpp"
#include "ir/training_spec.hpp"
#include "ir/work_classes.hpp"

namespace splitscope {

using NodeId = std::size_t;

/// One output tensor of one node.
struct TensorRef {
  NodeId node = 0;
  int output = 0;
  bool operator==(const TensorRef&) const = default;
};

/// What an edge carries: which output of its source feeds which input slot of its target.
struct Edge {
  int output = 0;
  int slot = 0;
};

class Graph {
 public:
  using Impl = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, OpNode, Edge>;

  explicit Graph(Model model);
  /// Copies are deep; moves are cheap. (Boost's adjacency_list declares a copy
  /// constructor and no move, so held by value every move of a graph copied
  /// it: two whole copies of every network on the way out of lower().)
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  ~Graph() = default;

  NodeId add_node(OpNode node);
  void add_edge(TensorRef from, NodeId to, int slot);

  size_t num_nodes() const { return boost::num_vertices(*impl_); }
  size_t num_edges() const { return boost::num_edges(*impl_); }
  const OpNode& node(NodeId id) const { return (*impl_)[id]; }
  OpNode& mutable_node(NodeId id) {
    forget_work_classes();
    return (*impl_)[id];
  }

  /// Which nodes do the same work (work_classes.hpp), found at the first
  /// call and kept until a node is added or changed, so that every plan of
  /// one graph is priced from one pass over its nodes. Safe from several
  /// threads at once, as the other const members are.
  const WorkClasses& work_classes() const;

  /// The tensor feeding each input slot of `id`; nullopt for a slot with no
  /// producer (the zero initial state of a cell at t = 0).
  std::vector<std::optional<TensorRef>> inputs(NodeId id) const;
  /// Every (consumer, slot) reading `tensor`.
  std::vector<std::pair<NodeId, int>> consumers(TensorRef tensor) const;

  /// Nodes in dependency order; throws std::logic_error if the graph has a cycle.
  std::vector<NodeId> topological_order() const;
  /// Nodes by depth (the longest path from an input), ties by id: a
  /// dependency order in which an unrolled RNN runs diagonal by diagonal,
  /// cell (l, t) at depth l + t, the order its wavefront can progress in.
  std::vector<NodeId> wavefront_order() const;
  bool is_acyclic() const;

  /// The network's output tensor.
  TensorRef output() const { return output_; }
  void set_output(TensorRef output) { output_ = output; }

  /// Set on a training graph (training.hpp): forward, loss and backward
  /// nodes, whose weights the optimizer updates after each step.
  const std::optional<TrainingSpec>& training() const { return training_; }
  void set_training(TrainingSpec spec) { training_ = spec; }
  bool is_training() const { return training_.has_value(); }

  const Model& model() const { return model_; }
  int64_t batch() const { return model_.batch; }
  /// The same graph over `batch` samples (its shapes are per sample): one
  /// data-parallel replica's share (partitioners/replicas.hpp).
  Graph with_batch(int64_t batch) const {
    Graph copy = *this;
    copy.model_.batch = batch;
    return copy;
  }
  const std::string& name() const { return model_.name; }

  /// Sums over all nodes; parameters count each weight set once.
  int64_t total_flops() const;
  int64_t total_params() const;

  const Impl& impl() const { return *impl_; }

 private:
  Model model_;
  std::unique_ptr<Impl> impl_;  ///< never null but in a moved-from graph
  TensorRef output_;
  std::optional<TrainingSpec> training_;
  struct KeptWorkClasses;
  /// Never null but in a moved-from graph; each graph has its own.
  std::shared_ptr<KeptWorkClasses> work_classes_;
  void forget_work_classes();
};

/// Bytes of one float32 tensor of `shape` over `batch` samples.
int64_t tensor_bytes(const Shape& shape, int64_t batch);

}  // namespace splitscope
