// Bandwidth sharing: max-min fair rates, recomputed as flows come and go.

#include <gtest/gtest.h>

#include <vector>

#include "sim/network/flow_network.hpp"

namespace splitscope {
namespace flow_network_test {
namespace {

TEST(FlowNetwork, ALoneFlowGetsTheSlowestLinkOfItsRoute) {
  FlowNetwork network({10, 4});
  const std::vector<int> route{0, 1};
  const auto flow = network.start(0, route, 40);
  EXPECT_DOUBLE_EQ(network.rate(flow), 4);
  EXPECT_DOUBLE_EQ(network.finish_time(flow), 10);  // 40 / 4
  EXPECT_EQ(network.rescheduled(), std::vector<int>{flow});
  network.finish(10, flow);
  EXPECT_TRUE(network.rescheduled().empty());
  EXPECT_EQ(network.active_flows(), 0u);
}

TEST(FlowNetwork, FlowsHeldBackElsewhereLeaveTheirShareToTheOthers) {
  // Link A (10) carries x and y; x also crosses link B (4). Max-min: x is
  // held to 4 by B, y takes the rest of A, 6 (an equal split would give 5).
  FlowNetwork network({10, 4});
  const auto x = network.start(0, std::vector<int>{0, 1}, 100);
  const auto y = network.start(0, std::vector<int>{0}, 100);
  EXPECT_DOUBLE_EQ(network.rate(x), 4);
  EXPECT_DOUBLE_EQ(network.rate(y), 6);
}

TEST(FlowNetwork, RatesChangeWhenFlowsStartAndFinish) {
  // y: 60 bytes alone on A (10/s) from t = 0, would finish at 6.
  FlowNetwork network({10, 4});
  const auto y = network.start(0, std::vector<int>{0}, 60);
  EXPECT_DOUBLE_EQ(network.finish_time(y), 6);
  // At t = 2 (y has 40 left) x starts on A and B with 8 bytes: x gets 4, y 6.
  const auto x = network.start(2, std::vector<int>{0, 1}, 8);
  EXPECT_DOUBLE_EQ(network.finish_time(x), 4);            // 2 + 8 / 4
  EXPECT_DOUBLE_EQ(network.finish_time(y), 2 + 40.0 / 6);  // both rescheduled
  EXPECT_EQ(network.rescheduled().size(), 2u);
  // At t = 4 x is done; y has 40 - 2·6 = 28 left, alone again at 10: 6.8.
  network.finish(4, x);
  EXPECT_DOUBLE_EQ(network.finish_time(y), 6.8);
  EXPECT_EQ(network.rescheduled(), std::vector<int>{y});
  EXPECT_EQ(network.active_flows(), 1u);
}

TEST(FlowNetwork, UnrelatedFlowsAreNotRescheduled) {
  FlowNetwork network({10, 10, 10});
  const auto a = network.start(0, std::vector<int>{0}, 10);
  network.start(0, std::vector<int>{1}, 10);
  EXPECT_EQ(network.rescheduled().size(), 1u);  // only the new one
  EXPECT_DOUBLE_EQ(network.finish_time(a), 1);
}

TEST(FlowNetwork, FlowsThatLeaveAtOneInstantReshareTheirLinksOnce) {
  // Link 0 (10/s) carries 8 flows of 10 bytes (step groups ending together on
  // a shared uplink) and one of 100; link 1 (10/s) one flow alone. All join
  // at 0 and settle: one recomputation for link 0's component (1.25/s each),
  // none for the flow alone (its rate is set as it joins).
  FlowNetwork network({10, 10});
  std::vector<int> short_flows;
  for (int i = 0; i < 8; ++i) short_flows.push_back(network.join(0, std::vector<int>{0}, 10));
  const auto long_flow = network.join(0, std::vector<int>{0}, 100);
  const auto alone = network.join(0, std::vector<int>{1}, 50);
  EXPECT_DOUBLE_EQ(network.finish_time(alone), 5);
  EXPECT_TRUE(network.unsettled());
  network.settle(0);
  EXPECT_FALSE(network.unsettled());
  EXPECT_EQ(network.reshares(), 1u);
  EXPECT_EQ(network.rescheduled().size(), 9u);  // every flow that joined link 0
  for (const auto flow : short_flows) EXPECT_DOUBLE_EQ(network.finish_time(flow), 10 / (10.0 / 9));
  // The 8 leave at 9 (10 bytes at 10/9 a second): one more recomputation,
  // not 8; the long flow has 100 - 10 = 90 left at the whole 10/s.
  for (const auto flow : short_flows) network.leave(flow);
  network.settle(9);
  EXPECT_EQ(network.reshares(), 2u);
  EXPECT_EQ(network.rescheduled(), std::vector<int>{long_flow});
  EXPECT_DOUBLE_EQ(network.finish_time(long_flow), 18);
  // finish() one by one reshares at each (the count start() and finish() keep).
  const auto other = network.start(9, std::vector<int>{0}, 45);
  EXPECT_EQ(network.reshares(), 3u);
  network.finish(18, long_flow);
  EXPECT_EQ(network.reshares(), 4u);
  EXPECT_DOUBLE_EQ(network.finish_time(other), 18);  // 45 at 5/s from 9
}

TEST(FlowNetwork, AStepGroupMovesAtTheRateOfEachOfItsSends) {
  // A ring step of 4 sends on a switch: each crosses its sender's port up
  // and its receiver's port down, 8 links of 10/s, each once. Alone, each
  // send (and so the group) moves at 10; its 20 bytes take 2.
  FlowNetwork network(std::vector<double>(9, 10.0));
  const std::vector<int> step{0, 1, 2, 3, 4, 5, 6, 7};
  const auto group = network.start(0, step, 20);
  EXPECT_DOUBLE_EQ(network.rate(group), 10);
  EXPECT_DOUBLE_EQ(network.finish_time(group), 2);
  EXPECT_DOUBLE_EQ(network.alone_rate(step), 10);
  // Another ring over the same ports shares every link alike: 5 each.
  const auto other = network.start(0, step, 20);
  EXPECT_DOUBLE_EQ(network.rate(group), 5);
  EXPECT_DOUBLE_EQ(network.rate(other), 5);
  // A transfer over one of its links and a link of its own (8): max-min
  // gives the three on link 3 a third each; the slowest send paces the step.
  const auto transfer = network.start(0, std::vector<int>{3, 8}, 20);
  EXPECT_DOUBLE_EQ(network.rate(group), 10.0 / 3);
  EXPECT_DOUBLE_EQ(network.rate(transfer), 10.0 / 3);
  network.finish(0, transfer);
  network.finish(0, other);
  EXPECT_DOUBLE_EQ(network.rate(group), 10);
  // Links listed twice (two sends crossing each) give it half of each.
  EXPECT_DOUBLE_EQ(network.alone_rate(std::vector<int>{0, 0, 1, 1, 2, 2}), 5);
}

TEST(FlowNetwork, AFlowCrossingALinkTwiceUsesItTwice) {
  // One bus, up and down as one shared (half-duplex) link: a flow listing it
  // twice moves at half its bandwidth.
  FlowNetwork network({10});
  const auto flow = network.start(0, std::vector<int>{0, 0}, 10);
  EXPECT_DOUBLE_EQ(network.rate(flow), 5);
}

TEST(FlowNetwork, EqualFlowsSplitEvenly) {
  FlowNetwork network({12});
  std::vector<int> flows;
  for (int i = 0; i < 3; ++i) flows.push_back(network.start(0, std::vector<int>{0}, 12));
  for (int flow : flows) EXPECT_DOUBLE_EQ(network.rate(flow), 4);
}

}  // namespace
}  // namespace flow_network_test
}  // namespace splitscope
