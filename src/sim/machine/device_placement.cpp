#include "sim/machine/device_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// The bytes between two devices both ways: what a node boundary between them would carry.
int64_t both_ways(const DeviceTraffic& traffic, int a, int b) { return traffic.at(a, b) + traffic.at(b, a); }

/// Pass 1: node-sized groups, each seeded with the heaviest pair of the
/// devices left (the lowest device left, where none of them exchange bytes)
/// and grown by the device with the most bytes to the group. Returns each
/// device's group.
std::vector<int> grow_groups(const DeviceTraffic& traffic, int per_node) {
  const int n = traffic.devices();
  std::vector<int> group(static_cast<size_t>(n), -1);
  std::vector<int64_t> to_group(static_cast<size_t>(n), 0);
  const auto free = [&](int device) { return group[static_cast<size_t>(device)] < 0; };
  int placed = 0;
  for (int g = 0; placed < n; ++g) {
    std::fill(to_group.begin(), to_group.end(), 0);
    int size = 0;
    const auto join = [&](int device) {
      group[static_cast<size_t>(device)] = g;
      ++placed;
      ++size;
      for (int other = 0; other < n; ++other) to_group[static_cast<size_t>(other)] += both_ways(traffic, device, other);
    };
    const int capacity = std::min(per_node, n - placed);
    int first = -1;
    int second = -1;
    int64_t heaviest = 0;
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (free(a) && free(b) && both_ways(traffic, a, b) > heaviest) {
          heaviest = both_ways(traffic, a, b);
          first = a;
          second = b;
        }
      }
    }
    if (first < 0) first = static_cast<int>(std::find(group.begin(), group.end(), -1) - group.begin());
    join(first);
    if (second >= 0 && size < capacity) join(second);
    while (size < capacity) {
      int best = -1;
      for (int d = 0; d < n; ++d) {
        if (free(d) && (best < 0 || to_group[static_cast<size_t>(d)] > to_group[static_cast<size_t>(best)])) best = d;
      }
      join(best);
    }
  }
  return group;
}

/// Pass 2: the move of one device into a group with room, or the swap of
/// two devices of different groups, that cuts the most bytes between groups,
/// again and again until none cuts any. Every step cuts a whole number of
/// bytes, so it ends; the bound on steps only keeps a pathological matrix
/// from taking long.
void refine_groups(const DeviceTraffic& traffic, int per_node, std::vector<int>& group) {
  const int n = traffic.devices();
  const int groups = n == 0 ? 0 : *std::max_element(group.begin(), group.end()) + 1;
  // link[d * groups + g]: device d's bytes to the members of group g.
  std::vector<int64_t> link(static_cast<size_t>(n) * static_cast<size_t>(groups), 0);
  std::vector<int> size(static_cast<size_t>(groups), 0);
  const auto at = [&](int device, int g) -> int64_t& {
    return link[static_cast<size_t>(device) * static_cast<size_t>(groups) + static_cast<size_t>(g)];
  };
  for (int d = 0; d < n; ++d) {
    size[static_cast<size_t>(group[static_cast<size_t>(d)])] += 1;
    for (int other = 0; other < n; ++other) at(d, group[static_cast<size_t>(other)]) += both_ways(traffic, d, other);
  }
  const auto move = [&](int device, int to) {
    const int from = group[static_cast<size_t>(device)];
    for (int other = 0; other < n; ++other) {
      const int64_t bytes = both_ways(traffic, device, other);
      at(other, from) -= bytes;
      at(other, to) += bytes;
    }
    size[static_cast<size_t>(from)] -= 1;
    size[static_cast<size_t>(to)] += 1;
    group[static_cast<size_t>(device)] = to;
  };
  const int max_steps = 16 * n + 16;
  for (int step = 0; step < max_steps; ++step) {
    int64_t best_cut = 0;
    int best_a = -1;
    int best_b = -1;  // -1: a move of best_a into best_to
    int best_to = -1;
    for (int a = 0; a < n; ++a) {
      const int ga = group[static_cast<size_t>(a)];
      for (int g = 0; g < groups; ++g) {
        if (g == ga || size[static_cast<size_t>(g)] >= per_node) continue;
        if (const int64_t cut = at(a, g) - at(a, ga); cut > best_cut) {
          best_cut = cut;
          best_a = a;
          best_b = -1;
          best_to = g;
        }
      }
      for (int b = a + 1; b < n; ++b) {
        const int gb = group[static_cast<size_t>(b)];
        if (gb == ga) continue;
        const int64_t cut = at(a, gb) - at(a, ga) + at(b, ga) - at(b, gb) - 2 * both_ways(traffic, a, b);
        if (cut > best_cut) {
          best_cut = cut;
          best_a = a;
          best_b = b;
        }
      }
    }
    if (best_a < 0) return;
    if (best_b < 0) {
      move(best_a, best_to);
    } else {
      const int ga = group[static_cast<size_t>(best_a)];
      move(best_a, group[static_cast<size_t>(best_b)]);
      move(best_b, ga);
    }
  }
}

/// Pass 3: the node groups' traffic, as a matrix between groups, to group
/// them again into leaves.
DeviceTraffic node_group_traffic(const DeviceTraffic& traffic, const std::vector<int>& group) {
  const int groups = group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1;
  DeviceTraffic between(groups);
  const int n = traffic.devices();
  for (int from = 0; from < n; ++from) {
    for (const auto& [to, bytes] : traffic.sent_by(from)) {
      between.add(group[static_cast<size_t>(from)], group[static_cast<size_t>(to)], bytes);
    }
  }
  return between;
}

