// mpirun -np N splitscope run|compare ... --launcher mpi, on this host: the
// ranks compute what the one-process cpu run computes (outputs, losses), only
// rank 0 prints and writes, the merged timeline is whole, and a failing or
// late rank ends the job in bounded time (docs/mpi.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../cli/cli_test_support.hpp"
#include "util/npy.hpp"

namespace splitscope::testing {
namespace mpi_launch_test {
namespace {

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

/// mpirun as CI runs it: as root where the tests are root (OpenMPI refuses otherwise).
std::string mpirun(int ranks) {
  std::string line = "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                     "mpirun -np " + std::to_string(ranks);
  return line;
}

class MpiLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_mpirun()) GTEST_SKIP() << "mpirun is not installed (scripts/setup installs OpenMPI)";
    if (run_splitscope("--version").out.find("no mpi") != std::string::npos) {
      GTEST_SKIP() << "this splitscope was built without MPI (meson option mpi)";
    }
  }
};

NpyArray read_npy(const std::string& path) { return decode_npy(read_text_file(path), path); }

/// Largest |a - b| / max(1, |b|) over the elements.
double max_relative_difference(const NpyArray& a, const NpyArray& b) {
  EXPECT_EQ(a.shape, b.shape);
  double worst = 0;
  for (size_t i = 0; i < std::min(a.data.size(), b.data.size()); ++i) {
    worst = std::max(worst, std::abs(double(a.data[i]) - b.data[i]) / std::max(1.0, std::abs(double(b.data[i]))));
  }
  return worst;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

void expect_same_output_as_one_process(int ranks, const std::string& network, const std::string& strategy) {
  SCOPED_TRACE(network + " " + strategy + " on " + std::to_string(ranks) + " ranks");
  const std::string dir = fresh_temp_dir("mpi-out");
  const std::string common = network + " --strategy " + strategy + " --devices " + std::to_string(ranks) +
                             " --repeat 1 --warmup 0 --quiet --save-output ";
  const CommandResult launched = run_splitscope_under(mpirun(ranks), "run " + common + dir + "/mpi.npy --launcher mpi");
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  EXPECT_EQ(count_of(launched.out, "makespan:"), 1u) << "only rank 0 prints:\n" << launched.out;
  EXPECT_NE(launched.out.find("cpu (mpi)"), std::string::npos) << launched.out;
  const CommandResult alone = run_splitscope("run " + common + dir + "/one.npy");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_LE(max_relative_difference(read_npy(dir + "/mpi.npy"), read_npy(dir + "/one.npy")), 1e-5);
}

TEST_F(MpiLaunch, EveryInferenceSplitOnTwoRanksComputesTheOneProcessOutput) {
  for (const char* strategy : {"horizontal", "pipeline", "vertical", "tensor", "data"}) {
    expect_same_output_as_one_process(2, "mlp-small", strategy);
    expect_same_output_as_one_process(2, "cnn-small", strategy);
  }
  expect_same_output_as_one_process(2, "resnet-small", "branches");  // fan-out and fan-in across ranks
}

TEST_F(MpiLaunch, ThreeOversubscribedRanksComputeTheOneProcessOutput) {
  for (const char* strategy : {"pipeline", "vertical", "tensor"}) expect_same_output_as_one_process(3, "mlp-small", strategy);
  expect_same_output_as_one_process(3, "lstm-small", "horizontal");
}

TEST_F(MpiLaunch, DataParallelTrainingTakesTheOneProcessSteps) {
  const std::string dir = fresh_temp_dir("mpi-train");
  const std::string common = "run mlp-small --strategy data --devices 2 --train --steps 3 --quiet --report ";
  const CommandResult launched = run_splitscope_under(mpirun(2), common + dir + "/mpi.json --save-output " + dir +
                                                                     "/mpi.npy --launcher mpi");
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  const CommandResult alone = run_splitscope(common + dir + "/one.json --save-output " + dir + "/one.npy");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const auto mpi = nlohmann::json::parse(read_text_file(dir + "/mpi.json"));
  const auto one = nlohmann::json::parse(read_text_file(dir + "/one.json"));
  const auto& mpi_losses = mpi["train"]["losses"];
  const auto& one_losses = one["train"]["losses"];
  ASSERT_EQ(mpi_losses.size(), 3u);
  ASSERT_EQ(one_losses.size(), 3u);
  for (size_t step = 0; step < 3; ++step) {
    EXPECT_NEAR(mpi_losses[step].get<double>(), one_losses[step].get<double>(),
                1e-5 * std::abs(one_losses[step].get<double>()))
        << "step " << step;
  }
  EXPECT_LT(mpi_losses[2].get<double>(), mpi_losses[0].get<double>()) << "the steps train";
  // The output after three updates: the weights went the same way.
  EXPECT_LE(max_relative_difference(read_npy(dir + "/mpi.npy"), read_npy(dir + "/one.npy")), 1e-5);
}

TEST_F(MpiLaunch, RankZeroWritesOneReportOfTheMergedTimeline) {
  const std::string dir = fresh_temp_dir("mpi-report");
  const CommandResult launched =
      run_splitscope_under(mpirun(2), "run mlp-small --strategy pipeline --devices 2 --repeat 2 --quiet --launcher mpi "
                                      "--report " + dir + "/r.json --trace " + dir + "/t.json");
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/r.json"));
  const auto& run = report;  // a run report is one run's object
  EXPECT_EQ(run["device_mode"], "mpi");
  const std::string ranks = run["machine"]["facts"]["ranks"];
  EXPECT_EQ(ranks.rfind("0 ", 0), 0u) << ranks;
  EXPECT_NE(ranks.find(", 1 "), std::string::npos) << ranks;
  // Every span of either rank lies inside its run: the clocks were aligned.
  const auto trace = nlohmann::json::parse(read_text_file(dir + "/t.json"));
  const double longest_us =
      std::max(run["makespan_ms"]["max"].get<double>(), run["baseline_makespan_ms"].get<double>()) * 1000;
  int spans = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    const double start = event["ts"].get<double>();
    const double end = start + event["dur"].get<double>();
    EXPECT_GE(start, 0.0) << event.dump();
    EXPECT_GE(end, start) << event.dump();
    EXPECT_LE(end, longest_us + 1.0) << event.dump();
    ++spans;
  }
  EXPECT_GT(spans, 0);
}

