// `splitscope report FILE.json --html OUT.html`: the page drawn from each
// kind of saved report is the page its command's own --html wrote (a run or
// compare page less its timelines and memory charts, which need the spans a
// JSON report does not keep), and bad input is refused with exit 2.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace report_command_test {
namespace {

constexpr int kBadInput = 2;

/// `html` without the sections drawn from spans: each group's timelines and
/// memory charts, from their heading to the next heading or the group's end.
std::string without_span_sections(std::string html) {
  for (const char* heading : {"<h3>Timelines</h3>", "<h3>Memory per device over the step</h3>"}) {
    for (size_t at = html.find(heading); at != std::string::npos; at = html.find(heading, at)) {
      const size_t next_heading = html.find("<h3>", at + 1);
      const size_t group_end = html.find("</section>", at);
      html.erase(at, std::min(next_heading, group_end) - at);
    }
  }
  return html;
}

/// Draws DIR/NAME.json as DIR/NAME-drawn.html and returns that page.
std::string drawn_page(const std::string& dir, const std::string& name) {
  const CommandResult drawn = run_splitscope("report " + dir + "/" + name + ".json --html " + dir + "/" + name +
                                             "-drawn.html");
  EXPECT_EQ(drawn.exit_code, 0) << drawn.err;
  EXPECT_NE(drawn.out.find("wrote " + dir + "/" + name + "-drawn.html"), std::string::npos) << drawn.out;
  return read_text_file(dir + "/" + name + "-drawn.html");
}

/// Runs `command --report DIR/NAME.json --html DIR/NAME.html`.
void write_report_and_page(const std::string& command, const std::string& dir, const std::string& name) {
  const CommandResult made = run_splitscope(command + " --report " + dir + "/" + name + ".json --html " + dir + "/" +
                                            name + ".html");
  ASSERT_EQ(made.exit_code, 0) << made.err;
}

TEST(ReportCommand, RunPageIsTheCommandsPageLessItsTimeline) {
  const std::string dir = fresh_temp_dir("report-run");
  write_report_and_page("run mlp-small --strategy pipeline --devices 2 --train --backend sim --machine h100-nvlink-8",
                        dir, "run");
  const std::string written = read_text_file(dir + "/run.html");
  const std::string drawn = drawn_page(dir, "run");
  ASSERT_NE(written.find("<svg class=\"timeline\""), std::string::npos);
  ASSERT_NE(written.find("<h3>Memory per device over the step</h3>"), std::string::npos);
  EXPECT_EQ(drawn.find("<svg class=\"timeline\""), std::string::npos);
  EXPECT_NE(drawn.find("pipeline: representative repeat 1 of 1, makespan "), std::string::npos);
  EXPECT_NE(drawn.find("no timeline: a JSON report keeps no spans"), std::string::npos);
  // The table, the bars and the header are the same, byte for byte.
  EXPECT_NE(drawn.find("<svg class=\"bars\""), std::string::npos);
  EXPECT_EQ(without_span_sections(drawn), without_span_sections(written));
}

TEST(ReportCommand, ComparePageKeepsEveryGroupTableAndBar) {
  const std::string dir = fresh_temp_dir("report-compare");
  // Measured on cpu, with the simulator's predictions on cpu-2 as a second group.
  write_report_and_page("compare mlp-small --devices 2 --backend cpu --repeat 1 --quiet --predict-on cpu-2", dir,
                        "compare");
  const std::string written = read_text_file(dir + "/compare.html");
  const std::string drawn = drawn_page(dir, "compare");
  ASSERT_NE(written.find("<h2>Predicted on cpu-2 (simulated)</h2>"), std::string::npos);
  EXPECT_EQ(without_span_sections(drawn), without_span_sections(written));
}

TEST(ReportCommand, ParameterServerLossCurvesComeBack) {
  const std::string dir = fresh_temp_dir("report-ps");
  write_report_and_page("run mlp-small --train --strategy ps --devices 3 --steps 6 --backend cpu --quiet", dir, "ps");
  const std::string written = read_text_file(dir + "/ps.html");
  const std::string drawn = drawn_page(dir, "ps");
  ASSERT_NE(written.find("<h3>Loss against wall time</h3>"), std::string::npos);
  EXPECT_EQ(without_span_sections(drawn), without_span_sections(written));
}

TEST(ReportCommand, SweepPagesWithLossCurvesAreTheSameByteForByte) {
  const std::string dir = fresh_temp_dir("report-sweeps");
  const CommandResult product = run_splitscope(
      "sweep -q --over devices=1,2 --over batch=8,16 --report " + dir + "/grid.json --html " + dir +
      "/grid.html run mlp-small --strategy data --train --backend sim --machine h100-nvlink-8");
  ASSERT_EQ(product.exit_code, 0) << product.err;
  EXPECT_EQ(drawn_page(dir, "grid"), read_text_file(dir + "/grid.html"));

  // Parameter-server points: their loss curves travel in the sweep report (points[].loss_curve).
  const CommandResult variants = run_splitscope(
      "sweep -q --variant=--sync --variant=--async --report " + dir + "/ps.json --html " + dir +
      "/ps.html run mlp-small --train --strategy ps --devices 3 --steps 6 --backend cpu");
  ASSERT_EQ(variants.exit_code, 0) << variants.err;
  const std::string written = read_text_file(dir + "/ps.html");
  ASSERT_NE(written.find("Loss against wall time"), std::string::npos);
  EXPECT_EQ(drawn_page(dir, "ps"), written);
}

TEST(ReportCommand, ValidatePageIsTheSameByteForByte) {
  const std::string dir = fresh_temp_dir("report-validate");
  write_report_and_page("validate --backend cpu --networks mlp-small --devices 2 --repeat 1 --quiet --predict-on cpu-2",
                        dir, "validate");
  const std::string written = read_text_file(dir + "/validate.html");
  ASSERT_NE(written.find("Predicted against measured"), std::string::npos);
  EXPECT_EQ(drawn_page(dir, "validate"), written);
}

TEST(ReportCommand, DrawsTheReportsOfEarlierBuildsKeptInReports) {
  // reports/ keeps evidence written before members such as `train`, the
  // measured repeats and the ranking ties were added to the same schemas.
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  ASSERT_NE(root, nullptr);
  const std::string dir = fresh_temp_dir("report-kept");
  const std::string compare = std::string(root) + "/reports/h100-80gb-hbm3/compare-mlp-small-n2-device.json";
  const std::string validate = std::string(root) + "/reports/cpu-amd-epyc-2-threads/validate-mlp-1.json";
  ASSERT_NE(read_text_file(compare).find("splitscope.compare/1"), std::string::npos);
  ASSERT_EQ(read_text_file(compare).find("\"train\""), std::string::npos);  // from before `train`
  const CommandResult drawn = run_splitscope("report " + compare + " --html " + dir + "/compare.html");
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  EXPECT_NE(read_text_file(dir + "/compare.html").find("<table class=\"compare\">"), std::string::npos);
  ASSERT_EQ(read_text_file(validate).find("measured_repeats_ms"), std::string::npos);  // from before repeats
  const CommandResult scatter = run_splitscope("report " + validate + " --html " + dir + "/validate.html");
  ASSERT_EQ(scatter.exit_code, 0) << scatter.err;
  EXPECT_NE(read_text_file(dir + "/validate.html").find("Predicted against measured"), std::string::npos);
}

TEST(ReportCommand, RefusesWhatIsNotAReportItDraws) {
  const std::string dir = fresh_temp_dir("report-refusals");
  std::ofstream(dir + "/broken.json") << "{\"schema\": ";
  std::ofstream(dir + "/plain.json") << "{\"layers\": []}";
  std::ofstream(dir + "/machine.json") << "{\"schema\": \"splitscope.machine/1\"}";
  std::ofstream(dir + "/cut.json") << "{\"schema\": \"splitscope.report/1\", \"model\": {\"name\": \"m\"}}";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"broken.json", "broken.json: not valid JSON"},
      {"plain.json", "not a splitscope report: it has no \"schema\" string"},
      {"machine.json", "'splitscope.machine/1' is not a kind report draws; it draws splitscope.report/1"},
      {"cut.json", "an incomplete or altered splitscope.report/1 report"},
      {"missing.json", "missing.json: cannot open the file"},
  };
  for (const auto& [file, message] : cases) {
    SCOPED_TRACE(file);
    const CommandResult refused = run_splitscope("report " + dir + "/" + file + " --html " + dir + "/out.html");
    EXPECT_EQ(refused.exit_code, kBadInput);
    EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
    EXPECT_EQ(read_text_file(dir + "/out.html"), "");  // nothing written
  }
}

TEST(ReportCommand, NeverWritesOverItsInput) {
  const std::string dir = fresh_temp_dir("report-overwrite");
  const CommandResult made = run_splitscope(
      "run mlp-small --strategy data --devices 2 --backend sim --machine h100-nvlink-8 --report " + dir + "/r.json");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string saved = read_text_file(dir + "/r.json");
  for (const std::string& alias : {dir + "/r.json", dir + "/./r.json"}) {
    const CommandResult refused = run_splitscope("report " + dir + "/r.json --html " + alias);
    EXPECT_EQ(refused.exit_code, kBadInput);
    EXPECT_NE(refused.err.find("is an input of this command"), std::string::npos) << refused.err;
  }
  EXPECT_EQ(read_text_file(dir + "/r.json"), saved);
  const CommandResult no_page = run_splitscope("report " + dir + "/r.json");
  EXPECT_EQ(no_page.exit_code, kBadInput);
  EXPECT_NE(no_page.err.find("--html"), std::string::npos) << no_page.err;
}

}  // namespace
}  // namespace report_command_test
}  // namespace splitscope::testing
