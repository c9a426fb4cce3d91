#include "plan/plan_part.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace splitscope {

DevicePart device_part(const Plan& plan, int device) {
  DevicePart result;
  Plan& part = result.plan;
  part.strategy = plan.strategy;
  part.traits = plan.traits;
  part.devices = 1;
  part.microbatches = plan.microbatches;
  part.graph = plan.graph;
  part.pipeline_schedule = plan.pipeline_schedule;
  part.notes = plan.notes;

  std::vector<int> value_id(plan.values.size(), -1);
  for (const Value& value : plan.values) {
    if (value.device != device) continue;
    Value copy = value;
    copy.id = static_cast<int>(part.values.size());
    copy.device = 0;
    value_id[static_cast<size_t>(value.id)] = copy.id;
    part.values.push_back(copy);
  }
  const auto renumbered = [&](int id) {
    if (id < 0) return id;
    const int mapped = value_id.at(static_cast<size_t>(id));
    if (mapped < 0) throw std::logic_error("device_part: value " + std::to_string(id) + " is on another device");
    return mapped;
  };
  std::vector<int> op_id(plan.ops.size(), -1);
  for (const PlanOp& op : plan.ops) {
    const std::vector<int> devices = op_devices(op);
    const bool here = std::find(devices.begin(), devices.end(), device) != devices.end();
    if (!here) continue;
    if (devices.size() != 1) {
      throw std::logic_error("device_part: " + op_label(plan, op) + " joins device " + std::to_string(device) +
                             " to another; its part cannot run alone");
    }
    PlanOp copy = op;
    copy.id = static_cast<int>(part.ops.size());
    copy.device = 0;
    for (int& id : copy.inputs) id = renumbered(id);
    for (int& id : copy.outputs) id = renumbered(id);
    copy.params = renumbered(copy.params);
    op_id[static_cast<size_t>(op.id)] = copy.id;
    result.plan_op.push_back(op.id);
    part.ops.push_back(std::move(copy));
  }
  for (Value& value : part.values) {
    if (value.producer >= 0) value.producer = op_id.at(static_cast<size_t>(value.producer));
  }
  const auto keep = [&](const std::vector<int>& ids) {
    std::vector<int> kept;
    for (int id : ids) {
      if (value_id.at(static_cast<size_t>(id)) >= 0) kept.push_back(value_id[static_cast<size_t>(id)]);
    }
    return kept;
  };
  part.inputs = keep(plan.inputs);
  part.parameters = keep(plan.parameters);
  part.outputs = keep(plan.outputs);
  part.schedule.assign(1, {});
  for (int id : plan.schedule.at(static_cast<size_t>(device))) part.schedule[0].push_back(op_id.at(static_cast<size_t>(id)));
  part.memory = {plan.memory.at(static_cast<size_t>(device))};
  return result;
}

}  // namespace splitscope
