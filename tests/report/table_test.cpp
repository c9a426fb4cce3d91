// The terminal outputs: the compare table and the run text.

#include <gtest/gtest.h>

#include "report/compare_table.hpp"
#include "report/text_table.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace table_test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

size_t line_starting(const std::vector<std::string>& lines, const std::string& prefix, size_t from = 0) {
  for (size_t i = from; i < lines.size(); ++i) {
    if (lines[i].rfind(prefix, 0) == 0) return i;
  }
  return std::string::npos;
}

TEST(TextTable, TheRuleEndsWithTheHeadingsNotWithALongLastCell) {
  // The cpu compare table's rule ran 411 characters, as wide as its longest reason.
  using Align = TextTable::Align;
  TextTable table({"strategy", "makespan", "reason"}, {Align::kLeft, Align::kRight, Align::kLeft});
  table.add_row({"single", "1.0 us", std::string(300, 'x')});
  const std::vector<std::string> lines = lines_of(table.render());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "strategy  makespan  reason");
  EXPECT_EQ(lines[1], std::string(lines[0].size(), '-'));
  // A right-aligned last column still sets the rule.
  TextTable numbers({"a", "b"}, {Align::kLeft, Align::kRight});
  numbers.add_row({"x", "12345"});
  EXPECT_EQ(lines_of(numbers.render())[1], std::string(8, '-'));
}

TEST(CompareTable, BestFirstWithPredictionsBeside) {
  const std::string text = compare_text(testing::sample_comparison());
  const auto lines = lines_of(text);
  EXPECT_EQ(lines[0], "chain, batch 2: measured on cpu (test-host), 1 to 3 timed repeats, best first");
  const size_t header = line_starting(lines, "strategy");
  ASSERT_NE(header, std::string::npos);
  EXPECT_NE(lines[header].find("predicted sim-machine"), std::string::npos);
  const size_t single = line_starting(lines, "single", header);
  const size_t horizontal = line_starting(lines, "horizontal", header);
  const size_t pipeline = line_starting(lines, "pipeline", header);
  ASSERT_LT(single, horizontal);
  ASSERT_LT(horizontal, pipeline);
  // single: 400 us median over 390..420: +-5% (20 / 400); speedup 1.
  EXPECT_NE(lines[single].find("400.0 us +-5%"), std::string::npos) << lines[single];
  EXPECT_NE(lines[single].find("1.00x"), std::string::npos);
  // horizontal: 0.889x; device time 900 us: compute 44%, transfer 6%, idle 50%; 1 KiB moved; peak 4 KiB;
  // the simulator predicts 22.5 us and a 1.78x win.
  const std::string& row = lines[horizontal];
  for (const char* expected : {"450.0 us", "0.89x", "44%", "6%", "50%", "1.00 KiB", "4.00 KiB",
                               "22.5 us, 1.78x wins", "loses", "device 0 holds 75% of the FLOPs"}) {
    EXPECT_NE(row.find(expected), std::string::npos) << expected << " in: " << row;
  }
  EXPECT_NE(lines[pipeline].find("does not fit"), std::string::npos);
  EXPECT_NE(text.find("best: single"), std::string::npos);
  // The predicted group gets its own table.
  EXPECT_NE(text.find("chain, batch 2: predicted on sim-machine (simulated)"), std::string::npos);
  EXPECT_NE(text.find("best: horizontal"), std::string::npos);
  // Plain ASCII: reads the same in a file.
  for (char c : text) EXPECT_TRUE(static_cast<unsigned char>(c) < 128) << "non-ASCII byte";
}

TEST(RunText, ShowsDevicesMovementCriticalPathAndVerdict) {
  const Comparison comparison = testing::sample_comparison();
  const std::string text = run_text(comparison.primary().runs[1]);
  EXPECT_NE(text.find("chain, batch 2: horizontal over 2 devices, cpu (cpu threads)"), std::string::npos) << text;
  EXPECT_NE(text.find("makespan: 450.0 us median of 1 repeat"), std::string::npos) << text;
  // Critical path 450 = compute 400 + transfer 50 (11%) + waiting 0.
  EXPECT_NE(text.find("critical path: 450.0 us = compute 400.0 us + transfer 50.0 us (11% of it) + waiting 0.0 us"),
            std::string::npos)
      << text;
  // 1 KiB in 50 us: 20.48 MB/s; all 50 us exposed (device 1 computes only after it).
  EXPECT_NE(text.find("transfer           1  1.00 KiB  50.0 us  50.0 us  0.0205 GB/s  0.0205 GB/s"), std::string::npos)
      << text;
  EXPECT_NE(text.find("verdict: loses (0.89x against single's 400.0 us): device 0 holds 75%"), std::string::npos)
      << text;
}

TEST(Units, CountsInPowersOfAThousandBytesInPowersOf1024) {
  EXPECT_EQ(si_count(999), "999");
  EXPECT_EQ(si_count(1234), "1.23 k");             // 1234 / 1000
  EXPECT_EQ(si_count(7.5e9), "7.50 G");
  EXPECT_EQ(si_count(2e18), "2000.00 P");          // no prefix past peta
  EXPECT_EQ(binary_bytes(512), "512 B");
  EXPECT_EQ(binary_bytes(1536), "1.50 KiB");       // 1536 / 1024
  EXPECT_EQ(binary_bytes(3.0 * 1024 * 1024 * 1024), "3.00 GiB");
  EXPECT_EQ(binary_bytes(-2048), "-2.00 KiB");     // a difference may be negative
}

}  // namespace
}  // namespace table_test
}  // namespace splitscope
