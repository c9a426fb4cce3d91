// `splitscope sweep`: each point is the `run` it names (the same makespan as
// running it alone), the product of several --over lists, and its refusals.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace sweep_test {
namespace {

const std::string kRun = "run mlp-small --strategy data --train --backend sim --machine h100-nvlink-8";

double run_makespan_ms(const std::string& extra) {
  const std::string dir = fresh_temp_dir("sweep-alone");
  const CommandResult alone = run_splitscope(kRun + " " + extra + " --report " + dir + "/r.json");
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  return nlohmann::json::parse(read_text_file(dir + "/r.json"))["makespan_ms"]["median"].get<double>();
}

TEST(Sweep, EachPointIsTheRunItNames) {
  const CommandResult swept = run_splitscope("sweep -q --json --over devices=1,2,4 " + kRun);
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  const auto document = nlohmann::json::parse(swept.out);
  EXPECT_EQ(document["schema"], "splitscope.sweep/1");
  EXPECT_EQ(document["over"], nlohmann::json::array({"devices"}));
  ASSERT_EQ(document["points"].size(), 3u);
  for (const auto& point : document["points"]) {
    const std::string devices = point["values"]["devices"];
    SCOPED_TRACE(devices);
    // The simulator is deterministic: the sweep's point and the run alone agree exactly.
    EXPECT_DOUBLE_EQ(point["makespan_ms"].get<double>(), run_makespan_ms("--devices " + devices));
    // samples/s is the batch (mlp-small: 8) over the step.
    EXPECT_NEAR(point["samples_per_s"].get<double>(), 8 / (point["makespan_ms"].get<double>() / 1000), 1e-6);
  }
  EXPECT_DOUBLE_EQ(document["points"][0]["scaling"].get<double>(), 1.0);
}

TEST(Sweep, SeveralListsSweepTheirProductFirstOptionFastest) {
  const std::string dir = fresh_temp_dir("sweep-product");
  const CommandResult swept = run_splitscope("sweep -q --over devices=1,2 --over batch=8,16 --report " + dir +
                                             "/s.json --html " + dir + "/s.html " + kRun);
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  EXPECT_NE(swept.out.find("throughput peaks at"), std::string::npos) << swept.out;
  const auto document = nlohmann::json::parse(read_text_file(dir + "/s.json"));
  ASSERT_EQ(document["points"].size(), 4u);
  const std::vector<std::pair<std::string, std::string>> order{{"1", "8"}, {"2", "8"}, {"1", "16"}, {"2", "16"}};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(document["points"][i]["values"]["devices"], order[i].first);
    EXPECT_EQ(document["points"][i]["values"]["batch"], order[i].second);
  }
  EXPECT_DOUBLE_EQ(document["points"][3]["makespan_ms"].get<double>(), run_makespan_ms("--devices 2 --batch 16"));
  EXPECT_NE(read_text_file(dir + "/s.html").find("<polyline"), std::string::npos);
  const int valid = run_script("validate-report", dir + "/s.json");
  EXPECT_TRUE(valid == 0 || valid == kSkipExitCode) << "src/report/schema/sweep.schema.json, exit " << valid;
}

TEST(Sweep, VariantsSweepSetsOfOptionsAndDrawParameterServersLossCurves) {
  const std::string dir = fresh_temp_dir("sweep-variants");
  // The cpu backend: it computes the losses the chart draws.
  const std::string ps = "run mlp-small --train --strategy ps --devices 3 --steps 6 --backend cpu";
  const CommandResult swept = run_splitscope("sweep -q --json --variant=--sync --variant=--async \"--variant=--spare 1\" "
                                             "--html " + dir + "/s.html " + ps);
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  const auto document = nlohmann::json::parse(swept.out);
  ASSERT_EQ(document["points"].size(), 3u);
  EXPECT_EQ(document["points"][2]["values"]["variant"], "--spare 1");
  const std::string html = read_text_file(dir + "/s.html");
  EXPECT_NE(html.find("Loss against wall time"), std::string::npos);
  for (const char* series : {">--sync<", ">--async<", ">--spare 1<"}) EXPECT_NE(html.find(series), std::string::npos) << series;
  EXPECT_EQ(run_splitscope("sweep --variant=async " + ps).exit_code, 2);  // not an option
}

