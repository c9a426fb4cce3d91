// The Simulator as an Executor: what it reports, what it refuses,
// determinism (the memory it reports to the report's fit check:
// simulator_memory_fit_test.cpp).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace simulator_test {
namespace {

using testing::HandPlan;
using testing::host_staged_topology;
using testing::switch_topology;
using testing::test_machine;

const char* const kNet = R"({"batch": 4, "input": [16], "layers": [
    {"type": "dense", "units": 16, "name": "fc1"},
    {"type": "dense", "units": 16, "name": "fc2"}]})";

HandPlan two_device_plan() {
  HandPlan hand(kNet, 2);
  const int x = hand.input(hand.node("input"), 0, 256);
  const int h = hand.compute(hand.node("fc1"), 0, {x}, 1'000'000, 256);
  hand.compute(hand.node("fc2"), 1, {hand.transfer(h, 1)}, 1'000'000, 256);
  return hand;
}

TEST(Simulator, ReportsOneTimelineAndWhatItRanOn) {
  const HandPlan hand = two_device_plan();
  Simulator simulator(load_machine("h100-nvlink-8"));
  RunOptions options;
  options.repeats = 5;
  int calls = 0;
  options.on_repeat = [&](int index, int repeats) {
    EXPECT_EQ(index, 0);
    EXPECT_EQ(repeats, 1);
    ++calls;
  };
  const RunResult result = simulator.run(hand.plan(), options);
  EXPECT_EQ(simulator.name(), "sim");
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(result.timelines.size(), 1u);  // deterministic: repeats would be identical
  EXPECT_EQ(result.timelines[0].spans.size(), 3u);
  EXPECT_TRUE(result.output.data.empty());
  EXPECT_EQ(result.info.backend, "sim");
  EXPECT_FALSE(result.info.measured);
  EXPECT_EQ(result.info.device_mode, "simulated");
  EXPECT_EQ(result.info.machine_name, "h100-nvlink-8");
  EXPECT_EQ(result.info.device_name, "NVIDIA H100 SXM5 80GB");
  EXPECT_EQ(result.info.device_memory_bytes, (std::vector<int64_t>{80LL << 30, 80LL << 30}));
  bool topology_fact = false;
  for (const auto& [key, value] : result.info.facts) {
    topology_fact = topology_fact || (key == "topology" && value.rfind("switch: 8 devices", 0) == 0);
  }
  EXPECT_TRUE(topology_fact);
}

