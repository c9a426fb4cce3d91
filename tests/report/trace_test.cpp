// Chrome trace-event JSON: it parses, every span lies inside [0, makespan],
// one process per device and one thread per lane, named by metadata.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "report/chrome_trace.hpp"
#include "report_test_support.hpp"
#include "util/json_dump.hpp"

namespace splitscope {
namespace trace_test {
namespace {

using Json = nlohmann::json;

TEST(ChromeTrace, OneRunParsesAndEverySpanLiesInsideTheMakespan) {
  const Comparison comparison = testing::sample_comparison();
  const RunReport& run = comparison.primary().runs[1];  // horizontal, makespan 450 us
  ASSERT_EQ(run.summary.strategy, "horizontal");
  const Json trace = Json::parse(chrome_trace_json(run).dump());
  ASSERT_TRUE(trace.contains("traceEvents"));

  std::map<int, std::string> process_names;
  std::set<std::pair<int, int>> named_threads;
  std::vector<Json> spans;
  for (const Json& event : trace["traceEvents"]) {
    const int pid = event["pid"].get<int>();
    if (event["ph"] == "M" && event["name"] == "process_name") process_names[pid] = event["args"]["name"];
    if (event["ph"] == "M" && event["name"] == "thread_name") named_threads.insert({pid, event["tid"].get<int>()});
    if (event["ph"] == "X") spans.push_back(event);
  }
  EXPECT_EQ(process_names, (std::map<int, std::string>{{0, "device 0"}, {1, "device 1"}}));
  // Compute lanes of both devices, device 1's copy-in lane (tid 1), where the transfer landed, and
  // device 0's copy-out lane (tid 2), where it left.
  EXPECT_EQ(named_threads, (std::set<std::pair<int, int>>{{0, 0}, {0, 2}, {1, 0}, {1, 1}}));

  ASSERT_EQ(spans.size(), 5u);  // the run's 4 spans and the transfer seen from its sender
  for (const Json& span : spans) {
    const double ts = span["ts"];
    const double dur = span["dur"];
    EXPECT_GE(ts, 0.0);
    EXPECT_GE(dur, 0.0);
    EXPECT_LE(ts + dur, 450.0) << span.dump();
    EXPECT_TRUE(named_threads.contains({span["pid"].get<int>(), span["tid"].get<int>()})) << span.dump();
  }
  // Names are the plan's op labels; the transfer says where it went.
  EXPECT_EQ(spans[0]["name"], "fc1");
  EXPECT_EQ(spans[2]["name"], "fc2 0->1");
  EXPECT_EQ(spans[2]["cat"], "transfer");
  EXPECT_EQ(spans[2]["pid"], 1);
  EXPECT_EQ(spans[2]["tid"], 1);
  EXPECT_EQ(spans[2]["args"]["from_device"], 0);
  EXPECT_EQ(spans[2]["args"]["bytes"], 1024);
  EXPECT_DOUBLE_EQ(spans[1]["dur"].get<double>(), 200.0);
  EXPECT_EQ(spans[1]["args"]["critical_path"], true);
  // The sender's view: the same interval and bytes on device 0's copy-out lane, marked as such.
  EXPECT_EQ(spans[4]["name"], "fc2 0->1");
  EXPECT_EQ(spans[4]["pid"], 0);
  EXPECT_EQ(spans[4]["tid"], 2);
  EXPECT_EQ(spans[4]["ts"], spans[2]["ts"]);
  EXPECT_EQ(spans[4]["dur"], spans[2]["dur"]);
  EXPECT_EQ(spans[4]["args"]["bytes"], 1024);
  EXPECT_EQ(spans[4]["args"]["to_device"], 1);
  EXPECT_EQ(spans[4]["args"]["sender_view"], true);
  EXPECT_FALSE(spans[2]["args"].contains("sender_view"));
}

TEST(ChromeTrace, ATransferTheBackendRecordedAtBothEndsIsNotDrawnTwice) {
  const Comparison comparison = testing::sample_comparison();
  RunReport run = comparison.primary().runs[1];
  // Like the cuda backend: the copy also recorded on the sender's copy-out lane.
  std::vector<Span> sent;
  for (const Span& span : run.timeline.spans) {
    if (span.kind == SpanKind::kTransfer) {
      Span out = span;
      out.device = 0;
      out.lane = Lane::kCopyOut;
      sent.push_back(out);
    }
  }
  ASSERT_EQ(sent.size(), 1u);
  run.timeline.spans.push_back(sent[0]);
  const Json trace = Json::parse(chrome_trace_json(run).dump());
  int transfers = 0;
  for (const Json& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["cat"] == "transfer") {
      ++transfers;
      EXPECT_FALSE(event["args"].contains("sender_view")) << event.dump();
    }
  }
  EXPECT_EQ(transfers, 2);
}

TEST(ChromeTrace, SeveralRunsGetTheirOwnProcesses) {
  const Comparison comparison = testing::sample_comparison();
  std::vector<const RunReport*> timed;
  for (const RunReport* run : comparison.all_runs()) {
    if (run->summary.timed()) timed.push_back(run);
  }
  ASSERT_EQ(timed.size(), 4u);  // the pipeline did not fit
  const Json trace = Json::parse(chrome_trace_json(timed).dump());
  std::set<std::string> names;
  for (const Json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name") names.insert(event["args"]["name"]);
  }
  // Run 1 (horizontal on cpu) has processes 1000 and 1001.
  EXPECT_TRUE(names.contains("horizontal (cpu): device 1"));
  EXPECT_TRUE(names.contains("horizontal (sim): device 0"));
  for (const Json& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    const int run = event["pid"].get<int>() / kTracePidStride;
    const double makespan = timed[static_cast<size_t>(run)]->timeline.makespan_us();
    EXPECT_LE(event["ts"].get<double>() + event["dur"].get<double>(), makespan + 1e-9);
  }
}

TEST(ChromeTrace, TheStreamedTraceIsTheDocumentByteForByte) {
  // Issue 54 item 17: --trace writes the trace an event at a time; the file
  // must stay what dump_json(chrome_trace_json()) made of the whole document.
  const Comparison comparison = testing::sample_comparison();
  std::vector<const RunReport*> timed;
  for (const RunReport* run : comparison.all_runs()) {
    if (run->summary.timed()) timed.push_back(run);
  }
  for (const std::vector<const RunReport*>& runs :
       {timed, std::vector<const RunReport*>{timed.front()}, std::vector<const RunReport*>{}}) {
    std::string streamed;
    size_t pieces = 0;
    write_chrome_trace(runs, [&](std::string_view piece) {
      streamed.append(piece);
      ++pieces;
    });
    EXPECT_EQ(streamed, dump_json(chrome_trace_json(runs)));
    EXPECT_EQ(Json::parse(streamed), Json::parse(chrome_trace_json(runs).dump()));
    if (!runs.empty()) {
      EXPECT_GT(pieces, 10u);  // event by event, not one document
    }
  }
}

}  // namespace
}  // namespace trace_test
}  // namespace splitscope
