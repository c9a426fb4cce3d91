// Bandwidth sharing: max-min fair rates, recomputed as flows come and go.

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
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


TEST(FlowNetwork, FlowsOverOneLinkSetRepriceAloneWithoutAPassOverItsLinks) {
  // A ring step's 6 links (ring_step_group.hpp), link 2 crossed twice: alone
  // a flow gets min(10, 10, 8 / 2, 10, 10) = 4; k flows over the set, 4 / k.
  FlowNetwork network(std::vector<double>{10, 10, 8, 10, 10, 3});
  const std::vector<int> ring{0, 1, 2, 2, 3, 4};
  const FlowNetwork::LinkSetId set = network.link_set(ring);
  EXPECT_EQ(network.link_set(ring), set);  // the same links, the same set
  EXPECT_NE(network.link_set(std::vector<int>{1, 0, 2, 2, 3, 4}), set);
  const auto a = network.join(0, set, 40);
  EXPECT_FALSE(network.unsettled());  // alone: its rate at once
  EXPECT_DOUBLE_EQ(network.rate(a), 4);
  EXPECT_DOUBLE_EQ(network.finish_time(a), 10);
  // b joins at 2 (a has 32 left): 2 each; a ends at 2 + 32 / 2 = 18.
  const auto b = network.join(2, set, 10);
  network.settle(2);
  EXPECT_EQ(network.reshares(), 1u);
  EXPECT_DOUBLE_EQ(network.rate(a), 2);
  EXPECT_DOUBLE_EQ(network.finish_time(a), 18);
  EXPECT_DOUBLE_EQ(network.finish_time(b), 7);
  // c joins at 3 over the set's ring as a plain list of links (the same set):
  // a has 30 left, b 8; 4 / 3 each.
  const auto c = network.start(3, ring, 4);
  EXPECT_EQ(network.reshares(), 2u);
  EXPECT_DOUBLE_EQ(network.rate(b), 4.0 / 3);
  EXPECT_DOUBLE_EQ(network.finish_time(b), 3 + 8 / (4.0 / 3));
  EXPECT_DOUBLE_EQ(network.finish_time(c), 6);
  EXPECT_EQ(network.rescheduled().size(), 3u);
  // A transfer over link 2 and link 5 (3/s) makes the set share with
  // another flow: max-min over link 2's 8/s, crossed twice by each of the
  // three, and the transfer: 7 entries, 8 / 7 each.
  const auto transfer = network.start(3, std::vector<int>{2, 5}, 8);
  EXPECT_DOUBLE_EQ(network.rate(transfer), 8.0 / 7);
  EXPECT_DOUBLE_EQ(network.rate(a), 8.0 / 7);
  network.finish(3, transfer);
  EXPECT_DOUBLE_EQ(network.rate(a), 4.0 / 3);
  // c leaves at 6: a and b back to 2 each; then b, then a alone at 4.
  network.finish(6, c);
  EXPECT_DOUBLE_EQ(network.rate(a), 2);
  EXPECT_EQ(network.rescheduled().size(), 2u);
  network.finish(network.finish_time(b), b);
  EXPECT_DOUBLE_EQ(network.rate(a), 4);
  EXPECT_EQ(network.rescheduled(), std::vector<int>{a});
  network.finish(network.finish_time(a), a);
  EXPECT_EQ(network.active_flows(), 0u);
  for (int link = 0; link < 6; ++link) EXPECT_TRUE(network.idle(link)) << link;
}

