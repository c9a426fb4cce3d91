#include "partitioners/plan_memory.hpp"

#include <algorithm>
#include <limits>

namespace splitscope {
namespace {

/// Weights each device holds: its parameter values (one per distinct slice
/// of each weight set, however many steps or micro-batches read it).
void add_params(const Plan& plan, std::vector<DeviceMemory>& memory) {
  for (int id : plan.parameters) {
    const Value& value = plan.value(id);
    memory.at(static_cast<size_t>(value.device)).params += value.bytes;
  }
}

}  // namespace

std::vector<DeviceMemory> compute_memory(const Plan& plan) {
  std::vector<DeviceMemory> memory(static_cast<size_t>(plan.devices));
  add_params(plan, memory);

  constexpr int kForever = std::numeric_limits<int>::max();
  std::vector<int> last_use(plan.values.size(), -1);
  for (const PlanOp& op : plan.ops) {
    for (int input : op.inputs) {
      if (input >= 0) last_use[static_cast<size_t>(input)] = op.id;
    }
  }
  for (int output : plan.outputs) last_use[static_cast<size_t>(output)] = kForever;

  std::vector<int64_t> live(static_cast<size_t>(plan.devices), 0);
  std::vector<int64_t> received(static_cast<size_t>(plan.devices), 0);
  auto note_peak = [&](size_t d) {
    memory[d].activations_peak = std::max(memory[d].activations_peak, live[d]);
    memory[d].transfer_buffers = std::max(memory[d].transfer_buffers, received[d]);
  };
  auto note_peaks = [&]() {
    for (size_t d = 0; d < live.size(); ++d) note_peak(d);
  };
  for (int input : plan.inputs) live[static_cast<size_t>(plan.value(input).device)] += plan.value(input).bytes;
  note_peaks();

  std::vector<std::vector<int>> freed_after(plan.ops.size());
  for (const Value& value : plan.values) {
    const int last = last_use[static_cast<size_t>(value.id)];
    if (last == kForever) continue;
    // A value nobody reads is freed right after the op that wrote it.
    const int end = last >= 0 ? last : value.producer;
    if (end >= 0) freed_after[static_cast<size_t>(end)].push_back(value.id);
  }
  for (const PlanOp& op : plan.ops) {
    const bool moved_in = op.role == OpRole::kTransfer || op.role == OpRole::kCollective;
    for (int output : op.outputs) {
      const Value& value = plan.value(output);
      live[static_cast<size_t>(value.device)] += value.bytes;
      if (moved_in) received[static_cast<size_t>(value.device)] += value.bytes;
    }
    // Only the devices this op wrote to can have a new peak: noting every
    // device after every op made plans over 10,000 devices take a minute.
    for (int output : op.outputs) note_peak(static_cast<size_t>(plan.value(output).device));
    for (int id : freed_after[static_cast<size_t>(op.id)]) {
      const Value& value = plan.value(id);
      live[static_cast<size_t>(value.device)] -= value.bytes;
      const int producer = value.producer;
      if (producer >= 0) {
        const OpRole role = plan.op(producer).role;
        if (role == OpRole::kTransfer || role == OpRole::kCollective) {
          received[static_cast<size_t>(value.device)] -= value.bytes;
        }
      }
    }
  }
  for (DeviceMemory& device : memory) device.peak = device.params + device.activations_peak;
  return memory;
}

}  // namespace splitscope
