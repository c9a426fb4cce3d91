#pragma once
// What the training tests hold one run to another by: every step's loss and
// the last step's output, equal within 1e-4 relative (float32 sums taken in
// another order, as a split or a replica takes them).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "timeline/run_result.hpp"

namespace splitscope::testing_support {

struct TrainedRun {
  std::vector<double> losses;
  HostTensor output;  ///< the forward output of the last step
};

inline void expect_same_training(const TrainedRun& a, const TrainedRun& b, const std::string& what) {
  ASSERT_EQ(a.losses.size(), b.losses.size()) << what;
  for (size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_NEAR(a.losses[i], b.losses[i], 1e-4 * std::abs(b.losses[i])) << what << " step " << i;
  }
  ASSERT_EQ(a.output.data.size(), b.output.data.size()) << what;
  for (size_t i = 0; i < a.output.data.size(); ++i) {
    EXPECT_NEAR(a.output.data[i], b.output.data[i], 1e-4 * std::max(1.0f, std::abs(b.output.data[i])))
        << what << " output " << i;
  }
}

}  // namespace splitscope::testing_support
