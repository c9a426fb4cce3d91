// What `run` and `compare` print of a topology placement
// (report/placement_text.hpp), on hand-made runs.

#include <gtest/gtest.h>

#include "report/placement_text.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace placement_text_test {
namespace {

using testing::sample_comparison;

TEST(PlacementText, DeviceMapsReadAsRunsOfMachineDevices) {
  EXPECT_EQ(device_map_text({0, 1, 2, 3}), "default");
  EXPECT_EQ(device_map_text({}), "default");
  EXPECT_EQ(device_map_text({8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}), "8-15,0-7");
  EXPECT_EQ(device_map_text({0, 2, 1, 3}), "0,2,1,3");
  EXPECT_EQ(device_map_text({0, 1, 2, 3, 4, 8, 9, 10}), "0-4,8-10");
}

TEST(PlacementText, OnlyTopologyRunsPrintTheirPlacement) {
  Comparison comparison = sample_comparison();
  RunGroup& group = comparison.groups.front();
  EXPECT_EQ(placement_lines(group.runs.front().summary), "");
  EXPECT_EQ(placement_table(group), "");

  for (RunReport& run : group.runs) {
    PlacementInfo& placement = run.summary.info.placement;
    placement.mode = "topology";
    placement.device_map = run.summary.devices == 2 ? std::vector<int>{1, 0} : std::vector<int>{0};
    placement.cross_node_bytes = 0;
    placement.default_cross_node_bytes = 2048;
    placement.default_makespan_us = 900;
  }
  const RunSummary& horizontal = group.runs[1].summary;
  ASSERT_EQ(horizontal.strategy, "horizontal");
  const std::string lines = placement_lines(horizontal);
  EXPECT_NE(lines.find("placement: topology, machine device of each plan device: 1,0"), std::string::npos) << lines;
  EXPECT_NE(lines.find("across nodes: 0 B (default mapping 2.00 KiB)"), std::string::npos) << lines;
  EXPECT_NE(lines.find("(default mapping 900.0 us)"), std::string::npos) << lines;

  const std::string table = placement_table(group);
  EXPECT_NE(table.find("placement topology on"), std::string::npos) << table;
  EXPECT_NE(table.find("horizontal"), std::string::npos) << table;
  EXPECT_NE(table.find("2.00 KiB"), std::string::npos) << table;
}

}  // namespace
}  // namespace placement_text_test
}  // namespace splitscope
