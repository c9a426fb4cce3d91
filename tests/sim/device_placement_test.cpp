// Topology placement (src/sim/machine/device_placement.hpp) on hand-made traffic
// matrices, and its promise over many random ones: never more bytes across
// nodes than plan device i on machine device i.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "random_traffic.hpp"
#include "sim/machine/device_placement.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace device_placement_test {
namespace {

/// `bytes` each way between `a` and `b`.
void exchange(DeviceTraffic& traffic, int a, int b, int64_t bytes) {
  traffic.add(a, b, bytes);
  traffic.add(b, a, bytes);
}

/// Every plan device on its own device of the machine's.
void expect_injective(const std::vector<int>& device_map, NodeShape shape) {
  std::set<int> seen;
  for (int device : device_map) {
    EXPECT_GE(device, 0);
    EXPECT_LT(device, shape.nodes * shape.devices_per_node);
    EXPECT_TRUE(seen.insert(device).second) << "machine device " << device << " twice";
  }
}

TEST(DevicePlacement, HeavyPairsThatStraddleNodesMoveIntoOneNode) {
  // 4 devices, 2 nodes of 2. The heavy pairs (0, 2) and (1, 3) exchange
  // 1000 bytes each way; 0 -> 1 and 2 -> 3 send 10 bytes.
  DeviceTraffic traffic(4);
  exchange(traffic, 0, 2, 1000);
  exchange(traffic, 1, 3, 1000);
  traffic.add(0, 1, 10);
  traffic.add(2, 3, 10);
  const NodeShape shape{2, 2};
  // Default: nodes {0, 1} and {2, 3}; all four heavy sends cross.
  EXPECT_EQ(cross_node_bytes(traffic, default_device_map(4), shape), 4000);
  // Topology: {0, 2} on node 0, {1, 3} on node 1; only the two light sends cross.
  const std::vector<int> placed = topology_device_map(traffic, shape);
  EXPECT_EQ(placed, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(cross_node_bytes(traffic, placed, shape), 20);
}

TEST(DevicePlacement, KeepsTheDefaultWhenNothingBetterExists) {
  // A ring 0 -> 1 -> 2 -> 3 -> 0 on 2 nodes of 2: any split cuts two of its
  // edges, as the default does, so the default stays.
  DeviceTraffic ring(4);
  for (int d = 0; d < 4; ++d) ring.add(d, (d + 1) % 4, 100);
  EXPECT_EQ(topology_device_map(ring, {2, 2}), default_device_map(4));
  EXPECT_EQ(cross_node_bytes(ring, default_device_map(4), {2, 2}), 200);
  // No traffic at all: the default too.
  EXPECT_EQ(topology_device_map(DeviceTraffic(6), {2, 4}), default_device_map(6));
}

TEST(DevicePlacement, OneNodeIsAlwaysTheDefault) {
  DeviceTraffic traffic(4);
  exchange(traffic, 0, 3, 1000);
  EXPECT_EQ(topology_device_map(traffic, {1, 8}), default_device_map(4));
  EXPECT_EQ(cross_node_bytes(traffic, default_device_map(4), {1, 8}), 0);
}

TEST(DevicePlacement, APlanSmallerThanTheMachineMayUseAnyOfItsDevices) {
  // 3 devices on 2 nodes of 2: default {0, 1} | {2}, and 0 <-> 2 is heavy.
  DeviceTraffic traffic(3);
  exchange(traffic, 0, 2, 500);
  traffic.add(0, 1, 7);
  const NodeShape shape{2, 2};
  const std::vector<int> placed = topology_device_map(traffic, shape);
  expect_injective(placed, shape);
  EXPECT_EQ(cross_node_bytes(traffic, default_device_map(3), shape), 1000);
  EXPECT_EQ(cross_node_bytes(traffic, placed, shape), 7);
  // Plans that fit one node stay in node 0: nothing crosses under the default.
  DeviceTraffic small(2);
  exchange(small, 0, 1, 500);
  EXPECT_EQ(topology_device_map(small, {2, 8}), default_device_map(2));
}

TEST(DevicePlacement, RefusesAPlanLargerThanTheMachine) {
  EXPECT_THROW(topology_device_map(DeviceTraffic(5), {2, 2}), std::logic_error);
}

TEST(DevicePlacement, ModesParseByNameAndAnUnknownOneNamesTheChoices) {
  EXPECT_EQ(parse_placement_mode("default"), PlacementMode::kDefault);
  EXPECT_EQ(parse_placement_mode("topology"), PlacementMode::kTopology);
  try {
    parse_placement_mode("nearest");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("use default or topology"), std::string::npos) << e.what();
  }
}

TEST(DevicePlacement, NeverMovesMoreBytesAcrossNodesThanTheDefaultOnRandomMatrices) {
  std::mt19937_64 random(20261218);
  int improved = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int per_node = std::uniform_int_distribution<int>(1, 8)(random);
    const int devices = std::uniform_int_distribution<int>(1, 24)(random);
    const int nodes = (devices + per_node - 1) / per_node + std::uniform_int_distribution<int>(0, 1)(random);
    const NodeShape shape{nodes, per_node};
    const DeviceTraffic traffic = testing::random_skewed_traffic(devices, random);
    const std::vector<int> placed = topology_device_map(traffic, shape);
    ASSERT_EQ(placed.size(), static_cast<size_t>(devices));
    expect_injective(placed, shape);
    const int64_t by_default = cross_node_bytes(traffic, default_device_map(devices), shape);
    const int64_t by_topology = cross_node_bytes(traffic, placed, shape);
    ASSERT_LE(by_topology, by_default) << "trial " << trial;
    // Only a strict gain moves a device.
    if (by_topology == by_default) {
      EXPECT_EQ(placed, default_device_map(devices)) << "trial " << trial;
    } else {
      ++improved;
    }
  }
  // The property is not met by never moving: most random matrices gain.
  EXPECT_GT(improved, 1000);
}

TEST(DevicePlacement, RecoversPlantedNodesHiddenUnderAShuffle) {
  // 4 nodes of 4: devices of one hidden group exchange 1 MB, others 1 KB at
  // most; the heuristic finds the groups (cross bytes at most the light ones).
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int> hidden(16);
    for (int d = 0; d < 16; ++d) hidden[static_cast<size_t>(d)] = d / 4;
    std::shuffle(hidden.begin(), hidden.end(), random);
    DeviceTraffic traffic(16);
    int64_t light = 0;
    std::uniform_int_distribution<int64_t> some(0, 1000);
    for (int a = 0; a < 16; ++a) {
      for (int b = 0; b < 16; ++b) {
        if (a == b) continue;
        if (hidden[static_cast<size_t>(a)] == hidden[static_cast<size_t>(b)]) {
          traffic.add(a, b, 1'000'000);
        } else {
          const int64_t bytes = some(random);
          traffic.add(a, b, bytes);
          light += bytes;
        }
      }
    }
    EXPECT_LE(cross_node_bytes(traffic, topology_device_map(traffic, {4, 4}), {4, 4}), light) << trial;
  }
}

}  // namespace
}  // namespace device_placement_test
}  // namespace splitscope
