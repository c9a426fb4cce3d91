// sweep's scaling, series and findings (report/sweep_report.hpp), on points
// made by hand.

#include "report/sweep_report.hpp"

#include <gtest/gtest.h>

namespace splitscope {
namespace sweep_report_test {
namespace {

OptionSweepPoint point(const std::string& devices, const std::string& batch, double samples_per_s, bool fits = true) {
  OptionSweepPoint p;
  p.values = {{"devices", devices}, {"batch", batch}};
  p.fits = fits;
  p.samples_per_s = samples_per_s;
  p.makespan_ms = fits ? 1000.0 * 64 / samples_per_s : 0;
  p.speedup = 1.0;
  p.verdict = fits ? "even" : "";
  return p;
}

OptionSweep two_series() {
  OptionSweep sweep;
  sweep.run_arguments = {"mlp", "--strategy", "data"};
  sweep.over = {"devices", "batch"};
  // batch 64 peaks at 4 devices and falls; batch 4096 does not fit on 1 device and rises to the end.
  sweep.points = {point("1", "64", 100),   point("2", "64", 180),  point("4", "64", 250),  point("8", "64", 200),
                  point("1", "4096", 0, false), point("2", "4096", 300), point("4", "4096", 600), point("8", "4096", 1100)};
  return sweep;
}

TEST(SweepReport, SeriesShareEveryValueButTheFirstOptions) {
  const auto series = option_sweep_series(two_series());
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0], (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(series[1], (std::vector<size_t>{4, 5, 6, 7}));
}

TEST(SweepReport, ScalingIsAgainstTheFirstPointThatFits) {
  const auto scaling = option_sweep_scaling(two_series());
  ASSERT_EQ(scaling.size(), 8u);
  EXPECT_DOUBLE_EQ(*scaling[0], 1.0);
  EXPECT_DOUBLE_EQ(*scaling[2], 2.5);
  EXPECT_DOUBLE_EQ(*scaling[3], 2.0);
  EXPECT_FALSE(scaling[4].has_value());
  EXPECT_DOUBLE_EQ(*scaling[5], 1.0);
  EXPECT_NEAR(*scaling[7], 1100.0 / 300.0, 1e-12);
}

TEST(SweepReport, FindingsNameThePeakAndWhatFollowsIt) {
  const auto findings = option_sweep_findings(two_series());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_NE(findings[0].find("batch=64: throughput peaks at devices=4"), std::string::npos) << findings[0];
  EXPECT_NE(findings[0].find("devices=8 is slower"), std::string::npos) << findings[0];
  EXPECT_NE(findings[1].find("peaks at devices=8"), std::string::npos) << findings[1];
  EXPECT_NE(findings[1].find("still rises at the last value"), std::string::npos) << findings[1];
}

TEST(SweepReport, JsonHoldsEveryPointAndNullsWhereAPointDoesNotFit) {
  const auto document = option_sweep_json(two_series());
  EXPECT_EQ(document["schema"], "splitscope.sweep/1");
  ASSERT_EQ(document["points"].size(), 8u);
  EXPECT_EQ(document["points"][2]["values"]["devices"], "4");
  EXPECT_DOUBLE_EQ(document["points"][2]["samples_per_s"].get<double>(), 250.0);
  EXPECT_TRUE(document["points"][4]["makespan_ms"].is_null());
  EXPECT_FALSE(document["points"][4]["fits"].get<bool>());
  EXPECT_EQ(document["findings"].size(), 2u);
}

TEST(SweepReport, HtmlDrawsOneCurvePerSeries) {
  const std::string html = option_sweep_html(two_series());
  size_t curves = 0;
  for (size_t at = html.find("<polyline"); at != std::string::npos; at = html.find("<polyline", at + 1)) ++curves;
  EXPECT_EQ(curves, 2u);
  size_t marks = 0;
  for (size_t at = html.find("<circle"); at != std::string::npos; at = html.find("<circle", at + 1)) ++marks;
  EXPECT_EQ(marks, 7u);  // the point that does not fit has none
}

}  // namespace
}  // namespace sweep_report_test
}  // namespace splitscope
