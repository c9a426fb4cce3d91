#include "sim/engine/replica_view.hpp"

namespace splitscope {

Plan widened_for_replicas(const Plan& plan) {
  Plan view = plan;
  if (!plan.replicas) return view;
  const int each = plan.replicas->devices_each;
  const auto count = static_cast<size_t>(plan.replicas->count);
  for (PlanOp& op : view.ops) {
    if (!op.spans_replicas) continue;
    const std::vector<int> participants = op.participants;
    const std::vector<int> inputs = op.inputs;
    const std::vector<int> outputs = op.outputs;
    op.participants.clear();
    op.inputs.clear();
    op.outputs.clear();
    op.participants.reserve(participants.size() * count);
    op.inputs.reserve(inputs.size() * count);
    op.outputs.reserve(outputs.size() * count);
    for (size_t r = 0; r < count; ++r) {
      for (int device : participants) op.participants.push_back(device + static_cast<int>(r) * each);
      op.inputs.insert(op.inputs.end(), inputs.begin(), inputs.end());
      op.outputs.insert(op.outputs.end(), outputs.begin(), outputs.end());
    }
  }
  return view;
}

}  // namespace splitscope
