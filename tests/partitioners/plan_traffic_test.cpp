// The traffic matrix (plan/plan_traffic.hpp): which pair of devices
// each byte of a plan's transfers and collective ring steps crosses.

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "plan/plan_traffic.hpp"
#include "plan_test_support.hpp"

namespace splitscope::testing {
namespace plan_traffic_test {
namespace {

// in 10 -> dense 6 -> dense 4, batch 3.
const char* kTwoDense = R"({"batch": 3, "input": [10], "layers": [
    {"type": "dense", "units": 6, "activation": "relu"}, {"type": "dense", "units": 4}]})";

int64_t total(const DeviceTraffic& traffic) {
  int64_t bytes = 0;
  for (int from = 0; from < traffic.devices(); ++from) {
    for (int to = 0; to < traffic.devices(); ++to) bytes += traffic.at(from, to);
  }
  return bytes;
}

TEST(PlanTraffic, HorizontalSendsTheBoundaryActivationFromTheFirstDeviceToTheSecond) {
  const DeviceTraffic traffic = plan_traffic(make_plan(graph_from_text(kTwoDense), "horizontal", 2));
  // Layer 1's whole output, 3 x 6 x 4 = 72 bytes, one way.
  EXPECT_EQ(traffic.at(0, 1), 72);
  EXPECT_EQ(traffic.at(1, 0), 0);
  EXPECT_EQ(traffic.at(0, 0), 0);
}

TEST(PlanTraffic, VerticalAllGatherSendsEachSliceToTheOtherDevice) {
  const DeviceTraffic traffic = plan_traffic(make_plan(graph_from_text(kTwoDense), "vertical", 2));
  // 3 rows x 3 units x 4 bytes each way (transfer_bytes_test.cpp's case).
  EXPECT_EQ(traffic.at(0, 1), 36);
  EXPECT_EQ(traffic.at(1, 0), 36);
}

TEST(PlanTraffic, RingStepsGoToTheNextParticipantAndAddUpToTheBytesMoved) {
  for (const char* strategy : {"tensor", "vertical", "horizontal", "data"}) {
    const Plan plan = make_plan(zoo_graph("mlp-small"), strategy, 4);
    const DeviceTraffic traffic = plan_traffic(plan);
    const PlanTotals totals = plan_totals(plan);
    EXPECT_EQ(total(traffic), totals.transfer_bytes + totals.collective_bytes) << strategy;
  }
  // A tensor plan's all-reduces run a ring 0 -> 1 -> 2 -> 3 -> 0, each step
  // to the next device; its closing concat sends every slice to root 0. So
  // no byte goes from a device to the one two away but to the root.
  const DeviceTraffic ring = plan_traffic(make_plan(zoo_graph("mlp-small"), "tensor", 4));
  for (int d = 0; d < 4; ++d) EXPECT_GT(ring.at(d, (d + 1) % 4), 0) << d;
  EXPECT_EQ(ring.at(0, 2), 0);
  EXPECT_EQ(ring.at(1, 3), 0);
  EXPECT_EQ(ring.at(3, 1), 0);
  EXPECT_GT(ring.at(2, 0), 0);
}

TEST(PlanTraffic, ACopyInsideOneDeviceCrossesNothing) {
  DeviceTraffic traffic(2);
  traffic.add(1, 1, 100);
  traffic.add(0, 1, 5);
  EXPECT_EQ(traffic.at(1, 1), 0);
  EXPECT_EQ(traffic.at(0, 1), 5);
  EXPECT_THROW(traffic.at(0, 2), std::logic_error);
}

TEST(PlanTraffic, AMillionDevicesHoldOnlyThePairsThatSend) {
  // A ring over 2^20 devices: each sends to the next only. The matrix keeps
  // those 2^20 pairs, not 2^40 cells (8 TiB as a dense table).
  constexpr int kDevices = 1 << 20;
  DeviceTraffic traffic(kDevices);
  for (int d = 0; d < kDevices; ++d) traffic.add(d, (d + 1) % kDevices, 3);
  traffic.add(7, 8, 2);
  EXPECT_EQ(traffic.at(7, 8), 5);
  EXPECT_EQ(traffic.at(8, 7), 0);
  EXPECT_EQ(traffic.at(kDevices - 1, 0), 3);
  ASSERT_EQ(traffic.sent_by(7).size(), 1u);
  EXPECT_EQ(traffic.sent_by(7).front(), (std::pair<int, int64_t>{8, 5}));
  // The pairs `from` sends to come by device, whatever order they were added in.
  traffic.add(7, 3, 1);
  traffic.add(7, 0, 0);  // no bytes: no pair
  EXPECT_EQ(traffic.sent_by(7), (std::vector<std::pair<int, int64_t>>{{3, 1}, {8, 5}}));
}

}  // namespace
}  // namespace plan_traffic_test
}  // namespace splitscope::testing