/// Pass 4: leaf groups ordered by their smallest device take leaves 0, 1,
/// ...; within one, node groups ordered likewise take its nodes in order;
/// within a node group, plan order on the node's devices in order (a group
/// that is a default node keeps its devices where they were). `leaf_of_group`
/// empty: every node group under one leaf, node group k on node k.
std::vector<int> name_devices(const std::vector<int>& group, const std::vector<int>& leaf_of_group, int per_node,
                              int nodes_per_leaf) {
  const size_t n = group.size();
  std::vector<int> node_of_group(n, -1);
  std::vector<int> leaf_name(n, -1);       // by leaf group: the leaf it takes
  std::vector<int> nodes_taken(n, 0);      // by leaf: its nodes given out
  std::vector<int> next_slot(n, 0);
  std::vector<int> device_map(n, -1);
  int leaves = 0;
  for (size_t d = 0; d < n; ++d) {
    const auto g = static_cast<size_t>(group[d]);
    if (node_of_group[g] < 0) {
      const auto leaf_group = leaf_of_group.empty() ? size_t{0} : static_cast<size_t>(leaf_of_group[g]);
      if (leaf_name[leaf_group] < 0) leaf_name[leaf_group] = leaves++;
      const auto leaf = static_cast<size_t>(leaf_name[leaf_group]);
      node_of_group[g] = leaf_name[leaf_group] * nodes_per_leaf + nodes_taken[leaf]++;
    }
    device_map[d] = node_of_group[g] * per_node + next_slot[g]++;
  }
  return device_map;
}

}  // namespace

std::string_view to_string(PlacementMode mode) {
  switch (mode) {
    case PlacementMode::kDefault: return "default";
    case PlacementMode::kTopology: return "topology";
  }
  return "?";
}

PlacementMode parse_placement_mode(std::string_view name) {
  for (PlacementMode mode : {PlacementMode::kDefault, PlacementMode::kTopology}) {
    if (name == to_string(mode)) return mode;
  }
  throw InputError("--placement", "", fmt::format("unknown placement '{}'; use default or topology", name));
}

std::vector<int> default_device_map(int devices) {
  std::vector<int> device_map(static_cast<size_t>(std::max(devices, 0)));
  for (size_t d = 0; d < device_map.size(); ++d) device_map[d] = static_cast<int>(d);
  return device_map;
}

int64_t cross_node_bytes(const DeviceTraffic& traffic, std::span<const int> device_map, NodeShape shape) {
  const int n = traffic.devices();
  SPLITSCOPE_CHECK(static_cast<int>(device_map.size()) == n && shape.devices_per_node > 0,
                   fmt::format("a device map of {} devices for a plan of {}", device_map.size(), n));
  const auto node = [&](int device) { return device_map[static_cast<size_t>(device)] / shape.devices_per_node; };
  int64_t bytes = 0;
  for (int from = 0; from < n; ++from) {
    for (const auto& [to, sent] : traffic.sent_by(from)) {
      if (node(from) != node(to)) bytes += sent;
    }
  }
  return bytes;
}

int64_t cross_leaf_bytes(const DeviceTraffic& traffic, std::span<const int> device_map, NodeShape shape) {
  if (!shape.has_spine()) return 0;
  return cross_node_bytes(traffic, device_map,
                          NodeShape{shape.nodes / shape.nodes_per_leaf, shape.devices_per_node * shape.nodes_per_leaf});
}

std::vector<int> topology_device_map(const DeviceTraffic& traffic, NodeShape shape) {
  const int n = traffic.devices();
  SPLITSCOPE_CHECK(shape.nodes > 0 && shape.devices_per_node > 0 &&
                       static_cast<int64_t>(shape.nodes) * shape.devices_per_node >= n,
                   fmt::format("{} devices do not fit {} node(s) of {}", n, shape.nodes, shape.devices_per_node));
  SPLITSCOPE_CHECK(!shape.has_spine() || shape.nodes % shape.nodes_per_leaf == 0,
                   fmt::format("{} nodes are not leaves of {}", shape.nodes, shape.nodes_per_leaf));
  std::vector<int> fallback = default_device_map(n);
  if (shape.nodes == 1 || n <= 1) return fallback;
  std::vector<int> group = grow_groups(traffic, shape.devices_per_node);
  refine_groups(traffic, shape.devices_per_node, group);
  std::vector<int> leaf_of_group;
  if (shape.has_spine()) {
    const DeviceTraffic between = node_group_traffic(traffic, group);
    leaf_of_group = grow_groups(between, shape.nodes_per_leaf);
    refine_groups(between, shape.nodes_per_leaf, leaf_of_group);
  }
  std::vector<int> placed = name_devices(group, leaf_of_group, shape.devices_per_node,
                                         shape.has_spine() ? shape.nodes_per_leaf : shape.nodes);
  const int64_t spine = cross_leaf_bytes(traffic, placed, shape);
  const int64_t default_spine = cross_leaf_bytes(traffic, fallback, shape);
  const int64_t nodes = cross_node_bytes(traffic, placed, shape);
  const int64_t default_nodes = cross_node_bytes(traffic, fallback, shape);
  if (spine <= default_spine && nodes <= default_nodes && (spine < default_spine || nodes < default_nodes)) {
    return placed;
  }
  return fallback;
}

}  // namespace splitscope
