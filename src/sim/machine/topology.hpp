#pragma once
/// \file
/// The links of a machine and the route of every transfer: which links (each
/// one direction of a physical connection, with its own bandwidth) a copy
/// from device a to device b crosses, and the latency it pays.
///
/// - switch: a -> b crosses a's port up and b's port down.
/// - host-staged (no peer-to-peer): a -> b goes up a's bus to host memory and
///   down b's bus from it; devices behind one bus share its bandwidth, in each
///   direction, even when a and b sit behind the same bus.
/// - multi-node: inside a node, as a switch; across nodes, a's NIC out and
///   b's NIC in (the network itself non-blocking), unless the machine's
///   `network` gives it tiers:
///   - fat-tree: NICs under one leaf: a's NIC up, b's NIC down (one switch
///     hop); under different leaves: a's NIC up, a's leaf uplink up, b's
///     leaf uplink down, b's NIC down (leaf, spine, leaf: three hops);
///   - rail: the same, where a "leaf" is one rail switch of one rail group:
///     NICs of one rail (NIC index) in one group meet at their rail switch;
///     any other pair goes through the spine. NCCL's PXN (moving the data
///     over NVLink to the GPU on the right rail first) is left out.
///   The spine above the leaves is non-blocking; each uplink carries its
///   leaf's NIC bandwidth over the oversubscription, and every switch hop
///   adds `hop_latency_us`.
///
/// A link's capacity is the payload its protocol carries of its line rate
/// (link_efficiency.hpp): on a host-staged bus the up link carries the
/// device's writes to host memory and the down link the completions of its
/// reads from there; switch ports and NICs carry writes both ways. Every
/// transfer and every ring step of a collective drains at those rates, so a
/// ring all-reduce of B bytes over N devices reaches nccl-tests' bus
/// bandwidth busbw = algbw · 2(N-1)/N = the links' payload rate.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/machine/machine.hpp"

namespace splitscope {

/// Most links one route crosses.
inline constexpr int kMaxRouteLinks = 4;

struct Link {
  std::string name;              ///< "port 3 up", "bus 0 down", "node 1 nic 0 in"
  double bytes_per_second = 0;   ///< payload: the line rate × the protocol's efficiency
  double line_bytes_per_second = 0;  ///< the machine file's line rate
  LinkProtocol protocol = LinkProtocol::kAchieved;  ///< what carries the bytes (NCCL's model reads it)
};

struct Route {
  std::array<int, kMaxRouteLinks> link_ids{};
  int link_count = 0;
  double latency_seconds = 0;

  std::span<const int> links() const { return {link_ids.data(), static_cast<size_t>(link_count)}; }
};

class Topology {
 public:
  /// The links and routes of `machine`'s topology over its devices.
  explicit Topology(const Machine& machine);

  /// The same machine with a plan's device d on machine device
  /// `device_map[d]` (device_placement.hpp): route() and node_of() then take
  /// the plan's device numbers, and devices() is the map's size. The map
  /// names distinct devices of the machine (std::logic_error otherwise).
  Topology placed(std::vector<int> device_map) const;

  /// The devices routes run between: the machine's, or the placed plan's.
  int devices() const { return device_map_.empty() ? devices_ : static_cast<int>(device_map_.size()); }
  const std::vector<Link>& links() const { return links_; }
  /// The route of a copy from `from` to `to` (different devices); computed
  /// on demand, as machines may have more devices than a table of all pairs
  /// should hold.
  Route route(int from, int to) const;
  /// The node `device` sits in: its machine device / devices_per_node on a
  /// multi-node machine, else 0.
  int node_of(int device) const;
  /// Nodes of the machine (1 unless multi-node) and the devices in each.
  int nodes() const { return devices_ / devices_per_node(); }
  int devices_per_node() const;
  /// Nodes whose traffic stays below the spine: a fat tree's nodes per leaf,
  /// a rail network's nodes per rail group; all nodes where the network is
  /// one non-blocking tier.
  int nodes_per_leaf() const;

 private:
  void add_link_pair(const std::string& name, const LinkSpec& spec, LinkTraffic up,
                     LinkTraffic down);

  /// The machine device of each device routes name; empty: the machine's own numbering.
  int machine_device(int device) const;

  TopologySpec spec_;
  int devices_ = 0;  ///< the machine's
  std::vector<int> device_map_;
  int nic_base_ = 0;  ///< multi-node: id of the first NIC link
  int uplink_base_ = 0;  ///< fat-tree, rail: connection of the first leaf's uplink
  std::vector<Link> links_;
};

}  // namespace splitscope