TEST(Simulator, APooledMachineGivesAPlanOnFewerDevicesTheIdleShares) {
  // 4 devices of 1 TFLOP/s pooled (a CPU of 4 cores): a plan on 1 device gets
  // all 4 shares, on 2 devices 2 each, on 3 devices 1 each (whole shares, as
  // the cpu backend's cores / devices threads).
  Machine machine = test_machine(4, switch_topology(10, 0));
  machine.pooled = true;
  Simulator simulator(machine);
  for (const auto& [devices, shares] : std::vector<std::pair<int, int>>{{1, 4}, {2, 2}, {3, 1}, {4, 1}}) {
    HandPlan hand(kNet, devices);
    hand.compute(hand.node("fc1"), 0, {hand.input(hand.node("input"), 0, 256)}, 1'000'000'000, 256);
    const RunResult result = simulator.run(hand.plan(), {});
    // 1e9 FLOPs at shares TFLOP/s
    EXPECT_NEAR(result.timelines[0].makespan_us(), 1000.0 / shares, 1e-9) << devices << " devices";
    EXPECT_EQ(result.info.device_memory_bytes.front(), shares * (80LL << 30));
  }
  // Not pooled: the same 1 ms on any number of devices.
  machine.pooled = false;
  HandPlan one(kNet, 1);
  one.compute(one.node("fc1"), 0, {one.input(one.node("input"), 0, 256)}, 1'000'000'000, 256);
  EXPECT_NEAR(simulate(one.plan(), machine).makespan_us(), 1000.0, 1e-9);
}

TEST(Simulator, APooledMachinesOpTimesAreThoseOfThePlansShareCount) {
  Machine machine = test_machine(2, switch_topology(10, 0));
  machine.pooled = true;
  machine.calibration.op_times_us = {{"a", 10}, {pooled_op_key("a", 2), 6}, {"b", 20}};
  EXPECT_EQ(pooled_op_key("a", 1), "a");
  EXPECT_EQ(pooled_op_key("a", 2), "a|shares=2");
  // A plan on 1 device has 2 shares: a's two-share time under its own name,
  // and no time for b (measured on one share only, it does not describe two).
  const Machine one = machine_for_plan(machine, 1);
  EXPECT_EQ(one.calibration.op_times_us, (std::map<std::string, double>{{"a", 6}}));
  // A plan on 2 devices has one share each: the table as it is.
  EXPECT_EQ(machine_for_plan(machine, 2).calibration.op_times_us, machine.calibration.op_times_us);
}

TEST(Simulator, RefusesAPlanWithMoreDevicesThanTheMachine) {
  HandPlan hand(kNet, 16);
  hand.compute(hand.node("fc1"), 0, {hand.input(hand.node("input"), 0, 256)}, 1000, 256);
  Simulator simulator(load_machine("h100-nvlink-8"));
  try {
    simulator.run(hand.plan(), {});
    FAIL();
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("16 devices"), std::string::npos) << message;
    EXPECT_NE(message.find("'h100-nvlink-8' has 8"), std::string::npos) << message;
  }
}

TEST(Simulator, RefusesAnInvalidMachine) {
  Machine machine = test_machine(2, switch_topology(10, 0));
  machine.device.memory_bandwidth_gbps = 0;
  EXPECT_THROW(Simulator{machine}, InputError);
}

TEST(Simulator, TheSameInputsGiveTheSameTimelineBitForBit) {
  // Contention everywhere: 6 devices behind 2 buses, transfers crossing and an
  // all-reduce and an all-gather overlapping them.
  HandPlan hand(kNet, 6);
  std::vector<int> partial;
  for (int d = 0; d < 6; ++d) {
    const int x = hand.input(hand.node("input"), d, 1000 + 37 * d);
    partial.push_back(hand.compute(hand.node("fc1"), d, {x}, 1'000'000 * (d + 1), 777'777));
    hand.transfer(partial.back(), (d + 3) % 6);
  }
  hand.collective(CollectiveKind::kAllReduce, partial);
  hand.collective(CollectiveKind::kAllGather, partial);
  const Machine machine = test_machine(6, host_staged_topology(3, 12.3, 7.7), 0.37, 1.3);
  const Timeline first = simulate(hand.plan(), machine);
  const Timeline second = simulate(hand.plan(), machine);
  ASSERT_EQ(first.spans.size(), second.spans.size());
  for (size_t i = 0; i < first.spans.size(); ++i) {
    const Span& a = first.spans[i];
    const Span& b = second.spans[i];
    EXPECT_TRUE(a.device == b.device && a.lane == b.lane && a.kind == b.kind && a.op == b.op &&
                a.start_us == b.start_us && a.end_us == b.end_us && a.flops == b.flops &&
                a.bytes == b.bytes)
        << "span " << i;
  }
  // Spans come out in op order, and every op has its spans.
  EXPECT_EQ(first.spans.size(), 6u * 2 + 6 + 6);
  for (size_t i = 1; i < first.spans.size(); ++i) EXPECT_LE(first.spans[i - 1].op, first.spans[i].op);
}

TEST(Simulator, AZeroByteTransferPaysOnlyTheLatency) {
  HandPlan hand(kNet, 2);
  hand.transfer(hand.input(hand.node("input"), 0, 0), 1);
  const Timeline timeline = simulate(hand.plan(), test_machine(2, switch_topology(10, 7)));
  EXPECT_NEAR(timeline.spans.at(0).end_us, 7.0, 1e-9);
}

TEST(Simulator, ALaneHandOffStartsTheRunAndFollowsEveryCopyIntoACompute) {
  // fc1 on device 0, a 256-byte transfer, fc2 on device 1: 1e6 FLOPs each at
  // 1 TFLOP/s = 1 µs, the copy 7 µs + 256 B / 10 GB/s = 7.0256 µs. With a
  // lane hand-off of 3 µs the run starts at 3 and fc2 starts 3 after the copy:
  // 3 + 1 + 7.0256 + 3 + 1 = 15.0256 µs, against 9.0256 without.
  const HandPlan hand = two_device_plan();
  Machine machine = test_machine(2, switch_topology(10, 7));
  EXPECT_NEAR(simulate(hand.plan(), machine).makespan_us(), 9.0256, 1e-9);
  machine.device.lane_handoff_us = 3;
  const Timeline timeline = simulate(hand.plan(), machine);
  EXPECT_NEAR(timeline.makespan_us(), 15.0256, 1e-9);
  EXPECT_NEAR(timeline.spans.at(0).start_us, 3.0, 1e-9);   // fc1
  EXPECT_NEAR(timeline.spans.at(1).start_us, 4.0, 1e-9);   // the copy: a compute op's output, no hand-off
  EXPECT_NEAR(timeline.spans.at(2).start_us, 14.0256, 1e-9);  // fc2
}

TEST(Simulator, ACopiedInputsHandOffOverlapsItsDevicesEarlierOp) {
  // As above (run from 3, fc1 on device 0 3-4, the copy 4-11.0256, handed to
  // device 1's lane at 14.0256), with device 1 first running an op of
  // `flops` on its own input from 3: fc2 starts at the later of its end and
  // 14.0256.
  for (const auto& [flops, fc2_start] : {std::pair{20'000'000, 23.0}, std::pair{5'000'000, 14.0256}}) {
    HandPlan hand(kNet, 2);
    const int x = hand.input(hand.node("input"), 0, 256);
    const int h = hand.compute(hand.node("fc1"), 0, {x}, 1'000'000, 256);
    hand.compute(hand.node("fc1"), 1, {hand.input(hand.node("input"), 1, 256)}, flops, 256);
    hand.compute(hand.node("fc2"), 1, {hand.transfer(h, 1)}, 1'000'000, 256);
    Machine machine = test_machine(2, switch_topology(10, 7));
    machine.device.lane_handoff_us = 3;
    const Timeline timeline = simulate(hand.plan(), machine);
    ASSERT_EQ(timeline.spans.size(), 4u);
    EXPECT_NEAR(timeline.spans[1].start_us, 3.0, 1e-9) << flops;  // ops: fc1, fc1 on device 1, the copy, fc2
    EXPECT_NEAR(timeline.spans[1].end_us, 3.0 + static_cast<double>(flops) / 1e6, 1e-9) << flops;
    EXPECT_NEAR(timeline.spans[3].start_us, fc2_start, 1e-9) << flops;
    EXPECT_NEAR(timeline.spans[3].end_us, fc2_start + 1, 1e-9) << flops;
  }
}

TEST(Simulator, AComputeOpMissingFromTheScheduleIsAPlanBug) {
  HandPlan hand = two_device_plan();
  Plan plan = hand.plan();
  plan.schedule[1].clear();
  EXPECT_THROW(simulate(plan, test_machine(2, switch_topology(10, 0))), std::logic_error);
}

/// The message of the logic_error simulating `plan` on two devices throws ("" if none).
std::string plan_bug(const Plan& plan) {
  try {
    simulate(plan, test_machine(2, switch_topology(10, 0)));
  } catch (const std::logic_error& error) {
    return error.what();
  }
  return "";
}

TEST(Simulator, AScheduleListingAnOpTwiceOrElsewhereIsAPlanBugThatNamesIt) {
  const Plan plan = two_device_plan().plan();  // fc1 (op 0) on device 0; the copy (op 1); fc2 (op 2) on device 1
  Plan twice = plan;
  twice.schedule[0].push_back(0);
  EXPECT_NE(plan_bug(twice).find("op 0 (fc1) appears twice in the schedules"), std::string::npos) << plan_bug(twice);
  Plan elsewhere = plan;
  elsewhere.schedule[1].insert(elsewhere.schedule[1].begin(), 0);
  elsewhere.schedule[0].clear();
  EXPECT_NE(plan_bug(elsewhere).find("the schedule of device 1 lists op 0 (fc1), which is not a compute op there"),
            std::string::npos)
      << plan_bug(elsewhere);
  Plan copy = plan;
  copy.schedule[1].push_back(1);
  EXPECT_NE(plan_bug(copy).find("which is not a compute op there"), std::string::npos) << plan_bug(copy);
  Plan unknown = plan;
  unknown.schedule[1].push_back(7);
  EXPECT_NE(plan_bug(unknown).find("the schedule of device 1 lists op 7, which the plan lacks"), std::string::npos)
      << plan_bug(unknown);
  Plan missing = plan;
  missing.schedule[1].clear();
  EXPECT_NE(plan_bug(missing).find("compute op 2 (fc2) is in no schedule"), std::string::npos) << plan_bug(missing);
}

TEST(Simulator, OpsOutOfDataFlowOrderOrAValueWrittenTwiceAreAPlanBugThatNamesIt) {
  // fc1 (op 0) writes value h; the copy (op 1) reads h and writes h' on device 1; fc2 (op 2) reads h'.
  const Plan plan = two_device_plan().plan();
  const int h = plan.ops[0].outputs.at(0);
  const int copied = plan.ops[1].outputs.at(0);
  Plan twice = plan;
  twice.ops[2].outputs.push_back(copied);  // fc2 also claims the copy's value
  EXPECT_NE(plan_bug(twice).find(fmt::format("value {} is written twice (again by op 2)", copied)),
            std::string::npos)
      << plan_bug(twice);
  // The copy reads fc1's output, but fc1 now comes after it: the engine must not take h for a network input.
  Plan reordered = plan;
  reordered.ops[0].outputs.clear();
  reordered.ops[2].outputs.push_back(h);
  EXPECT_NE(plan_bug(reordered).find(fmt::format("op 2 writes value {}, which an op before it reads", h)),
            std::string::npos)
      << plan_bug(reordered);
}

TEST(Simulator, AScheduleOrderAgainstTheDataFlowStallsAndSaysSo) {
  // Device 0 is told to run fc2 (which needs fc1's output) before fc1.
  HandPlan hand(kNet, 1);
  const int x = hand.input(hand.node("input"), 0, 256);
  const int h = hand.compute(hand.node("fc1"), 0, {x}, 1000, 256);
  hand.compute(hand.node("fc2"), 0, {h}, 1000, 256);
  Plan plan = hand.plan();
  std::swap(plan.schedule[0][0], plan.schedule[0][1]);
  try {
    simulate(plan, test_machine(1, switch_topology(10, 0)));
    FAIL();
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("the simulation stalled"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace simulator_test
}  // namespace splitscope