TEST_F(MpiLaunch, AStragglerRankStartsItsWorkLate) {
  const std::string dir = fresh_temp_dir("mpi-straggler");
  const CommandResult launched =
      run_splitscope_under(mpirun(2), "run mlp-small --strategy data --devices 2 --repeat 1 --warmup 0 --quiet "
                                      "--launcher mpi --straggler 1:300 --trace " + dir + "/t.json");
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  const auto trace = nlohmann::json::parse(read_text_file(dir + "/t.json"));
  // The delay is inside the held-back device's first op (as on the cpu backend).
  std::map<int, double> longest;  // device (trace pid) -> its longest compute span, µs
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X" || event.value("cat", "") != "compute") continue;
    double& top = longest[event["pid"].get<int>()];
    top = std::max(top, event["dur"].get<double>());
  }
  ASSERT_EQ(longest.size(), 2u) << trace.dump().substr(0, 400);
  EXPECT_LT(longest[0], 300'000.0);  // rank 0 is not held back
  EXPECT_GE(longest[1], 300'000.0);  // rank 1 sleeps 300 ms in its first op
}

TEST_F(MpiLaunch, ARankPastItsDeadlineEndsTheJobWithItsReason) {
  const std::string dir = fresh_temp_dir("mpi-late");
  const auto started = std::chrono::steady_clock::now();
  const CommandResult late =
      run_splitscope_under(mpirun(2), "run mlp-small --strategy pipeline --devices 2 --launcher mpi --quiet "
                                      "--timeout-ms 0.001 --report " + dir + "/r.json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(late.exit_code, 0);
  EXPECT_NE(late.err.find("error: rank "), std::string::npos) << late.err;
  EXPECT_NE(late.err.find("deadline"), std::string::npos) << late.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << "no partial report";
  EXPECT_LT(seconds, 60.0);
}

TEST_F(MpiLaunch, AKilledRankEndsTheJob) {
  const char* bin = std::getenv("SPLITSCOPE_BIN");
  ASSERT_NE(bin, nullptr);
  const std::string dir = fresh_temp_dir("mpi-killed");
  const std::string script = dir + "/killed.sh";
  // Rank 1 is killed a second into a run of endless repeats.
  std::string text = "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep 1; kill -9 $$) & fi\nexec ";
  text += std::string(bin) + " run mlp-small --strategy pipeline --devices 2 --launcher mpi --quiet --repeat 1000000 "
                             "--report " + dir + "/r.json\n";
  {
    FILE* file = std::fopen(script.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(text.c_str(), file);
    std::fclose(file);
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const auto started = std::chrono::steady_clock::now();
  const int status = std::system(("timeout 120 " + mpirun(2) + " " + script + " >/dev/null 2>&1").c_str());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(status, 0);
  EXPECT_LT(seconds, 60.0) << "the other rank must not wait for ever";
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));
}

TEST_F(MpiLaunch, RefusesWhatItCannotRun) {
  const CommandResult few = run_splitscope_under(mpirun(2), "run mlp-small --strategy pipeline --devices 3 --launcher mpi");
  EXPECT_EQ(few.exit_code, 2);  // rank 0's, which mpirun returns
  EXPECT_NE(few.err.find("start it with mpirun -np 3"), std::string::npos) << few.err;

  const CommandResult unlaunched = run_splitscope_under(mpirun(2), "run mlp-small --strategy pipeline --devices 2");
  EXPECT_NE(unlaunched.exit_code, 0);
  EXPECT_NE(unlaunched.err.find("add --launcher mpi"), std::string::npos) << unlaunched.err;

  const CommandResult simulated = run_splitscope("run mlp-small --strategy pipeline --devices 2 --launcher mpi "
                                                 "--backend sim --machine h100-nvlink-8");
  EXPECT_EQ(simulated.exit_code, 2);
  EXPECT_NE(simulated.err.find("--launcher"), std::string::npos) << simulated.err;

  const CommandResult input = run_splitscope_under(mpirun(2), "run mlp-small --strategy pipeline --devices 2 --launcher mpi "
                                                              "--input-cost-us-per-sample 10");
  EXPECT_NE(input.exit_code, 0);

  // N workers and K shards are N + K ranks.
  const CommandResult ps =
      run_splitscope_under(mpirun(2), "run mlp-small --train --strategy ps --devices 2 --ps 1 --launcher mpi");
  EXPECT_EQ(ps.exit_code, 2);
  EXPECT_NE(ps.err.find("start it with mpirun -np 3"), std::string::npos) << ps.err;
}

/// `run NET --train --strategy ps ARGS` on `ranks` ranks and in one process
/// (threads): the reports, parsed; the outputs compared.
struct PsRuns {
  nlohmann::json mpi;
  nlohmann::json one;
  double output_difference = 0;
};

PsRuns run_ps_both_ways(int ranks, const std::string& args) {
  const std::string dir = fresh_temp_dir("mpi-ps");
  const std::string common = "run mlp-small --train --strategy ps --quiet " + args + " --report ";
  PsRuns runs;
  const CommandResult launched = run_splitscope_under(mpirun(ranks), common + dir + "/mpi.json --save-output " + dir +
                                                                         "/mpi.npy --launcher mpi");
  EXPECT_EQ(launched.exit_code, 0) << launched.err;
  const CommandResult alone = run_splitscope(common + dir + "/one.json --save-output " + dir + "/one.npy");
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  if (launched.exit_code != 0 || alone.exit_code != 0) return runs;
  runs.mpi = nlohmann::json::parse(read_text_file(dir + "/mpi.json"));
  runs.one = nlohmann::json::parse(read_text_file(dir + "/one.json"));
  runs.output_difference = max_relative_difference(read_npy(dir + "/mpi.npy"), read_npy(dir + "/one.npy"));
  return runs;
}

TEST_F(MpiLaunch, SyncParameterServersAsRanksTrainAsTheOneProcessRun) {
  // 2 workers + 1 shard (SGD with momentum), and 2 workers + 2 shards (Adam): 3 and 4 ranks.
  for (const auto& [ranks, args] : std::vector<std::pair<int, std::string>>{
           {3, "--devices 2 --steps 3"}, {4, "--devices 2 --ps 2 --optimizer adam --steps 3"}}) {
    SCOPED_TRACE(args);
    const PsRuns runs = run_ps_both_ways(ranks, args);
    ASSERT_FALSE(runs.mpi.is_null());
    EXPECT_EQ(runs.mpi["device_mode"], "mpi");
    const auto& mpi = runs.mpi["train"]["losses"];
    const auto& one = runs.one["train"]["losses"];
    ASSERT_EQ(mpi.size(), 3u);
    ASSERT_EQ(one.size(), 3u);
    for (size_t step = 0; step < 3; ++step) {
      EXPECT_NEAR(mpi[step].get<double>(), one[step].get<double>(), 1e-5 * std::abs(one[step].get<double>()))
          << "step " << step;
    }
    EXPECT_LT(mpi[2].get<double>(), mpi[0].get<double>()) << "the steps train";
    EXPECT_LE(runs.output_difference, 1e-5) << "the weights went the same way";
    const auto& ps = runs.mpi["train"]["parameter_server"];
    EXPECT_EQ(ps["updates"], 3);
    EXPECT_EQ(ps["gradients_pushed"], 6);
    EXPECT_EQ(ps["gradients_applied"], 6 * ps["shards"].get<int>());
    EXPECT_EQ(ps["gradients_dropped"], 0);
    EXPECT_EQ(ps["shard_bytes"], runs.one["train"]["parameter_server"]["shard_bytes"]);
  }
}

TEST_F(MpiLaunch, AsyncAndSpareParameterServersKeepTheirRulesAcrossRanks) {
  // async: every worker pushes --steps gradients and each is applied on arrival.
  const PsRuns async = run_ps_both_ways(4, "--devices 3 --async --steps 4");
  ASSERT_FALSE(async.mpi.is_null());
  const auto& ps = async.mpi["train"]["parameter_server"];
  EXPECT_EQ(ps["mode"], "async");
  EXPECT_EQ(ps["gradients_pushed"], 12);
  EXPECT_EQ(ps["gradients_applied"], 12);
  EXPECT_EQ(ps["updates"], 12);
  // spare 1 with a worker held back 300 ms a step: the steps go on without it.
  const PsRuns spare = run_ps_both_ways(4, "--devices 3 --spare 1 --straggler 2:300 --steps 3");
  ASSERT_FALSE(spare.mpi.is_null());
  const auto& mine = spare.mpi["train"]["parameter_server"];
  EXPECT_EQ(mine["updates"], 3);
  EXPECT_EQ(mine["gradients_applied"], 6) << "two of the three workers' gradients each step";
  EXPECT_GE(mine["gradients_dropped"].get<int>(), 1) << "the straggler's gradient came late";
  EXPECT_LT(mine["wall_ms"].get<double>(), 3 * 300.0) << "no step waited for the straggler";
}

TEST_F(MpiLaunch, AParameterServerWorkerPastItsDeadlineEndsTheJob) {
  const std::string dir = fresh_temp_dir("mpi-ps-late");
  const auto started = std::chrono::steady_clock::now();
  const CommandResult late = run_splitscope_under(
      mpirun(3), "run mlp-small --train --strategy ps --devices 2 --straggler 1:5000 --timeout-ms 500 --launcher mpi "
                 "--quiet --report " + dir + "/r.json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(late.exit_code, 0);
  EXPECT_NE(late.err.find("error: rank "), std::string::npos) << late.err;
  EXPECT_NE(late.err.find("deadline"), std::string::npos) << late.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json")) << "no partial report";
  EXPECT_LT(seconds, 30.0);
}

TEST_F(MpiLaunch, HybridReplicasTrainAsTheOneProcessRunAcrossRanks) {
  const std::string dir = fresh_temp_dir("mpi-hybrid");
  const std::string common = "run mlp-small --strategy horizontal --replicas 2 --devices 2 --train --steps 2 --quiet --report ";
  const CommandResult launched = run_splitscope_under(mpirun(2), common + dir + "/mpi.json --launcher mpi");
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  const CommandResult alone = run_splitscope(common + dir + "/one.json");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const auto mpi = nlohmann::json::parse(read_text_file(dir + "/mpi.json"))["train"]["losses"];
  const auto one = nlohmann::json::parse(read_text_file(dir + "/one.json"))["train"]["losses"];
  ASSERT_EQ(mpi.size(), 2u);
  ASSERT_EQ(one.size(), 2u);
  for (size_t step = 0; step < 2; ++step) {
    EXPECT_NEAR(mpi[step].get<double>(), one[step].get<double>(), 1e-5 * std::abs(one[step].get<double>()));
  }
}

TEST_F(MpiLaunch, CompareRunsEveryStrategyAcrossRanks) {
  const std::string dir = fresh_temp_dir("mpi-compare");
  const CommandResult compared = run_splitscope_under(
      mpirun(2), "compare mlp-small --devices 2 --launcher mpi --repeat 2 --quiet --predict-on none --report " + dir +
                     "/c.json");
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_EQ(count_of(compared.out, "best:"), 1u) << compared.out;
  const auto report = nlohmann::json::parse(read_text_file(dir + "/c.json"));
  ASSERT_GE(report["runs"].size(), 4u);
  for (const auto& run : report["runs"]) EXPECT_EQ(run["device_mode"], "mpi") << run["strategy"];
}

TEST_F(MpiLaunch, CollectiveTimesMpisOwnCollectivesAcrossRanks) {
  const CommandResult timed =
      run_splitscope_under(mpirun(2), "collective all-reduce --bytes 64K,1M --launcher mpi --repeat 2 --json");
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  const auto document = nlohmann::json::parse(timed.out);  // rank 0's table only: one document
  EXPECT_NE(document["algorithm"].get<std::string>().find("MPI_Iallreduce"), std::string::npos);
  ASSERT_EQ(document["rows"].size(), 2u);
  for (const auto& row : document["rows"]) {
    EXPECT_GT(row["time_us"].get<double>(), 0.0);
    // nccl-tests' bus bandwidth of an all-reduce over 2: algbw x 2(N-1)/N = algbw.
    EXPECT_DOUBLE_EQ(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>());
  }
}

TEST_F(MpiLaunch, ReduceScatterAndBroadcastAreMpisOwnToo) {
  for (const std::string op : {"reduce-scatter", "broadcast"}) {
    const CommandResult timed =
        run_splitscope_under(mpirun(2), "collective " + op + " --bytes 1M --launcher mpi --repeat 2 --json");
    ASSERT_EQ(timed.exit_code, 0) << op << ": " << timed.err;
    const auto document = nlohmann::json::parse(timed.out);
    EXPECT_NE(document["algorithm"].get<std::string>().find(op == "broadcast" ? "MPI_Ibcast" : "MPI_Ireduce_scatter"),
              std::string::npos)
        << document["algorithm"];
    ASSERT_EQ(document["rows"].size(), 1u);
    EXPECT_GT(document["rows"][0]["time_us"].get<double>(), 0.0);
  }
}

}  // namespace
}  // namespace mpi_launch_test
}  // namespace splitscope::testing
