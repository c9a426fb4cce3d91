// `hybrid` on a transformer (partitioners/hybrid.hpp): each pipeline
// stage's tensor group splits its blocks by heads as `tensor` does; the
// all-reduces of each group counted by hand, with and without sequence
// parallelism, and the tensor degrees it refuses.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/training.hpp"
#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace hybrid_heads_test {
namespace {

// gpt-small: B 4, T 8, H 16, 2 blocks of 2 heads, vocabulary 50. Its stage
// units: wte_wpe (0), block 0 (units 1-10), block 1 from h1_ln_1 (11).
constexpr int64_t kT = 8, kH = 16;
constexpr int kSecondBlock = 11;

Plan hybrid_plan(bool train, bool sequence_parallel) {
  auto graph = zoo_graph("gpt-small");
  if (train) graph = std::make_shared<const Graph>(training_graph(*graph, Optimizer{}));
  PartitionOptions options;
  options.devices = 4;
  options.microbatches = 2;
  options.degrees = ParallelDegrees{2, 2, 1};
  options.stage_starts = {0, kSecondBlock};
  options.sequence_parallel = sequence_parallel;
  Plan plan = make_plan(*make_partitioner("hybrid"), graph, options);
  check(plan);
  return plan;
}

/// Collectives of each kind by tensor group (its participants), with the
/// payload and bytes of every one of them checked against `payload` and `moved`.
std::map<std::pair<CollectiveKind, std::set<int>>, int> collectives_by_group(const Plan& plan, int64_t payload,
                                                                             int64_t all_reduce_moved,
                                                                             int64_t gather_moved) {
  std::map<std::pair<CollectiveKind, std::set<int>>, int> counts;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCollective) continue;
    ++counts[{op.collective, std::set<int>(op.participants.begin(), op.participants.end())}];
    if (op.payload_bytes != payload) continue;  // the layer norms' gradients: checked apart
    EXPECT_EQ(op.bytes_moved, op.collective == CollectiveKind::kAllReduce ? all_reduce_moved : gather_moved)
        << op_label(plan, op);
  }
  return counts;
}

TEST(HybridHeads, EachTensorGroupAllReducesItsOwnBlocks) {
  // A micro-batch of 2 rows: [2, 8, 16] floats, 1 KiB; a ring all-reduce
  // over 2 devices moves 2·(2-1)·1 KiB.
  const int64_t payload = 2 * kT * kH * 4;
  const std::set<int> first{0, 1}, second{2, 3};
  const auto AR = CollectiveKind::kAllReduce;
  // Forward: per micro-batch 2 all-reduces a block (attention's output
  // projection, the MLP's second linear) in the group that holds it.
  const Plan forward = hybrid_plan(false, false);
  EXPECT_EQ(collectives_by_group(forward, payload, 2 * payload, 0),
            (std::map<std::pair<CollectiveKind, std::set<int>>, int>{{{AR, first}, 2 * 2}, {{AR, second}, 2 * 2}}));
  for (const PlanOp& op : forward.ops) {
    if (op.role != OpRole::kCollective) continue;
    EXPECT_EQ(op.payload_bytes, payload) << op_label(forward, op);
  }
  // The residual stream crosses the stage boundary whole, from the first
  // group's first device to each device of the next: 2 transfers a micro-batch.
  int transfers = 0;
  for (const PlanOp& op : forward.ops) {
    if (op.role != OpRole::kTransfer) continue;
    ++transfers;
    EXPECT_EQ(op.bytes_moved, payload);
    EXPECT_EQ(op.src_device, 0);
  }
  EXPECT_EQ(transfers, 2 * 2);
  // Training adds, per micro-batch, the input gradients of the column
  // splits: QKV's and the MLP's first in each block, and the LM head's in
  // the second stage (1 and 2 more than forward's 2 and 2).
  const Plan train = hybrid_plan(true, false);
  EXPECT_EQ(collectives_by_group(train, payload, 2 * payload, 0),
            (std::map<std::pair<CollectiveKind, std::set<int>>, int>{{{AR, first}, 2 * (2 + 2)},
                                                                      {{AR, second}, 2 * (2 + 3)}}));
}

TEST(HybridHeads, SequenceParallelGroupsGatherAndScatterInstead) {
  const int64_t payload = 2 * kT * kH * 4;
  const std::set<int> first{0, 1}, second{2, 3};
  const auto AR = CollectiveKind::kAllReduce, AG = CollectiveKind::kAllGather, RS = CollectiveKind::kReduceScatter;
  // Forward, per micro-batch: 2 all-gathers and 2 reduce-scatters a block
  // where there were 2 all-reduces, and the LM head's input gathered in
  // the second group; each moves (2-1)·1 KiB.
  const Plan forward = hybrid_plan(false, true);
  EXPECT_EQ(collectives_by_group(forward, payload, 2 * payload, payload),
            (std::map<std::pair<CollectiveKind, std::set<int>>, int>{
                {{AG, first}, 2 * 2}, {{RS, first}, 2 * 2}, {{AG, second}, 2 * 3}, {{RS, second}, 2 * 2}}));
  // Training, per micro-batch: backward mirrors forward (an all-gather of
  // each row split's output gradient, a reduce-scatter of each column
  // split's input gradient), the first group all-gathers the embedding's
  // output gradient, and each of the 5 layer norms' weight gradients is
  // all-reduced once in its group (2·16 floats, after the micro-batches).
  const Plan train = hybrid_plan(true, true);
  EXPECT_EQ(collectives_by_group(train, payload, 2 * payload, payload),
            (std::map<std::pair<CollectiveKind, std::set<int>>, int>{{{AG, first}, 2 * (2 + 2 + 1)},
                                                                      {{RS, first}, 2 * (2 + 2)},
                                                                      {{AR, first}, 2},
                                                                      {{AG, second}, 2 * (3 + 2)},
                                                                      {{RS, second}, 2 * (2 + 3)},
                                                                      {{AR, second}, 3}}));
  for (const PlanOp& op : train.ops) {
    if (op.role != OpRole::kCollective || op.collective != AR) continue;
    EXPECT_EQ(op.payload_bytes, 2 * kH * 4) << op_label(train, op);
    EXPECT_EQ(op.bytes_moved, 2 * (2 - 1) * (2 * kH * 4)) << op_label(train, op);
  }
}

TEST(HybridHeads, RefusesTensorDegreesThatDoNotDivideTheHeads) {
  PartitionOptions options;
  options.devices = 4;
  options.degrees = ParallelDegrees{4, 1, 1};
  try {
    (void)make_plan(*make_partitioner("hybrid"), zoo_graph("gpt-small"), options);
    FAIL() << "4 devices split 2 heads";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--degrees"), std::string::npos) << message;
    EXPECT_NE(message.find("use a tensor degree of 1, 2"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace hybrid_heads_test
}  // namespace splitscope::testing
