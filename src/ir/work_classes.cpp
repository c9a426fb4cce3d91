#include "ir/work_classes.hpp"

#include <functional>
#include <unordered_map>

#include "ir/graph.hpp"

namespace splitscope {
namespace {

/// A node seen as its work alone.
struct Work {
  const OpNode* node = nullptr;
};

bool same_work(const OpNode& a, const OpNode& b) {
  return a.kind == b.kind && a.attrs == b.attrs && a.recurrent_layer == b.recurrent_layer &&
         a.stacked == b.stacked && (a.step > 0) == (b.step > 0) && a.input_shapes == b.input_shapes &&
         a.output_shapes == b.output_shapes && a.param_count == b.param_count && a.flops == b.flops &&
         a.bytes_read == b.bytes_read && a.bytes_written == b.bytes_written && a.pass == b.pass;
}

struct WorkEqual {
  bool operator()(const Work& a, const Work& b) const { return same_work(*a.node, *b.node); }
};

/// Over some of what same_work() compares: equal work hashes equal, and the
/// rest tells a layer's nodes from another's.
struct WorkHash {
  size_t operator()(const Work& work) const {
    const OpNode& node = *work.node;
    size_t hash = std::hash<int>{}(static_cast<int>(node.kind));
    const auto mix = [&](int64_t value) { hash = hash * 1'000'003u ^ std::hash<int64_t>{}(value); };
    mix(node.flops);
    mix(node.bytes_read);
    mix(node.bytes_written);
    mix(node.param_count);
    mix(node.step > 0 ? 1 : 0);
    mix(static_cast<int64_t>(node.pass));
    for (const Shape& shape : node.output_shapes) {
      for (int64_t extent : shape) mix(extent);
    }
    return hash;
  }
};

}  // namespace

WorkClasses work_classes(const Graph& graph) {
  WorkClasses classes;
  classes.of_node.resize(graph.num_nodes());
  std::unordered_map<Work, int, WorkHash, WorkEqual> seen;
  for (size_t id = 0; id < graph.num_nodes(); ++id) {
    const auto [it, inserted] = seen.try_emplace(Work{&graph.node(id)}, classes.count);
    if (inserted) ++classes.count;
    classes.of_node[id] = it->second;
  }
  return classes;
}

}  // namespace splitscope
