// compare_outputs: max |a - b| / max |reference|, where, and refusals.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "exec/output_compare.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace output_compare_test {
namespace {

TEST(OutputCompare, RelativeErrorAndWorstPosition) {
  const HostTensor reference{{2, 3}, {1, -4, 2, 0.5f, 3, -1}};
  HostTensor output = reference;
  output.data[4] = 3.02f;   // [1, 1]: off by 0.02
  output.data[1] = -4.01f;  // [0, 1]: off by 0.01
  const OutputComparison c = compare_outputs(output, reference);
  // max |a - b| = 0.02 (float rounding aside), max |ref| = 4: 0.005.
  EXPECT_NEAR(c.max_abs_error, 0.02, 1e-6);
  EXPECT_EQ(c.max_abs_reference, 4.0);
  EXPECT_NEAR(c.max_relative_error, 0.005, 1e-6);
  EXPECT_EQ(c.worst_index, 4);
  EXPECT_EQ(c.worst_position, (std::vector<int64_t>{1, 1}));
  EXPECT_FLOAT_EQ(c.worst_output, 3.02f);
  EXPECT_FLOAT_EQ(c.worst_reference, 3.0f);
  EXPECT_FALSE(c.within(1e-4));
  EXPECT_TRUE(c.within(1e-2));
  EXPECT_NE(c.describe().find("at [1, 1]"), std::string::npos) << c.describe();
}

TEST(OutputCompare, IdenticalTensors) {
  const HostTensor t{{3}, {1, 2, 3}};
  const OutputComparison c = compare_outputs(t, t);
  EXPECT_EQ(c.max_relative_error, 0.0);
  EXPECT_EQ(c.worst_index, -1);
  EXPECT_TRUE(c.within(0.0));
}

TEST(OutputCompare, AllZeroReferenceFallsBackToTheAbsoluteError) {
  const OutputComparison c = compare_outputs({{2}, {0, 0.25f}}, {{2}, {0, 0}});
  EXPECT_EQ(c.max_relative_error, 0.25);
}

TEST(OutputCompare, NonFiniteValuesFail) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const HostTensor reference{{4}, {1, 2, 3, 4}};
  const OutputComparison with_nan = compare_outputs({{4}, {1, 2.5f, nan, 4}}, reference);
  EXPECT_TRUE(std::isinf(with_nan.max_relative_error));
  EXPECT_EQ(with_nan.worst_index, 2);
  EXPECT_FALSE(with_nan.within(1e-4));
  EXPECT_EQ(compare_outputs({{4}, {1, 2, 3, 4}}, {{4}, {inf, 2, 3, 4}}).worst_index, 0);
}

TEST(OutputCompare, ShapeMismatchIsARunError) {
  try {
    compare_outputs({{2, 3}, std::vector<float>(6)}, {{3, 2}, std::vector<float>(6)});
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_STREQ(e.what(), "cannot compare outputs of different shapes: [2, 3] against the reference's [3, 2]");
  }
  EXPECT_THROW(compare_outputs({{2, 3}, std::vector<float>(5)}, {{2, 3}, std::vector<float>(6)}), RunError);
}

}  // namespace
}  // namespace output_compare_test
}  // namespace splitscope
