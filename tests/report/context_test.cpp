// The context block and the small formatting rules every report shares.

#include <gtest/gtest.h>

#include "report/report_context.hpp"
#include "report/units.hpp"
#include "util/strings.hpp"
#include "splitscope_config.h"

namespace splitscope {
namespace context_test {
namespace {

TEST(ReportContext, DescribesThisBuildAndCommandLine) {
  const ReportContext context = make_report_context({"splitscope", "compare", "mlp"});
  EXPECT_EQ(context.version, SPLITSCOPE_VERSION);
  EXPECT_EQ(context.build_type, SPLITSCOPE_BUILD_TYPE);
  EXPECT_FALSE(context.git_revision.empty());
  EXPECT_FALSE(context.host.empty());
  EXPECT_EQ(context.command_line, (std::vector<std::string>{"splitscope", "compare", "mlp"}));
  // ISO 8601 with the UTC offset: 2024-01-02T03:04:05+0000 is 24 characters.
  ASSERT_EQ(context.date.size(), 24u) << context.date;
  EXPECT_EQ(context.date[10], 'T');
}

TEST(ReportContext, QuotesTheCommandLineForAShell) {
  EXPECT_EQ(quoted_command_line({"splitscope", "run", "--machine", "h100 pcie", "--report=a.json", "it's", ""}),
            "splitscope run --machine 'h100 pcie' --report=a.json 'it'\\''s' ''");
}

TEST(Units, CountsTakeTheirNounsPluralUnlessOne) {
  // Issue 54 item 8: "1 devices", "1 ranks".
  EXPECT_EQ(counted(1, "device"), "1 device");
  EXPECT_EQ(counted(4, "device"), "4 devices");
  EXPECT_EQ(counted(0, "rank"), "0 ranks");
  EXPECT_EQ(counted(2, "body", "bodies"), "2 bodies");
}

TEST(Units, TimesSharesAndSpeedups) {
  EXPECT_EQ(format_ms(0.0123), "12.3 us");
  EXPECT_EQ(format_ms(12.3456), "12.346 ms");
  EXPECT_EQ(format_ms(12345), "12.345 s");
  EXPECT_EQ(format_share(0.643), "64%");
  EXPECT_EQ(format_share(0.003), "<1%");
  EXPECT_EQ(format_share(0), "0%");
  EXPECT_EQ(format_speedup(1.5), "1.50x");
  EXPECT_EQ(format_speedup(0.1), "0.10x");
  // Issue 54 item 8: "0.00x against single's 23.6 us" said nothing; two significant digits below 0.1x.
  EXPECT_EQ(format_speedup(0.0023456), "0.0023x");
  EXPECT_EQ(format_speedup(0.05), "0.05x");
  EXPECT_EQ(format_speedup(0), "0.00x");
  EXPECT_EQ(format_gbps(23.456), "23.46 GB/s");
  EXPECT_EQ(format_gbps(0.02048), "0.0205 GB/s");
}

}  // namespace
}  // namespace context_test
}  // namespace splitscope
