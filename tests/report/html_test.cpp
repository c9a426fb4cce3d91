// The HTML page: self-contained, with the comparison table, one SVG timeline
// and one bar chart per timed run; and rendered by headless Chromium.

#include <gtest/gtest.h>

#include <fstream>

#include "report/html_report.hpp"
#include "report/svg_charts.hpp"
#include "report_test_support.hpp"
#include "util/atomic_file.hpp"

namespace splitscope {
namespace html_test {
namespace {

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

TEST(Html, TableTimelinesAndBarsOnOneSelfContainedPage) {
  const std::string html = html_report(testing::sample_comparison());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // One table per group (measured, predicted).
  EXPECT_EQ(count_of(html, "<table class=\"compare\">"), 2u);
  // Timed runs: single, horizontal (cpu); horizontal, single (sim). The pipeline did not fit.
  EXPECT_EQ(count_of(html, "<svg class=\"timeline\""), 4u);
  EXPECT_EQ(count_of(html, "<svg class=\"bars\""), 4u);
  EXPECT_NE(html.find("pipeline: not run (does not fit: device 0 needs 4.00 KiB"), std::string::npos);
  // Spans are drawn by kind, with the op's name in a hover title.
  EXPECT_NE(html.find("<rect class=\"transfer"), std::string::npos);
  EXPECT_NE(html.find("<title>fc2 0-&gt;1 (transfer): 50.0 us from 300.0 us to 350.0 us"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"loses\">loses</td>"), std::string::npos);
  // Self-contained: nothing fetched from anywhere.
  for (const char* outside : {"http://", "https://", "src=", "href=", "<script", "<link", "@import", "url("}) {
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  }
}

TEST(Html, TinySpansAreMergedIntoOneMark) {
  // 1000 spans of 0.1 us back to back on one lane, then one long span to
  // 10 ms: at 940 px for 10 ms (10.64 us a pixel) the short ones merge into
  // marks about a pixel wide: a mark takes spans while it is under a pixel,
  // so 107 spans (10.7 us) each, 9 of them, then the last 37.
  testing::HandPlan hand("single", 1);
  const int op = hand.compute(0, 1, {hand.input(0)}, 1);
  Timeline timeline;
  for (int i = 0; i < 1000; ++i) timeline.spans.push_back(testing::compute_span(0, op, i * 0.1, i * 0.1 + 0.1));
  timeline.spans.push_back(testing::compute_span(0, op, 100, 10000));
  const RunReport run = make_run_report(hand.build(), testing::run_result({timeline}), nullptr);
  const std::string svg = svg_timeline(run);
  EXPECT_EQ(count_of(svg, "<rect class=\"compute"), 9u + 1u + 1u);
  EXPECT_NE(svg.find("<title>107 compute spans from 0.0 us to 10.7 us, on the critical path</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>37 compute spans from 96.3 us to 100.0 us, on the critical path</title>"),
            std::string::npos);
}

TEST(Html, EscapesText) {
  EXPECT_EQ(escape_html("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
}

TEST(Html, RendersInHeadlessChromium) {
  const std::string dir = testing::fresh_dir("html");
  const std::string page = dir + "/compare.html";
  write_file_atomically(page, html_report(testing::sample_comparison()));
  std::string output;
  const int status = testing::run_command(
      testing::source_root() + "/scripts/html-screenshot " + page + " " + dir + "/compare.png", &output);
  if (status == 77) GTEST_SKIP() << output;
  EXPECT_EQ(status, 0) << output;
  std::ifstream png(dir + "/compare.png", std::ios::binary);
  EXPECT_TRUE(png.good());
}

}  // namespace
}  // namespace html_test
}  // namespace splitscope
