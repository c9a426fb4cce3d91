#include "sim/machine/topology.hpp"

#include <fmt/format.h>

#include "util/check.hpp"

namespace splitscope {
namespace {

// Every physical connection is two links, up (out of the device side) and
// down (into it), with ids 2k and 2k + 1.
int up(int connection) { return 2 * connection; }
int down(int connection) { return 2 * connection + 1; }

Route make_route(std::initializer_list<int> links, const LinkSpec& spec, int switch_hops = 0,
                 double hop_latency_us = 0) {
  Route route;
  for (int link : links) route.link_ids[static_cast<size_t>(route.link_count++)] = link;
  route.latency_seconds = spec.latency_seconds() + switch_hops * hop_latency_us * 1e-6;
  return route;
}

/// A leaf's uplink: the NIC link at `nics_below` times its bandwidth over the oversubscription.
LinkSpec leaf_uplink_spec(const LinkSpec& nic, int nics_below, double oversubscription) {
  LinkSpec uplink = nic;
  uplink.bandwidth_gbps = nic.bandwidth_gbps * nics_below / oversubscription;
  return uplink;
}

}  // namespace

Topology::Topology(const Machine& machine) : spec_(machine.topology), devices_(machine.devices) {
  switch (spec_.kind) {
    case TopologyKind::kSwitch:
      for (int d = 0; d < devices_; ++d) {
        add_link_pair(fmt::format("port {}", d), spec_.link, LinkTraffic::kWrites, LinkTraffic::kWrites);
      }
      break;
    case TopologyKind::kHostStaged:
      SPLITSCOPE_CHECK(spec_.devices_per_bus > 0 && devices_ % spec_.devices_per_bus == 0,
                       "devices_per_bus must divide the devices");
      for (int bus = 0; bus < devices_ / spec_.devices_per_bus; ++bus) {
        // Up: the device's copy engine writes to host memory; down: it reads from there.
        add_link_pair(fmt::format("bus {}", bus), spec_.bus, LinkTraffic::kWrites,
                      LinkTraffic::kReadCompletions);
      }
      break;
    case TopologyKind::kMultiNode: {
      SPLITSCOPE_CHECK(spec_.devices_per_node > 0 && devices_ % spec_.devices_per_node == 0 &&
                           spec_.nics_per_node > 0 &&
                           spec_.devices_per_node % spec_.nics_per_node == 0,
                       "inconsistent multi-node sizes");
      for (int d = 0; d < devices_; ++d) {
        add_link_pair(fmt::format("port {}", d), spec_.link, LinkTraffic::kWrites, LinkTraffic::kWrites);
      }
      nic_base_ = static_cast<int>(links_.size()) / 2;
      for (int node = 0; node < devices_ / spec_.devices_per_node; ++node) {
        for (int nic = 0; nic < spec_.nics_per_node; ++nic) {
          add_link_pair(fmt::format("node {} nic {}", node, nic), spec_.nic, LinkTraffic::kWrites,
                        LinkTraffic::kWrites);
        }
      }
      const NetworkSpec& network = spec_.network;
      uplink_base_ = static_cast<int>(links_.size()) / 2;
      SPLITSCOPE_CHECK(network.nodes_per_group > 0 && nodes() % network.nodes_per_group == 0 &&
                           network.oversubscription >= 1,
                       "inconsistent network tiers");
      const int groups = nodes() / network.nodes_per_group;
      if (network.kind == NetworkKind::kFatTree) {
        const LinkSpec uplink = leaf_uplink_spec(spec_.nic, network.nodes_per_group * spec_.nics_per_node,
                                                 network.oversubscription);
        for (int leaf = 0; leaf < groups; ++leaf) {
          add_link_pair(fmt::format("leaf {} uplink", leaf), uplink, LinkTraffic::kWrites, LinkTraffic::kWrites);
        }
      } else if (network.kind == NetworkKind::kRail) {
        const LinkSpec uplink = leaf_uplink_spec(spec_.nic, network.nodes_per_group, network.oversubscription);
        for (int group = 0; group < groups; ++group) {
          for (int rail = 0; rail < spec_.nics_per_node; ++rail) {
            add_link_pair(fmt::format("group {} rail {} uplink", group, rail), uplink, LinkTraffic::kWrites,
                          LinkTraffic::kWrites);
          }
        }
      }
      break;
    }
  }
}

void Topology::add_link_pair(const std::string& name, const LinkSpec& spec, LinkTraffic up, LinkTraffic down) {
  links_.push_back(Link{name + " up", spec.payload_bytes_per_second(up), spec.bytes_per_second(), spec.protocol});
  links_.push_back(
      Link{name + " down", spec.payload_bytes_per_second(down), spec.bytes_per_second(), spec.protocol});
}

Topology Topology::placed(std::vector<int> device_map) const {
  std::vector<bool> taken(static_cast<size_t>(devices_), false);
  for (int device : device_map) {
    SPLITSCOPE_CHECK(device >= 0 && device < devices_ && !taken[static_cast<size_t>(device)],
                     fmt::format("a placement names machine device {} twice or outside its {}", device, devices_));
    taken[static_cast<size_t>(device)] = true;
  }
  Topology placed = *this;
  placed.device_map_ = std::move(device_map);
  return placed;
}

int Topology::machine_device(int device) const {
  SPLITSCOPE_CHECK(device >= 0 && device < devices(), fmt::format("no device {} of {}", device, devices()));
  return device_map_.empty() ? device : device_map_[static_cast<size_t>(device)];
}

int Topology::devices_per_node() const {
  return spec_.kind == TopologyKind::kMultiNode ? spec_.devices_per_node : devices_;
}

int Topology::node_of(int device) const { return machine_device(device) / devices_per_node(); }

int Topology::nodes_per_leaf() const {
  if (spec_.kind != TopologyKind::kMultiNode || spec_.network.kind == NetworkKind::kNonBlocking) return nodes();
  return spec_.network.nodes_per_group;
}

Route Topology::route(int plan_from, int plan_to) const {
  SPLITSCOPE_CHECK(plan_from != plan_to, fmt::format("no route from device {} to itself", plan_from));
  const int from = machine_device(plan_from);
  const int to = machine_device(plan_to);
  switch (spec_.kind) {
    case TopologyKind::kSwitch:
      return make_route({up(from), down(to)}, spec_.link);
    case TopologyKind::kHostStaged: {
      const int per_bus = spec_.devices_per_bus;
      return make_route({up(from / per_bus), down(to / per_bus)}, spec_.bus);
    }
    case TopologyKind::kMultiNode: {
      const int per_node = spec_.devices_per_node;
      if (from / per_node == to / per_node) return make_route({up(from), down(to)}, spec_.link);
      const int per_nic = per_node / spec_.nics_per_node;
      // The NIC's index in its node is its rail.
      auto rail_of = [&](int device) { return (device % per_node) / per_nic; };
      auto nic_of = [&](int device) { return nic_base_ + (device / per_node) * spec_.nics_per_node + rail_of(device); };
      const NetworkSpec& network = spec_.network;
      if (network.kind == NetworkKind::kNonBlocking) return make_route({up(nic_of(from)), down(nic_of(to))}, spec_.nic);
      // The leaf switch a device's NIC plugs into: one per group of nodes, or per rail of a group.
      auto leaf_of = [&](int device) {
        const int group = device / per_node / network.nodes_per_group;
        return network.kind == NetworkKind::kFatTree ? group : group * spec_.nics_per_node + rail_of(device);
      };
      if (leaf_of(from) == leaf_of(to)) {
        return make_route({up(nic_of(from)), down(nic_of(to))}, spec_.nic, 1, network.hop_latency_us);
      }
      return make_route({up(nic_of(from)), up(uplink_base_ + leaf_of(from)), down(uplink_base_ + leaf_of(to)),
                         down(nic_of(to))},
                        spec_.nic, 3, network.hop_latency_us);
    }
  }
  return {};
}

}  // namespace splitscope
