// End to end: `splitscope collective` (nccl-tests' table), its JSON rows and its refusals.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace collective_test {
namespace {

TEST(CollectiveCommand, JsonRowsFollowNcclTestsDefinitions) {
  const CommandResult result = run_splitscope(
      "collective all-reduce --devices 4 --backend sim --machine h100-nvlink-8 --bytes 1K:4K,1M --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto document = nlohmann::json::parse(result.out);
  const auto& rows = document["rows"];
  ASSERT_EQ(rows.size(), 4u);  // 1K, 2K, 4K (the doubling range), then 1M
  const std::vector<int64_t> sizes{1024, 2048, 4096, 1 << 20};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row["op"], "all-reduce");
    EXPECT_EQ(row["devices"], 4);
    EXPECT_EQ(row["bytes"], sizes[i]);
    const double time_us = row["time_us"].get<double>();
    ASSERT_GT(time_us, 0);
    const double algbw = static_cast<double>(sizes[i]) / (time_us * 1e-6) / 1e9;
    EXPECT_NEAR(row["algbw_GBps"].get<double>(), algbw, 1e-9 * algbw);
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), algbw * 1.5, 1e-9 * algbw);  // 2(N-1)/N
  }
  EXPECT_EQ(document["backend"], "sim");
}

TEST(CollectiveCommand, TheSimulatorSaysWhetherNcclRunsTheTreeOrTheRing) {
  // 64 GPUs on 8 nodes: a small all-reduce pays the tree's 2·log2(8) network
  // hops instead of the ring's 16; a large one wants the ring's bandwidth.
  const CommandResult result = run_splitscope(
      "collective all-reduce --devices 64 --backend sim --machine 8x8-h100-ib --bytes 4K,1G --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto rows = nlohmann::json::parse(result.out)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["nccl"], "Tree/LL");
  EXPECT_EQ(rows[1]["nccl"], "Ring/Simple");
  // In one node the ring wins at every size; all-gather is never a tree.
  for (const char* args : {"all-reduce --devices 8 --machine h100-nvlink-8", "all-gather --devices 64 --machine 8x8-h100-ib"}) {
    const CommandResult other =
        run_splitscope(std::string("collective ") + args + " --backend sim --bytes 4K,1M,1G --json");
    ASSERT_EQ(other.exit_code, 0) << other.err;
    const auto document = nlohmann::json::parse(other.out);  // kept: the loop would outlive a temporary
    ASSERT_EQ(document["rows"].size(), 3u);
    for (const auto& row : document["rows"]) {
      EXPECT_EQ(row["nccl"].get<std::string>().rfind("Ring/", 0), 0u) << args << ": " << row.dump();
    }
  }
}

TEST(CollectiveCommand, MeasuresOnTheCpuBackendAndPrintsTheTable) {
  const CommandResult result = run_splitscope("collective send-recv -n 2 --backend cpu --bytes 4K,64K --repeat 2 -q");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("send-recv on 2 devices, measured on cpu"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("65536"), std::string::npos) << result.out;
}

TEST(CollectiveCommand, ReduceScatterAndBroadcastRunOnTheCpuBackendAndTheSimulator) {
  for (const std::string op : {"reduce-scatter", "broadcast"}) {
    const CommandResult cpu = run_splitscope("collective " + op + " -n 3 --backend cpu --bytes 1M --repeat 2 -q --json");
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    const auto measured = nlohmann::json::parse(cpu.out)["rows"];
    ASSERT_EQ(measured.size(), 1u);
    EXPECT_EQ(measured[0]["op"], op);
    EXPECT_EQ(measured[0]["bytes"], op == "broadcast" ? 1 << 20 : (1 << 20) / 12 * 12) << "whole floats, 3 each";
    const CommandResult sim =
        run_splitscope("collective " + op + " -n 4 --backend sim --machine h100-nvlink-8 --bytes 64M --json");
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const auto row = nlohmann::json::parse(sim.out)["rows"][0];
    const double factor = op == "broadcast" ? 1.0 : 0.75;  // nccl-tests: 1 and (N-1)/N
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), factor * row["algbw_GBps"].get<double>(),
                1e-9 * row["algbw_GBps"].get<double>());
  }
}

TEST(CollectiveCommand, RefusesWhatItCannotRunWithExitTwo) {
  for (const std::string args :
       {"collective all-to-all --backend sim --machine h100-nvlink-8", "collective all-reduce --devices 1 --backend sim "
        "--machine h100-nvlink-8", "collective all-reduce --bytes 1X --backend sim --machine h100-nvlink-8",
        "collective all-reduce --bytes 1M:1K --backend sim --machine h100-nvlink-8",
        "collective all-reduce --bytes 0 --backend sim --machine h100-nvlink-8",
        "collective all-gather --devices 4 --bytes 8 --backend sim --machine h100-nvlink-8",
        "collective all-reduce --batch 4 --backend sim --machine h100-nvlink-8",
        "collective all-reduce --devices 16 --backend sim --machine h100-nvlink-8"}) {
    const CommandResult result = run_splitscope(args);
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.out << result.err;
    EXPECT_FALSE(result.err.empty()) << args;
  }
}

}  // namespace
}  // namespace collective_test
}  // namespace splitscope::testing
