#pragma once
/// \file
/// Which machine device each plan device runs on (`--placement`). A plan
/// numbers its devices 0..N-1 without knowing the machine; by default plan
/// device i runs on machine device i. On a machine of several nodes, the
/// devices that exchange the most bytes belong in one node (over NVLink,
/// not a NIC), so topology placement maps the plan's devices onto the
/// nodes to cut the bytes that cross nodes, and never does worse than the
/// default: it keeps the default mapping unless it moves strictly fewer
/// bytes across nodes.
///
/// Pure functions of a plan's traffic matrix (plan/plan_traffic.hpp)
/// and the machine's node shape; the simulator applies the mapping to its
/// routes (Topology::placed), so plans, executors and reports never see it.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "plan/plan_traffic.hpp"

namespace splitscope {

enum class PlacementMode {
  kDefault,   ///< plan device i on machine device i
  kTopology,  ///< the heaviest-traffic devices share a node
};

/// "default", "topology" (the `--placement` values).
std::string_view to_string(PlacementMode mode);
/// The mode named `name`; InputError naming the choices otherwise.
PlacementMode parse_placement_mode(std::string_view name);

/// A machine's devices as nodes of equal size: machine device m is in node
/// m / devices_per_node. A single-node machine is one node of all its devices.
/// On a network of leaves and a spine (a fat tree, or a rail network's rail
/// groups), every `nodes_per_leaf` consecutive nodes share a leaf: node k is
/// under leaf k / nodes_per_leaf. 0: one tier, no spine to cross.
struct NodeShape {
  int nodes = 1;
  int devices_per_node = 1;
  int nodes_per_leaf = 0;

  /// Whether some pair of nodes talks through the spine.
  bool has_spine() const { return nodes_per_leaf > 0 && nodes_per_leaf < nodes; }
};

/// Plan device i on machine device i, for `devices` devices.
std::vector<int> default_device_map(int devices);

/// The bytes of `traffic` whose sender and receiver sit in different nodes
/// when plan device d runs on machine device `device_map[d]`.
int64_t cross_node_bytes(const DeviceTraffic& traffic, std::span<const int> device_map, NodeShape shape);

/// The bytes of `traffic` whose sender and receiver sit under different
/// leaves (and so cross the spine) under `device_map`; 0 without a spine.
int64_t cross_leaf_bytes(const DeviceTraffic& traffic, std::span<const int> device_map, NodeShape shape);

/// The topology placement of a plan with `traffic` on machine nodes `shape`
/// (which must have room for its devices; std::logic_error otherwise):
///   1. the devices go into as few node-sized groups as hold them, each grown
///      from the heaviest pair left by the device with the most traffic to it;
///   2. moves and swaps between groups that cut the bytes crossing them are
///      made, best first, until none is left (Kernighan and Lin's refinement);
///   3. with a spine, passes 1 and 2 again one tier up: the node groups, with
///      the bytes between them, go into leaf-sized groups of node groups;
///   4. leaf group k, ordered by smallest plan device, takes leaf k; within
///      it, node group j (ordered alike) takes the leaf's node j, its devices
///      in plan order on the node's devices in order (without a spine, node
///      group k simply takes node k);
///   5. the default mapping is kept unless this one moves no more bytes
///      across the spine and across nodes, and strictly fewer across one of
///      them (without a spine: strictly fewer across nodes).
std::vector<int> topology_device_map(const DeviceTraffic& traffic, NodeShape shape);

}  // namespace splitscope
