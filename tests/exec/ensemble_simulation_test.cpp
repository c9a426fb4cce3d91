// Ensembles on the simulator: a device runs its members in turn, in closed form.

#include <gtest/gtest.h>

#include <algorithm>

#include "ensemble_members.hpp"
#include "exec/ensemble_run.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {
namespace ensemble_simulation_test {
namespace {

using testing_support::member;
using testing_support::member_graph;
using testing_support::quick_run;

TEST(Ensemble, OnTheSimulatorADeviceRunsItsMembersInTurn) {
  // Three members on two devices: device 0 runs members 0 and 2 in turn, so
  // member 2 answers at t0 + t2; member 1 (device 1) after its 0.5 ms delay at 0.5 + t1.
  const Machine machine = load_machine("h100-nvlink-8");
  const auto a = member_graph(64), b = member_graph(128), c = member_graph(256);
  const std::vector<EnsembleMember> members{member(a, 0), member(b, 1, 0.5), member(c, 0)};
  const EnsembleResult result =
      run_ensemble(members, 2, [&](int) { return std::make_unique<Simulator>(machine); }, quick_run(), std::nullopt);
  EXPECT_FALSE(result.measured);
  const double t0 = result.members[0].alone_ms, t1 = result.members[1].alone_ms, t2 = result.members[2].alone_ms;
  ASSERT_GT(t0, 0.0);
  EXPECT_NEAR(result.members[0].latency_ms, t0, 1e-9);
  EXPECT_NEAR(result.members[1].latency_ms, 0.5 + t1, 1e-9);
  EXPECT_NEAR(result.members[2].latency_ms, t0 + t2, 1e-9);
  EXPECT_NEAR(result.ensemble_latency_ms, std::max(0.5 + t1, t0 + t2), 1e-9);
  EXPECT_NEAR(result.sequential_ms, t0 + t1 + t2, 1e-9);
}

}  // namespace
}  // namespace ensemble_simulation_test
}  // namespace splitscope
