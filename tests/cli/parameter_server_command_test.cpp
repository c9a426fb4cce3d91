// End to end: `splitscope run --train --strategy ps` on the cpu backend,
// its report, and its refusals.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace parameter_server_command_test {
namespace {

TEST(ParameterServerCommand, AsyncRunReportsStalenessLossCurveAndShards) {
  const std::string dir = fresh_temp_dir("ps-async");
  const CommandResult result =
      run_splitscope("run mlp-small --batch 32 --train --strategy ps --async --devices 3 --ps 2 --steps 5 --report " +
                     dir + "/r.json --trace " + dir + "/t.json --html " + dir + "/p.html");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("parameter servers: async, 3 workers, 2 shards"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("staleness: mean"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["strategy"], "ps");
  EXPECT_EQ(report["devices"], 5);  // 3 workers, 2 shards
  const auto& train = report["train"];
  const auto& ps = train["parameter_server"];
  EXPECT_EQ(ps["mode"], "async");
  EXPECT_EQ(ps["gradients_pushed"], 15);
  EXPECT_EQ(ps["gradients_applied"].get<int>() + ps["gradients_dropped"].get<int>(), 30);  // 15 gradients x 2 shards
  int64_t counted = 0;
  for (const auto& count : train["staleness"]["histogram"]) counted += count.get<int64_t>();
  EXPECT_EQ(counted, ps["gradients_applied"].get<int64_t>());
  // Only the other two workers' gradients can land between a pull and its push: at most 2 x 5 steps.
  EXPECT_LE(train["staleness"]["max"].get<int>(), 2 * 5);
  EXPECT_EQ(ps["loss_curve"].size(), train["losses"].size());
  EXPECT_EQ(ps["shard_bytes"].size(), 2u);
  const std::string html = read_text_file(dir + "/p.html");
  EXPECT_NE(html.find("Loss against wall time"), std::string::npos);
  EXPECT_NE(html.find("async (3 workers)"), std::string::npos);
  const int validated = run_script("validate-report", dir + "/r.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the ps report does not match src/report/schema";
}

TEST(ParameterServerCommand, PlanShowsTheShardsAsDevicesAfterTheWorkers) {
  const CommandResult plan = run_splitscope("plan mlp-small --train --strategy ps --devices 3 --ps 2 --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto doc = nlohmann::json::parse(plan.out);
  EXPECT_EQ(doc["devices"], 5);
  EXPECT_EQ(doc["parameter_servers"], 2);
  EXPECT_EQ(doc["collectives"]["count"], 0);  // no all-reduce: the shards aggregate
}

TEST(ParameterServerCommand, SyncPassesCheckAgainstSingle) {
  const CommandResult result =
      run_splitscope("run mlp-small --batch 16 --train --strategy ps --devices 2 --steps 3 --check");
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  EXPECT_NE(result.out.find("check: max relative error"), std::string::npos) << result.out;
}

TEST(ParameterServerCommand, SimulatedAsyncWorkersAreAboutNMinusOneStale) {
  const std::string dir = fresh_temp_dir("ps-sim");
  const CommandResult result =
      run_splitscope("run mlp-small --train --strategy ps --async --devices 4 --steps 20 --backend sim --machine "
                     "h100-nvlink-8 --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  EXPECT_EQ(report["measured"], false);
  EXPECT_TRUE(report["train"]["losses"].is_null());  // the simulator computes no loss
  EXPECT_NEAR(report["train"]["staleness"]["mean"].get<double>(), 3.0, 0.6);
  EXPECT_EQ(report["train"]["parameter_server"]["gradients_applied"], 80);
}

TEST(ParameterServerCommand, PullsAndPushesAreDataMovementAndOnTheCriticalPath) {
  // Issue 54 item 8: this run said "no data crosses devices" and put its step on the critical path as
  // "compute 657.1 us + waiting 8.106 ms" while each worker pulled and pushed 232.56 MiB.
  const std::string dir = fresh_temp_dir("ps-movement");
  const CommandResult result =
      run_splitscope("run cnn --batch 16 --train --strategy ps --devices 4 --steps 3 --backend sim --machine "
                     "h100-nvlink-8 --quiet --report " + dir + "/r.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("no data crosses devices"), std::string::npos) << result.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  const int64_t shard = report["train"]["parameter_server"]["shard_bytes"][0].get<int64_t>();
  EXPECT_GT(shard, 200ll << 20);
  const auto& kinds = report["transfers"]["by_kind"];
  ASSERT_EQ(kinds.size(), 2u) << kinds.dump();
  for (const auto& kind : kinds) {
    EXPECT_EQ(kind["count"], 4) << kind.dump();  // one per worker a step
    EXPECT_EQ(kind["bytes"].get<int64_t>(), 4 * shard) << kind.dump();
  }
  EXPECT_EQ(kinds[0]["kind"], "pull");
  EXPECT_EQ(kinds[1]["kind"], "push");
  EXPECT_EQ(report["transfers"]["bytes"].get<int64_t>(), 8 * shard);
  // The step: a worker pulls, computes, pushes; the shard then updates. Sync workers are alike, so the
  // path is one worker's pull and push (transfer) and its compute with the shard's update (compute).
  const auto& path = report["critical_path"];
  EXPECT_NEAR(path["transfer_ms"].get<double>(),
              (kinds[0]["time_ms"].get<double>() + kinds[1]["time_ms"].get<double>()) / 4, 1e-9);
  EXPECT_NEAR(path["compute_ms"].get<double>(),
              report["per_device"][0]["compute_ms"].get<double>() + report["per_device"][4]["compute_ms"].get<double>(),
              1e-9);
  EXPECT_NEAR(path["length_ms"].get<double>(), report["makespan_ms"]["median"].get<double>(), 1e-9);
  const int validated = run_script("validate-report", dir + "/r.json");
  if (validated == kSkipExitCode) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it)";
  EXPECT_EQ(validated, 0) << "the ps report does not match src/report/schema";
}

TEST(ParameterServerCommand, ImpossibleOptionsAreRefusedWithWhatToDo) {
  const std::string dir = fresh_temp_dir("ps-refusals");
  const std::string report = " --report " + dir + "/r.json";
  struct Case {
    std::string args;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"run mlp-small --train --strategy data --devices 2 --ps 2", 2, "--ps"},
      {"run mlp-small --train --strategy ps --devices 2 --spare 1 --async", 2, "--spare"},
      {"run mlp-small --train --strategy ps --devices 3 --spare 3", 2, "--spare"},
      {"run mlp-small --train --strategy ps --devices 2 --staleness-lr", 2, "--async"},
      {"run mlp-small --strategy ps --devices 2", 2, "--train"},
      {"run mlp-small --train --strategy ps --devices 2 --ps 99", 2, "weight sets"},
      {"run mlp-small --train --strategy ps --devices 2 --async --straggler 2:10", 2, "is not one of"},
      {"run mlp-small --train --strategy ps --devices 2 --backend sim --machine h100-nvlink-8 --placement topology", 2,
       "--placement"},
      {"compare mlp-small --train --devices 2 --strategies data,ps", 2, "splitscope run"},
      // -1 was an internal sentinel for "no bound", accepted where -5 was refused
      {"run mlp-small --train --strategy ps --devices 2 --async --max-staleness -1", 2, "must be 0 or more"},
      // spare replicas are a mode of their own, as --async is
      {"run mlp-small --train --strategy ps --devices 2 --sync --spare 1", 2, "drop --sync"},
      // "R must be in [1, 0]"
      {"run mlp-small --train --strategy ps --devices 1 --spare 1", 2, "needs 2 or more workers"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_splitscope(c.args + report);
    EXPECT_EQ(result.exit_code, c.exit_code) << c.args << "\n" << result.err;
    EXPECT_NE(result.err.find(c.says), std::string::npos) << c.args << "\n" << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << c.args;
  }
}

}  // namespace
}  // namespace parameter_server_command_test
}  // namespace splitscope::testing
