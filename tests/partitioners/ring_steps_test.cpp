// A ring's steps (plan/ring_steps.hpp) against its unrolled sends
// (collective_schedule.hpp): the same deliveries, the largest send, and
// whether every send is that large, for every ring kind, even and uneven
// sizes, and a gradient bucket of several segments.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ir/training.hpp"
#include "partitioners/collective_plan.hpp"
#include "plan/collective_schedule.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/ring_steps.hpp"
#include "plan_test_support.hpp"

namespace splitscope {
namespace ring_steps_test {
namespace {

/// Checks ring_steps(plan, op) against collective_schedule(plan, op).
void expect_steps_match_schedule(const Plan& plan, const PlanOp& op, const std::string& what) {
  const std::optional<RingSteps> steps = ring_steps(plan, op);
  ASSERT_TRUE(steps.has_value()) << what;
  const CollectiveSchedule schedule = collective_schedule(plan, op);
  const size_t n = op.participants.size();
  EXPECT_EQ(static_cast<size_t>(steps->steps) * n, schedule.sends.size()) << what;
  EXPECT_EQ(steps->segments, schedule.segments) << what;
  int64_t largest = 0;
  bool even = true;
  for (const CollectiveSend& send : schedule.sends) {
    largest = std::max(largest, send.bytes);
    even = even && send.bytes == schedule.sends.front().bytes;
  }
  EXPECT_EQ(steps->send_bytes, largest) << what;
  EXPECT_EQ(steps->even, even) << what;
  ASSERT_EQ(steps->deliveries.size(), schedule.deliveries.size()) << what;
  for (size_t r = 0; r < n; ++r) {
    const CollectiveDelivery& got = steps->deliveries[r];
    const CollectiveDelivery& want = schedule.deliveries[r];
    EXPECT_EQ(got.device, want.device) << what << ", participant " << r;
    EXPECT_EQ(got.value, want.value) << what << ", participant " << r;
    EXPECT_EQ(got.local_copy, want.local_copy) << what << ", participant " << r;
    EXPECT_EQ(got.bytes_received, want.bytes_received) << what << ", participant " << r;
    EXPECT_EQ(got.first_element, want.first_element) << what << ", participant " << r;
  }
}

TEST(RingSteps, MatchTheScheduleOfEveryRingKindEvenOrNot) {
  for (CollectiveTest test : {CollectiveTest::kAllReduce, CollectiveTest::kAllGather, CollectiveTest::kReduceScatter}) {
    for (int devices : {2, 3, 5, 8}) {
      // 4000 bytes: 1000 floats (even over 2, 5 and 8, not 3); 4012: 1003 (even over none of them).
      for (int64_t bytes : {int64_t{4000}, int64_t{4012}, int64_t{4} * 4096}) {
        const Plan plan = collective_plan(test, devices, bytes);
        expect_steps_match_schedule(plan, plan.ops.front(),
                                    std::string(to_string(test)) + " of " + std::to_string(bytes) + " bytes over " +
                                        std::to_string(devices));
      }
    }
  }
}

TEST(RingSteps, MatchTheScheduleOfAGradientBucketOfSeveralSegments) {
  const auto graph = std::make_shared<const Graph>(training_graph(*testing::zoo_graph("mlp-small"), Optimizer{}));
  for (int devices : {2, 3}) {
    PartitionOptions options{devices, 1, nullptr};
    const Plan plan = make_partitioner("data")->partition(graph, options);
    int buckets = 0;
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCollective) continue;
      ++buckets;
      expect_steps_match_schedule(plan, op, "bucket " + std::to_string(op.id) + " over " + std::to_string(devices));
    }
    EXPECT_GT(buckets, 0);
  }
}

TEST(RingSteps, AreNoneForABroadcastOrAConcat) {
  const Plan broadcast = collective_plan(CollectiveTest::kBroadcast, 4, 4096);
  EXPECT_FALSE(ring_steps(broadcast, broadcast.ops.front()).has_value());
  const Plan send_recv = collective_plan(CollectiveTest::kSendRecv, 4, 4096);
  EXPECT_FALSE(ring_steps(send_recv, send_recv.ops.front()).has_value());
}

}  // namespace
}  // namespace ring_steps_test
}  // namespace splitscope
