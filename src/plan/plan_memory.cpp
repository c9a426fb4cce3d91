#include "plan/plan_memory.hpp"

#include "plan/keyed_lists.hpp"
#include "plan/plan_walk.hpp"
#include "plan/zero_sharding.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace splitscope {
namespace {

/// Weights each device holds: its parameter values (one per distinct slice
/// of each weight set, however many steps or micro-batches read it), and
/// beside each, where a training plan's precision keeps them (amp), its fp32
/// masters (an inference plan has no update to keep them for).
void add_params(const Plan& plan, std::vector<DeviceMemory>& memory) {
  const StorageBytes storage = storage_bytes(plan.precision);
  const int64_t master = plan.graph->is_training() ? storage.master : 0;
  for (int id : plan.parameters) {
    const Value& value = plan.value(id);
    memory.at(static_cast<size_t>(value.device)).params += value.bytes + value.bytes / storage.weight * master;
  }
}

/// Training: the finished gradients each update reads, and the optimizer's
/// state beside the weights it updates.
void add_training_state(const Plan& plan, std::vector<DeviceMemory>& memory) {
  if (!plan.graph->is_training()) return;
  const int per_param = plan.graph->training()->optimizer.state_per_param();
  const StorageBytes storage = storage_bytes(plan.precision);
  if (plan.traits.parameter_server) {
    // Each replica keeps its gradients for the shards, which hold the
    // optimizer's state (outside the plan).
    for (const Value& value : plan.values) {
      if (value.role == ValueRole::kGradient) memory.at(static_cast<size_t>(value.device)).gradients += value.bytes;
    }
    return;
  }
  const int64_t master = storage.master;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kUpdate) continue;
    DeviceMemory& device = memory.at(static_cast<size_t>(op.device));
    device.gradients += plan.value(op.inputs.at(0)).bytes;
    const int64_t elements = plan.value(op.params).bytes / storage.weight;
    // ZeRO-1: the replica keeps its shard of the state and of the masters
    // (add_params counted the whole slice's masters).
    const ZeroShard shard = zero_shard(plan, op);
    const int64_t kept = shard_elements(elements, shard);
    device.optimizer_state += per_param * kept * storage.optimizer_state;
    device.params -= (elements - kept) * master;
  }
}

/// The order the ops run in: op order where every schedule follows it (it is
/// then the walk's own order, found without a walk: partitioners build plans
/// of a million ops), else the walk that obeys the schedules.
std::vector<int> run_order(const Plan& plan) {
  const bool in_op_order = std::all_of(plan.schedule.begin(), plan.schedule.end(),
                                       [](const std::vector<int>& ops) { return std::is_sorted(ops.begin(), ops.end()); });
  if (!in_op_order) return walk_plan(plan).order;
  std::vector<int> order(plan.ops.size());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

std::vector<DeviceMemory> compute_memory(const Plan& plan) {
  std::vector<DeviceMemory> memory(static_cast<size_t>(plan.devices));
  add_params(plan, memory);
  add_training_state(plan, memory);
  // Values live and die in the order the ops run: the walk that obeys each
  // device's schedule (a 1F1B schedule frees a micro-batch's activations
  // before the next one's forward; op order would not).
  const std::vector<int> order = run_order(plan);

  constexpr int kForever = std::numeric_limits<int>::max();
  std::vector<int> last_use(plan.values.size(), -1);
  for (int id : order) {
    for (int input : plan.op(id).inputs) {
      if (input >= 0) last_use[static_cast<size_t>(input)] = id;
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

  // By op, the values freed after it (a vector per op was an allocation per op).
  KeyedLists freed_after(plan.ops.size(), plan.values.size());
  for (const Value& value : plan.values) {
    const int last = last_use[static_cast<size_t>(value.id)];
    if (last == kForever) continue;
    // A value nobody reads is freed right after the op that wrote it.
    const int end = last >= 0 ? last : value.producer;
    if (end >= 0) freed_after.append(static_cast<size_t>(end), value.id);
  }
  // Gradients count apart (DeviceMemory::gradients): a framework sums each
  // weight slice's gradient in one buffer, where the plan writes a new value
  // per micro-batch.
  const auto held = [](const Value& value) { return value.role == ValueRole::kGradient ? 0 : value.bytes; };
  for (int id : order) {
    const PlanOp& op = plan.op(id);
    const bool moved_in = op.role == OpRole::kTransfer || op.role == OpRole::kCollective;
    for (int output : op.outputs) {
      const Value& value = plan.value(output);
      live[static_cast<size_t>(value.device)] += held(value);
      if (moved_in) received[static_cast<size_t>(value.device)] += value.bytes;
    }
    // Only the devices this op wrote to can have a new peak: noting every
    // device after every op made plans over 10,000 devices take a minute.
    for (int output : op.outputs) note_peak(static_cast<size_t>(plan.value(output).device));
    for (int id : freed_after[static_cast<size_t>(op.id)]) {
      const Value& value = plan.value(id);
      live[static_cast<size_t>(value.device)] -= held(value);
      const int producer = value.producer;
      if (producer >= 0) {
        const OpRole role = plan.op(producer).role;
        if (role == OpRole::kTransfer || role == OpRole::kCollective) {
          received[static_cast<size_t>(value.device)] -= value.bytes;
        }
      }
    }
  }
  for (DeviceMemory& device : memory) {
    device.peak = device.params + device.gradients + device.optimizer_state + device.activations_peak;
  }
  return memory;
}

}  // namespace splitscope