/// Max-min fair rates by progressive filling over every flow at once: the
/// definition, with none of FlowNetwork's components, bundles or link sets.
std::map<int, double> max_min_rates(const std::vector<double>& capacity,
                                    const std::map<int, std::vector<int>>& flows) {
  std::map<int, double> rates;
  std::vector<double> residual = capacity;
  std::map<int, std::vector<int>> unfrozen = flows;
  double level = 0;
  while (!unfrozen.empty()) {
    std::vector<int> crossings(capacity.size(), 0);
    for (const auto& [flow, links] : unfrozen) {
      for (const int link : links) crossings[static_cast<size_t>(link)] += 1;
    }
    double step = std::numeric_limits<double>::infinity();
    for (size_t link = 0; link < capacity.size(); ++link) {
      if (crossings[link] > 0) step = std::min(step, residual[link] / crossings[link]);
    }
    level += step;
    std::vector<bool> full(capacity.size(), false);
    for (size_t link = 0; link < capacity.size(); ++link) {
      residual[link] -= step * crossings[link];
      full[link] = crossings[link] > 0 && residual[link] <= 1e-9 * capacity[link];
    }
    for (auto it = unfrozen.begin(); it != unfrozen.end();) {
      const bool frozen = std::ranges::any_of(it->second, [&](int link) { return full[static_cast<size_t>(link)]; });
      if (!frozen) {
        ++it;
        continue;
      }
      rates[it->first] = level;
      it = unfrozen.erase(it);
    }
  }
  return rates;
}

TEST(FlowNetwork, RatesStayMaxMinFairAsRoutesAndLinkSetsComeAndGo) {
  // Random joins and leaves of routes (1 to 4 links) and of flows over three
  // link sets (8 to 12 links, some crossed twice; they share links with each
  // other and, now and then, with routes), settled at random
  // instants: after every settle each flow has the rate the definition
  // gives, and its finish time follows from the bytes it has left.
  std::mt19937 random(7);
  const std::vector<double> capacity{10, 4, 7, 10, 2.5, 12, 6, 9, 3, 10, 5, 8};
  const int links = static_cast<int>(capacity.size());
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  std::vector<std::vector<int>> sets;
  for (int s = 0; s < 3; ++s) {
    std::vector<int> set;
    for (int i = 0, n = 8 + pick(5); i < n; ++i) set.push_back(pick(8));  // links 0-7
    sets.push_back(set);
  }
  FlowNetwork network(capacity);
  std::vector<FlowNetwork::LinkSetId> set_ids;
  for (const auto& set : sets) set_ids.push_back(network.link_set(set));
  std::map<int, std::vector<int>> active;
  std::map<int, double> left;  // bytes at `now`, as the reference tracks them
  double now = 0;
  int checks = 0;
  for (int round = 0; round < 400; ++round) {
    const int joins_or_leaves = 1 + pick(3);
    for (int i = 0; i < joins_or_leaves; ++i) {
      if (!active.empty() && pick(5) < 2) {
        auto it = active.begin();
        std::advance(it, pick(static_cast<int>(active.size())));
        network.leave(it->first);
        left.erase(it->first);
        active.erase(it);
        continue;
      }
      const double bytes = 1 + pick(100);
      if (pick(2) == 0) {
        const int s = pick(3);
        const auto flow = network.join(now, set_ids[static_cast<size_t>(s)], bytes);
        active[flow] = sets[static_cast<size_t>(s)];
        left[flow] = bytes;
      } else {
        std::vector<int> route;
        // Links 5-11: the sets often have their links to themselves.
        for (int k = 0, n = 1 + pick(4); k < n; ++k) route.push_back(5 + pick(links - 5));
        const auto flow = network.join(now, route, bytes);
        active[flow] = route;
        left[flow] = bytes;
      }
    }
    network.settle(now);
    const std::map<int, double> expected = max_min_rates(capacity, active);
    for (const auto& [flow, rate] : expected) {
      ASSERT_NEAR(network.rate(flow), rate, 1e-9 * rate) << "round " << round << ", flow " << flow;
      ASSERT_NEAR(network.finish_time(flow), now + left[flow] / rate, 1e-6) << "round " << round;
      ++checks;
    }
    // Time moves on by less than any flow needs to finish.
    const double dt = 0.01 * (1 + pick(10));
    for (auto& [flow, bytes] : left) {
      bytes -= expected.at(flow) * dt;
      ASSERT_GT(bytes, 0) << "round " << round;
    }
    now += dt;
    // Drained flows are taken out before they would end.
    for (auto it = left.begin(); it != left.end();) {
      if (it->second > 12 * 0.11) {  // no rate exceeds the fastest link, 12
        ++it;
        continue;
      }
      network.leave(it->first);
      active.erase(it->first);
      it = left.erase(it);
    }
  }
  EXPECT_GT(checks, 2000);
}

}  // namespace
}  // namespace flow_network_test
}  // namespace splitscope
