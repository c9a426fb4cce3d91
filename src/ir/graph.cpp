#include "ir/graph.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <set>
#include <stdexcept>

#include "util/check.hpp"

namespace splitscope {

struct Graph::KeptWorkClasses {
  std::once_flag once;
  std::atomic<bool> found{false};
  WorkClasses classes;
};

Graph::Graph(Model model)
    : model_(std::move(model)), impl_(std::make_unique<Impl>()), work_classes_(std::make_shared<KeptWorkClasses>()) {}

Graph::Graph(const Graph& other)
    : model_(other.model_),
      impl_(std::make_unique<Impl>(*other.impl_)),
      output_(other.output_),
      training_(other.training_),
      work_classes_(std::make_shared<KeptWorkClasses>()) {}

const WorkClasses& Graph::work_classes() const {
  KeptWorkClasses& kept = *work_classes_;
  std::call_once(kept.once, [&] {
    kept.classes = splitscope::work_classes(*this);
    kept.found.store(true, std::memory_order_release);
  });
  return kept.classes;
}

void Graph::forget_work_classes() {
  if (work_classes_->found.load(std::memory_order_acquire)) work_classes_ = std::make_shared<KeptWorkClasses>();
}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) *this = Graph(other);
  return *this;
}

NodeId Graph::add_node(OpNode node) {
  forget_work_classes();
  return boost::add_vertex(std::move(node), *impl_);
}

void Graph::add_edge(TensorRef from, NodeId to, int slot) {
  SPLITSCOPE_CHECK(from.node < num_nodes() && to < num_nodes(), "edge between unknown nodes");
  SPLITSCOPE_CHECK(from.output < static_cast<int>(node(from.node).output_shapes.size()),
                   "edge from an output the node does not have");
  SPLITSCOPE_CHECK(slot < static_cast<int>(node(to).input_shapes.size()),
                   "edge into a slot the node does not have");
  boost::add_edge(from.node, to, Edge{from.output, slot}, *impl_);
}

std::vector<std::optional<TensorRef>> Graph::inputs(NodeId id) const {
  std::vector<std::optional<TensorRef>> slots(node(id).input_shapes.size());
  for (auto [it, end] = boost::in_edges(id, *impl_); it != end; ++it) {
    const Edge& edge = (*impl_)[*it];
    slots.at(static_cast<size_t>(edge.slot)) = TensorRef{boost::source(*it, *impl_), edge.output};
  }
  return slots;
}

std::vector<std::pair<NodeId, int>> Graph::consumers(TensorRef tensor) const {
  std::vector<std::pair<NodeId, int>> result;
  for (auto [it, end] = boost::out_edges(tensor.node, *impl_); it != end; ++it) {
    const Edge& edge = (*impl_)[*it];
    if (edge.output == tensor.output) result.emplace_back(boost::target(*it, *impl_), edge.slot);
  }
  return result;
}

std::vector<NodeId> Graph::topological_order() const {
  std::vector<NodeId> reversed;
  try {
    boost::topological_sort(*impl_, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("the graph of " + model_.name + " has a cycle");
  }
  return {reversed.rbegin(), reversed.rend()};
}

std::vector<NodeId> Graph::wavefront_order() const {
  const std::vector<NodeId> order = topological_order();
  std::vector<int64_t> depth(num_nodes(), 0);
  for (NodeId id : order) {
    for (auto [it, end] = boost::out_edges(id, *impl_); it != end; ++it) {
      const NodeId next = boost::target(*it, *impl_);
      depth[next] = std::max(depth[next], depth[id] + 1);
    }
  }
  std::vector<NodeId> by_depth(order.begin(), order.end());
  std::stable_sort(by_depth.begin(), by_depth.end(), [&](NodeId a, NodeId b) {
    return depth[a] != depth[b] ? depth[a] < depth[b] : a < b;
  });
  return by_depth;
}

bool Graph::is_acyclic() const {
  try {
    topological_order();
    return true;
  } catch (const std::logic_error&) {
    return false;
  }
}

int64_t Graph::total_flops() const {
  int64_t total = 0;
  for (NodeId id = 0; id < num_nodes(); ++id) total += node(id).flops;
  return total;
}

int64_t Graph::total_params() const {
  std::set<int> seen;
  int64_t total = 0;
  for (NodeId id = 0; id < num_nodes(); ++id) {
    const OpNode& op = node(id);
    if (op.param_key >= 0 && seen.insert(op.param_key).second) total += op.param_count;
  }
  return total;
}

int64_t tensor_bytes(const Shape& shape, int64_t batch) {
  return element_count(shape) * batch * static_cast<int64_t>(sizeof(float));
}

}  // namespace splitscope
