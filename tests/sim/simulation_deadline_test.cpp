// A simulation under a deadline (sim/engine/simulation_deadline.hpp): one that has
// passed stops it and says so, with no timeline to misread; one far off
// changes nothing, not even on a plan long enough to look at the clock.

#include <gtest/gtest.h>

#include <chrono>

#include "hand_plan.hpp"
#include "sim/engine/engine.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace simulation_deadline_test {
namespace {

using testing::HandPlan;

const char* const kNet = R"({"batch": 4, "input": [16], "layers": [
    {"type": "dense", "units": 16, "name": "fc1"},
    {"type": "dense", "units": 16, "name": "fc2"}]})";

/// `hops` compute ops of 1 GFLOP each, alternating between two devices with
/// a transfer between each two: about two events an op, so that a long one
/// crosses many of the engine's looks at the clock.
HandPlan ping_pong(int hops) {
  HandPlan hand(kNet, 2);
  int value = hand.input(hand.node("input"), 0, 256);
  for (int hop = 0; hop < hops; ++hop) {
    const int device = hop % 2;
    if (hop > 0) value = hand.transfer(value, device);
    value = hand.compute(hand.node(hop % 2 == 0 ? "fc1" : "fc2"), device, {value}, 1'000'000'000, 256);
  }
  return hand;
}

SimulationDeadline passed_deadline() { return SimulationDeadline(SimulationDeadline::Clock::now()); }

SimulationDeadline far_deadline() {
  return SimulationDeadline(SimulationDeadline::Clock::now() + std::chrono::hours(1));
}

TEST(SimulationDeadline, NoneNeverPasses) {
  EXPECT_FALSE(SimulationDeadline().exists());
  EXPECT_FALSE(SimulationDeadline().passed());
  EXPECT_TRUE(passed_deadline().passed());
  EXPECT_TRUE(far_deadline().exists());
  EXPECT_FALSE(far_deadline().passed());
}

TEST(SimulationDeadline, APassedDeadlineCutsTheSimulationOffWithoutATimeline) {
  const Simulator simulator(load_machine("h100-nvlink-8"));
  for (const int hops : {1, 2, 5000}) {
    const HandPlan hand = ping_pong(hops);
    EXPECT_FALSE(simulator.simulate(hand.plan(), passed_deadline()).has_value()) << hops << " hops";
    EXPECT_FALSE(simulate_plan_until(hand.plan(), simulator.topology(), simulator.costs(), passed_deadline()))
        << hops << " hops";
    // The same plan without the deadline runs to its end.
    EXPECT_EQ(simulator.simulate(hand.plan()).spans.size(), static_cast<size_t>(2 * hops - 1)) << hops;
  }
}

TEST(SimulationDeadline, AFarDeadlineGivesTheSameTimelineAsNone) {
  const Simulator simulator(load_machine("h100-nvlink-8"));
  // 5,000 hops: about 10,000 events, ten looks at the clock.
  const HandPlan hand = ping_pong(5000);
  const Timeline alone = simulator.simulate(hand.plan());
  const std::optional<Timeline> timed = simulator.simulate(hand.plan(), far_deadline());
  ASSERT_TRUE(timed.has_value());
  EXPECT_EQ(timed->makespan_us(), alone.makespan_us());
  ASSERT_EQ(timed->spans.size(), alone.spans.size());
  for (size_t i = 0; i < alone.spans.size(); ++i) {
    EXPECT_EQ(timed->spans[i].start_us, alone.spans[i].start_us) << i;
    EXPECT_EQ(timed->spans[i].end_us, alone.spans[i].end_us) << i;
  }
  // 5,000 ops of 1 GFLOP one after another: at least 5,000 times one's time alone.
  EXPECT_GT(alone.makespan_us(), 5000 * alone.spans.front().duration_us() * 0.999);
}

}  // namespace
}  // namespace simulation_deadline_test
}  // namespace splitscope