TEST(Sweep, RefusesWhatItCannotSweep) {
  const CommandResult twice = run_splitscope("sweep --over devices=1,2 " + kRun + " --devices 2");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("gives --devices already"), std::string::npos) << twice.err;
  const CommandResult short_form = run_splitscope("sweep --over devices=1,2 " + kRun + " -n 2");
  EXPECT_EQ(short_form.exit_code, 2);
  const CommandResult no_run = run_splitscope("sweep --over devices=1,2");
  EXPECT_EQ(no_run.exit_code, 2);
  EXPECT_NE(no_run.err.find("run command line"), std::string::npos) << no_run.err;
  const CommandResult bad = run_splitscope("sweep --over devices " + kRun);
  EXPECT_EQ(bad.exit_code, 2);
  const CommandResult report = run_splitscope("sweep --over devices=1,2 " + kRun + " --report x.json");
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_NE(report.err.find("before `run`"), std::string::npos) << report.err;
  // A point that fails ends the sweep with its exit code, naming the point.
  const CommandResult failing = run_splitscope("sweep -q --over devices=1,0 " + kRun);
  EXPECT_EQ(failing.exit_code, 2);
  EXPECT_NE(failing.err.find("the run at devices=0 failed"), std::string::npos) << failing.err;
}

TEST(Sweep, RefusesOptionsRunDoesNotHaveAndPointCountsPastItsBound) {
  // 16 options of 16 values each: 2^64 points wrapped to 0, an empty sweep with exit 0.
  std::string product;
  for (const char* name : {"seed", "batch", "warmup", "microbatches", "ps", "bucket-mib", "lr", "momentum", "repeat",
                           "steps", "spare", "sync-warmup", "max-staleness", "inter-op-threads", "intra-op-threads",
                           "prefetch"}) {
    product += std::string(" --over ") + name + "=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16";
  }
  const CommandResult huge = run_splitscope("sweep -q" + product + " " + kRun);
  EXPECT_EQ(huge.exit_code, 2) << huge.out << huge.err;
  EXPECT_NE(huge.err.find("more than 10000 points"), std::string::npos) << huge.err;

  const CommandResult unknown = run_splitscope("sweep -q --over devcies=1,2 " + kRun);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("--devcies is not an option of run (did you mean --devices?)"), std::string::npos)
      << unknown.err;
  // A trailing comma is an empty value, as 1,,2 is.
  const CommandResult trailing = run_splitscope("sweep -q --over devices=1,2, " + kRun);
  EXPECT_EQ(trailing.exit_code, 2) << trailing.err;
  EXPECT_NE(trailing.err.find("empty value"), std::string::npos) << trailing.err;
}

TEST(Sweep, AVariantTakesOnlyOptionsAPointMaySet) {
  // --help printed run's help and left no report: a raw JSON parse error, exit 1.
  for (const std::string variant : {"--help", "--trace t.json", "--save-output o.npy", "--launcher mpi",
                                    "--report r.json", "--no-such-option"}) {
    const CommandResult result = run_splitscope("sweep -q \"--variant=" + variant + "\" " + kRun);
    EXPECT_EQ(result.exit_code, 2) << variant << ": " << result.err;
    EXPECT_NE(result.err.find("--variant"), std::string::npos) << variant << ": " << result.err;
    EXPECT_EQ(result.err.find("json.exception"), std::string::npos) << variant << ": " << result.err;
  }
}

TEST(Sweep, TheRunCommandLineAsksForARunNotForText) {
  // Each point is parsed as run's: help or the version would print instead of running, and leave no point.
  for (const std::string word : {"--help", "-h", "--version"}) {
    const CommandResult result = run_splitscope("sweep -q --over devices=1,2 " + kRun + " " + word);
    EXPECT_EQ(result.exit_code, 2) << word << ": " << result.err;
    EXPECT_EQ(result.err, "error: " + word + ": asks for text, not a run to sweep; see splitscope run --help\n");
    EXPECT_EQ(result.out, "") << word;
  }
}

TEST(Sweep, HelpNamesTheRunCommandLineItNeeds) {
  const CommandResult help = run_splitscope("sweep --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("[OPTIONS] run MODEL RUN-OPTIONS..."), std::string::npos) << help.out;
}

}  // namespace
}  // namespace sweep_test
}  // namespace splitscope::testing
