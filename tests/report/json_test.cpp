// The JSON reports, field by field against docs/reports.md ("the run report",
// `compare --report`), on hand-made runs whose numbers are known.

#include <gtest/gtest.h>

#include "report/report_json.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace json_test {
namespace {

using Json = nlohmann::ordered_json;
using testing::sample_comparison;

const RunReport& run_named(const RunGroup& group, const std::string& strategy) {
  for (const RunReport& run : group.runs) {
    if (run.summary.strategy == strategy) return run;
  }
  throw std::runtime_error("no run " + strategy);
}

TEST(ReportJson, EveryFieldOfARunReport) {
  const Comparison comparison = sample_comparison();
  const Json json = run_report_json(run_named(comparison.primary(), "horizontal"), &comparison.context);

  EXPECT_EQ(json["schema"], "splitscope.report/1");
  // The chain network: dense 8->4, 4->4, 4->2 at batch 2: FLOPs 2*2*(32+16+8) = 224;
  // params (32+4) + (16+4) + (8+2) = 66.
  EXPECT_EQ(json["model"]["name"], "chain");
  EXPECT_EQ(json["model"]["flops"], 224);
  EXPECT_EQ(json["model"]["params"], 66);
  EXPECT_EQ(json["strategy"], "horizontal");
  EXPECT_EQ(json["devices"], 2);
  EXPECT_EQ(json["microbatches"], 1);
  EXPECT_EQ(json["batch"], 2);
  EXPECT_EQ(json["backend"], "cpu");
  EXPECT_EQ(json["measured"], true);
  EXPECT_EQ(json["device_mode"], "cpu threads");
  EXPECT_EQ(json["machine"]["name"], "test-host");
  EXPECT_EQ(json["machine"]["device_name"], "test device");
  EXPECT_EQ(json["machine"]["driver"], "none");
  EXPECT_EQ(json["machine"]["facts"]["dtype"], "fp32");
  EXPECT_EQ(json["fits"], true);

  const Json& makespan = json["makespan_ms"];
  EXPECT_DOUBLE_EQ(makespan["median"].get<double>(), 0.45);
  EXPECT_DOUBLE_EQ(makespan["min"].get<double>(), 0.45);
  EXPECT_DOUBLE_EQ(makespan["max"].get<double>(), 0.45);
  EXPECT_EQ(makespan["repeats"], 1);

  ASSERT_EQ(json["per_device"].size(), 2u);
  const Json& d1 = json["per_device"][1];
  EXPECT_EQ(d1["id"], 1);
  EXPECT_DOUBLE_EQ(d1["compute_ms"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(d1["transfer_ms"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(d1["idle_ms"].get<double>(), 0.3);
  EXPECT_EQ(d1["flops"], 100);
  EXPECT_EQ(d1["memory_peak_bytes"], 2048);

  EXPECT_EQ(json["transfers"]["count"], 1);
  EXPECT_EQ(json["transfers"]["bytes"], 1024);
  EXPECT_DOUBLE_EQ(json["transfers"]["time_ms"].get<double>(), 0.05);
  EXPECT_EQ(json["transfers"]["by_kind"][0]["kind"], "transfer");

  EXPECT_DOUBLE_EQ(json["critical_path"]["compute_ms"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(json["critical_path"]["transfer_ms"].get<double>(), 0.05);

  EXPECT_DOUBLE_EQ(json["baseline_makespan_ms"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(json["speedup"].get<double>(), 0.4 / 0.45);
  EXPECT_EQ(json["verdict"], "loses");
  EXPECT_EQ(json["reason"], "device 0 holds 75% of the FLOPs and the others wait for it (devices idle 50%)");
  EXPECT_EQ(json["decided_by"], "imbalance");
  EXPECT_EQ(json["precision"], "fp32");  // a plan's default
  EXPECT_EQ(json["bubble"], nullptr);  // not a pipeline
  EXPECT_EQ(json["context"]["git_revision"], "abc1234");
  EXPECT_EQ(json["context"]["command"], "splitscope compare chain --devices 2");
  // A measured run: plan device i on this host's device i, one node.
  EXPECT_EQ(json["placement"], "default");
  EXPECT_EQ(json["device_map"], Json({0, 1}));
  EXPECT_EQ(json["cross_node_bytes"], 0);
  EXPECT_EQ(json["default_placement"], nullptr);

  // docs/reports.md's order of fields comes first.
  const std::vector<std::string> formats_order{
      "schema", "model", "strategy", "devices", "microbatches", "batch", "backend", "measured", "device_mode",
      "machine", "fits", "makespan_ms", "per_device", "transfers", "critical_path", "baseline_makespan_ms",
      "speedup", "verdict", "reason"};
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  ASSERT_GE(keys.size(), formats_order.size());
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + static_cast<long>(formats_order.size())),
            formats_order);
}

TEST(ReportJson, ATopologyPlacementCarriesItsMappingAndTheDefaults) {
  Comparison comparison = sample_comparison();
  RunReport run = run_named(comparison.primary(), "horizontal");
  PlacementInfo& placement = run.summary.info.placement;
  placement.mode = "topology";
  placement.device_map = {9, 3};
  placement.cross_node_bytes = 0;
  placement.default_cross_node_bytes = 1024;
  placement.default_makespan_us = 700;
  const Json json = run_report_json(run, nullptr);
  EXPECT_EQ(json["placement"], "topology");
  EXPECT_EQ(json["device_map"], Json({9, 3}));
  EXPECT_EQ(json["cross_node_bytes"], 0);
  EXPECT_EQ(json["default_placement"]["cross_node_bytes"], 1024);
  EXPECT_DOUBLE_EQ(json["default_placement"]["makespan_ms"].get<double>(), 0.7);
  EXPECT_EQ(json["default_placement"]["note"], nullptr);
}

TEST(ReportJson, ARunThatDoesNotFitHasNullTimes) {
  const Comparison comparison = sample_comparison();
  const Json json = run_report_json(run_named(comparison.primary(), "pipeline"), nullptr);
  EXPECT_EQ(json["fits"], false);
  EXPECT_EQ(json["makespan_ms"], nullptr);
  EXPECT_EQ(json["critical_path"], nullptr);
  EXPECT_EQ(json["speedup"], nullptr);
  EXPECT_EQ(json["per_device"][0]["compute_ms"], nullptr);
  EXPECT_EQ(json["per_device"][0]["memory_peak_bytes"], 4096);
  EXPECT_EQ(json["per_device"][0]["memory_available_bytes"], 3000);
  EXPECT_EQ(json["verdict"], "loses");
  EXPECT_EQ(json["reason"], "does not fit: device 0 needs 4.00 KiB (4096 bytes) but has 2.93 KiB (3000 bytes)");
  EXPECT_EQ(json["memory"]["problem"], "device 0 needs 4.00 KiB (4096 bytes) but has 2.93 KiB (3000 bytes)");
  // A pipeline of 2 stages and 4 micro-batches: ideal bubble 1/5, nothing measured.
  EXPECT_DOUBLE_EQ(json["bubble"]["ideal"].get<double>(), 0.2);
  EXPECT_EQ(json["bubble"]["measured"], nullptr);
  EXPECT_FALSE(json.contains("context"));
}

TEST(ReportJson, CompareReport) {
  const Comparison comparison = sample_comparison();
  const Json json = compare_json(comparison);
  EXPECT_EQ(json["schema"], "splitscope.compare/1");
  ASSERT_EQ(json["runs"].size(), 3u);
  EXPECT_EQ(json["runs"][0]["strategy"], "single");
  EXPECT_EQ(json["runs"][1]["strategy"], "horizontal");
  EXPECT_EQ(json["runs"][2]["strategy"], "pipeline");
  EXPECT_EQ(json["best"], "single");
  EXPECT_EQ(json["backend"], "cpu");
  // The simulator's predictions beside the measured runs.
  ASSERT_EQ(json["predicted"].size(), 1u);
  EXPECT_EQ(json["predicted"][0]["machine"], "sim-machine");
  EXPECT_EQ(json["predicted"][0]["measured"], false);
  EXPECT_EQ(json["predicted"][0]["best"], "horizontal");
  EXPECT_EQ(json["predicted"][0]["runs"][0]["backend"], "sim");
  EXPECT_EQ(json["context"]["host"], "test-host");
  // The single run over its three repeats: median 400 us, min 390, max 420.
  EXPECT_DOUBLE_EQ(json["runs"][0]["makespan_ms"]["median"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(json["runs"][0]["makespan_ms"]["min"].get<double>(), 0.39);
  EXPECT_DOUBLE_EQ(json["runs"][0]["makespan_ms"]["max"].get<double>(), 0.42);
  EXPECT_EQ(json["runs"][0]["makespan_ms"]["repeats"], 3);
}

}  // namespace
}  // namespace json_test
}  // namespace splitscope
