// The reporters a command gets from its options, and the files they write.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/reporter.hpp"
#include "report_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace reporter_test {
namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(Reporters, CompareWritesTheTableAndEveryFileAskedFor) {
  const std::string dir = testing::fresh_dir("reporters-compare");
  std::ostringstream out;
  OutputBatch files;
  const auto reporters = make_reporters(ReportKind::kCompare, out,
                                        {dir + "/compare.json", dir + "/trace.json", dir + "/page.html"}, files);
  ASSERT_EQ(reporters.size(), 4u);
  const Comparison comparison = testing::sample_comparison();
  for (const auto& reporter : reporters) reporter->report(comparison);
  EXPECT_FALSE(std::filesystem::exists(dir + "/compare.json")) << "published only all together";
  files.publish();
  EXPECT_NE(out.str().find("best: single"), std::string::npos);
  EXPECT_EQ(read_json(dir + "/compare.json")["schema"], "splitscope.compare/1");
  // The trace holds the 4 timed runs (processes k * 1000 + device).
  const nlohmann::json trace = read_json(dir + "/trace.json");
  std::set<int> pids;
  for (const auto& event : trace["traceEvents"]) pids.insert(event["pid"].get<int>());
  EXPECT_EQ(pids, (std::set<int>{0, 1000, 1001, 2000, 2001, 3000}));
  EXPECT_TRUE(std::filesystem::file_size(dir + "/page.html") > 1000);
  // Nothing else: no partial or temporary files left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 3);
}

TEST(Reporters, RunWritesItsOneReport) {
  // `run --strategy horizontal --report run.json`: single runs too, only as the baseline.
  const std::string dir = testing::fresh_dir("reporters-run");
  std::ostringstream out;
  OutputBatch files;
  const auto reporters = make_reporters(ReportKind::kRun, out, {dir + "/run.json", "", ""}, files);
  ComparisonBuilder builder(ReportContext{});
  builder.add(testing::two_stage_plan(), testing::run_result({testing::two_stage_timeline()}));
  builder.add(testing::single_plan(400), testing::single_result(400), /*shown=*/false);
  const Comparison comparison = std::move(builder).build();
  for (const auto& reporter : reporters) reporter->report(comparison);
  files.publish();
  EXPECT_NE(out.str().find("verdict: loses (0.89x against single's 400.0 us)"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("the single-device baseline"), std::string::npos) << "the baseline is not shown";
  const nlohmann::json report = read_json(dir + "/run.json");
  EXPECT_EQ(report["schema"], "splitscope.report/1");
  EXPECT_EQ(report["strategy"], "horizontal");
  EXPECT_EQ(report["verdict"], "loses");
  EXPECT_TRUE(report.contains("context"));
}

}  // namespace
}  // namespace reporter_test
}  // namespace splitscope
