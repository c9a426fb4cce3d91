#include "partitioners/gradient_all_reduce.hpp"

#include <algorithm>
#include <string>

#include "partitioners/collective_schedule.hpp"
#include "util/check.hpp"

namespace splitscope {

std::vector<int> add_gradient_all_reduce(Plan& plan, const std::vector<int>& partials) {
  const Value first = plan.value(partials.front());
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = CollectiveKind::kAllReduce;
  op.algorithm = default_algorithm(op.collective);
  op.node = first.node;
  op.device = -1;
  op.inputs = partials;
  op.id = static_cast<int>(plan.ops.size());
  Range rows = first.batch;
  for (int id : partials) {
    const Value& partial = plan.value(id);
    SPLITSCOPE_CHECK(partial.channels == first.channels && partial.reduce == first.reduce,
                     "gradient all-reduce over different weight slices");
    SPLITSCOPE_CHECK(std::find(op.participants.begin(), op.participants.end(), partial.device) == op.participants.end(), "two gradients of one weight slice on one device");
    op.participants.push_back(partial.device);
    rows = Range{std::min(rows.begin, partial.batch.begin), std::max(rows.end, partial.batch.end)};
  }
  SPLITSCOPE_CHECK(rows.size() == plan.graph->batch(), "replicas' gradients of " +
                                                            plan.graph->node(first.node).name +
                                                            " do not cover the batch");
  std::vector<int> sums;
  for (int device : op.participants) {
    Value value = first;
    value.id = static_cast<int>(plan.values.size());
    value.device = device;
    value.batch = rows;
    value.partial = PartialSum::kNone;
    value.producer = op.id;
    plan.values.push_back(value);
    op.outputs.push_back(value.id);
    sums.push_back(value.id);
  }
  const int64_t n = static_cast<int64_t>(partials.size());
  op.payload_bytes = first.bytes;
  op.bytes_moved = 2 * (n - 1) * first.bytes;  // 2(N-1)/N·B per device, N devices
  plan.ops.push_back(std::move(op));
  return sums;
}

}  // namespace splitscope
