// The memory the Simulator reports, as the report's fit check reads it
// (report/memory_fit.hpp). Apart from simulator_test.cpp because it links the
// report library, which the sanitizer build of the simulator's tests leaves
// out (scripts/sanitize).

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "report/memory_fit.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace simulator_memory_fit_test {
namespace {

using testing::HandPlan;
using testing::switch_topology;
using testing::test_machine;

TEST(Simulator, GivesTheReportTheMemoryToSayWhichDeviceDoesNotFit) {
  HandPlan hand(R"({"batch": 4, "input": [16], "layers": [
      {"type": "dense", "units": 16, "name": "fc1"},
      {"type": "dense", "units": 16, "name": "fc2"}]})",
                2);
  const int x = hand.input(hand.node("input"), 0, 256);
  const int h = hand.compute(hand.node("fc1"), 0, {x}, 1'000'000, 256);
  hand.compute(hand.node("fc2"), 1, {hand.transfer(h, 1)}, 1'000'000, 256);
  hand.set_memory_peak(0, 10LL << 30);
  hand.set_memory_peak(1, 100LL << 30);  // on an 80 GiB device
  Simulator simulator(test_machine(2, switch_topology(10, 0)));
  const RunResult result = simulator.run(hand.plan(), {});
  EXPECT_EQ(result.info.device_memory_bytes, (std::vector<int64_t>{80LL << 30, 80LL << 30}));
  const MemoryFit fit = check_memory_fit(hand.plan(), result.info.device_memory_bytes);
  EXPECT_TRUE(fit.checked);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.device, 1);
  EXPECT_EQ(fit.needed_bytes, 100LL << 30);
  EXPECT_EQ(fit.available_bytes, 80LL << 30);
  EXPECT_NE(fit.problem.find("device 1 needs"), std::string::npos) << fit.problem;
  // 10 GiB fits.
  hand.set_memory_peak(1, 10LL << 30);
  EXPECT_TRUE(check_memory_fit(hand.plan(), simulator.run(hand.plan(), {}).info.device_memory_bytes).fits);
}

}  // namespace
}  // namespace simulator_memory_fit_test
}  // namespace splitscope
