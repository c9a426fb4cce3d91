// Routes: which links a transfer crosses on each kind of topology.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hand_plan.hpp"
#include "sim/machine/topology.hpp"

namespace splitscope {
namespace topology_test {
namespace {

std::vector<std::string> route_names(const Topology& topology, int from, int to) {
  std::vector<std::string> names;
  // The route is held: links() views its storage, which a temporary in the
  // range-for would take away before the loop (ASan: stack-use-after-scope).
  const auto route = topology.route(from, to);
  for (int link : route.links()) names.push_back(topology.links()[static_cast<size_t>(link)].name);
  return names;
}

TEST(Topology, SwitchCrossesThePortUpAndThePortDown) {
  const Topology topology(testing::test_machine(4, testing::switch_topology(450, 2)));
  EXPECT_EQ(topology.links().size(), 8u);
  EXPECT_EQ(route_names(topology, 1, 3), (std::vector<std::string>{"port 1 up", "port 3 down"}));
  EXPECT_DOUBLE_EQ(topology.route(1, 3).latency_seconds, 2e-6);
  EXPECT_DOUBLE_EQ(topology.links()[0].bytes_per_second, 450e9);
}

TEST(Topology, HostStagedGoesUpOneBusAndDownTheOther) {
  const Topology topology(testing::test_machine(8, testing::host_staged_topology(4, 12, 10)));
  EXPECT_EQ(topology.links().size(), 4u);  // 2 buses, up and down
  EXPECT_EQ(route_names(topology, 0, 3), (std::vector<std::string>{"bus 0 up", "bus 0 down"}));
  EXPECT_EQ(route_names(topology, 1, 6), (std::vector<std::string>{"bus 0 up", "bus 1 down"}));
  EXPECT_DOUBLE_EQ(topology.route(1, 6).latency_seconds, 10e-6);
}

TEST(Topology, MultiNodeUsesTheSwitchInsideANodeAndTheNicsAcross) {
  // 2 nodes of 4 devices, 2 NICs per node: devices 0-1 share NIC 0, 2-3 NIC 1.
  TopologySpec spec = testing::multi_node_topology(4, 2, 450, 50);
  spec.nic.latency_us = 5;
  const Topology topology(testing::test_machine(8, spec));
  EXPECT_EQ(topology.links().size(), 8u * 2 + 4u * 2);
  EXPECT_EQ(route_names(topology, 0, 2), (std::vector<std::string>{"port 0 up", "port 2 down"}));
  EXPECT_EQ(route_names(topology, 1, 7), (std::vector<std::string>{"node 0 nic 0 up", "node 1 nic 1 down"}));
  EXPECT_EQ(route_names(topology, 6, 3), (std::vector<std::string>{"node 1 nic 1 up", "node 0 nic 1 down"}));
  EXPECT_DOUBLE_EQ(topology.route(1, 7).latency_seconds, 5e-6);
  EXPECT_DOUBLE_EQ(topology.route(0, 2).latency_seconds, 0);
}

TEST(Topology, APlacedTopologyRoutesPlanDevicesOverTheirMachineDevices) {
  // 2 nodes of 4; plan devices 0, 1, 2 on machine devices 5, 0, 4.
  const Topology machine(testing::test_machine(8, testing::multi_node_topology(4, 4, 450, 50)));
  EXPECT_EQ(machine.nodes(), 2);
  EXPECT_EQ(machine.devices_per_node(), 4);
  const Topology placed = machine.placed({5, 0, 4});
  EXPECT_EQ(placed.devices(), 3);
  EXPECT_EQ(route_names(placed, 0, 2), (std::vector<std::string>{"port 5 up", "port 4 down"}));
  EXPECT_EQ(route_names(placed, 1, 0), route_names(machine, 0, 5));
  EXPECT_EQ(placed.node_of(0), 1);
  EXPECT_EQ(placed.node_of(1), 0);
  EXPECT_THROW(placed.route(0, 3), std::logic_error);  // the plan has 3 devices
  EXPECT_THROW(machine.placed({1, 1}), std::logic_error);
  EXPECT_THROW(machine.placed({8}), std::logic_error);
  // One node: every device in node 0.
  const Topology one(testing::test_machine(4, testing::switch_topology(450, 2)));
  EXPECT_EQ(one.nodes(), 1);
  EXPECT_EQ(one.node_of(3), 0);
}

TEST(Topology, NoRouteFromADeviceToItself) {
  const Topology topology(testing::test_machine(2, testing::switch_topology(10, 0)));
  EXPECT_THROW(topology.route(1, 1), std::logic_error);
  EXPECT_THROW(topology.route(0, 2), std::logic_error);
}

}  // namespace
}  // namespace topology_test
}  // namespace splitscope
