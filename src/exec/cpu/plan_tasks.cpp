#include "exec/cpu/plan_tasks.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "exec/cpu/collectives.hpp"
#include "exec/cpu/compute_task.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// The device collective output `index` lives on.
int output_device(const Plan& plan, const PlanOp& op, size_t index) {
  return plan.value(op.outputs.at(index)).device;
}

TaskFunction transfer_task(const Plan& plan, const PlanOp& op, ValueBuffers& buffers) {
  SPLITSCOPE_CHECK(op.inputs.size() == 1 && op.outputs.size() == 1, "a transfer moves one value");
  const Value& from = plan.value(op.inputs[0]);
  const Value& to = plan.value(op.outputs[0]);
  SPLITSCOPE_CHECK(from.batch == to.batch && from.channels == to.channels && from.device == op.src_device &&
                       to.device == op.device,
                   "transfer " + op_label(plan, op) + " does not copy its value unchanged between its devices");
  const ConstChannelBlock source = std::as_const(buffers).block(from.id);
  const ChannelBlock target = buffers.block(to.id);
  return [source, target](TaskContext&) { copy_channels(source, target); };
}

TaskFunction collective_task(const Plan& plan, const PlanOp& op, size_t index, ValueBuffers& buffers) {
  std::vector<ConstChannelBlock> parts;
  for (int input : op.inputs) parts.push_back(std::as_const(buffers).block(input));
  const ChannelBlock target = buffers.block(op.outputs.at(index));
  for (const ConstChannelBlock& part : parts) {
    SPLITSCOPE_CHECK(part.rows == target.rows && part.inner == target.inner,
                     op_label(plan, op) + ": inputs and outputs hold different rows");
  }
  if (op.collective == CollectiveKind::kAllReduce) {
    return [parts = std::move(parts), target](TaskContext&) { sum_blocks(parts, target); };
  }
  return [parts = std::move(parts), target](TaskContext&) { gather_channels(parts, target); };
}

}  // namespace

int64_t collective_received_bytes(const Plan& plan, const PlanOp& op, size_t index) {
  if (op.collective == CollectiveKind::kAllReduce) {
    // An even share; the first (bytes_moved mod n) outputs take one byte more, so the shares add up.
    const int64_t n = static_cast<int64_t>(std::max<size_t>(op.outputs.size(), 1));
    return op.bytes_moved / n + (static_cast<int64_t>(index) < op.bytes_moved % n ? 1 : 0);
  }
  const int device = output_device(plan, op, index);
  int64_t bytes = 0;
  for (int input : op.inputs) {
    const Value& value = plan.value(input);
    if (value.device != device) bytes += value.bytes;
  }
  return bytes;
}

PlanTasks build_plan_tasks(const Plan& plan, ValueBuffers& buffers, WeightStore& weights) {
  PlanTasks tasks;
  std::vector<int> writer(plan.values.size(), -1);  // value id -> the task writing it
  std::vector<int> op_task(plan.ops.size(), -1);    // compute/epilogue op id -> its task

  // Per-device scratch, sized for the hungriest op of the device.
  tasks.scratch.resize(static_cast<size_t>(plan.devices));
  std::vector<int64_t> scratch_floats(static_cast<size_t>(plan.devices), 0);
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute) continue;
    auto& need = scratch_floats.at(static_cast<size_t>(op.device));
    need = std::max(need, compute_scratch_floats(plan, op));
  }
  for (size_t d = 0; d < scratch_floats.size(); ++d) tasks.scratch[d].assign(static_cast<size_t>(scratch_floats[d]), 0.0f);

  const auto add = [&](Task task, TaskSpan span, const std::vector<int>& reads) {
    const int id = tasks.graph.add(std::move(task));
    tasks.spans.push_back(span);
    for (int value : reads) {
      if (value < 0 || plan.value(value).producer < 0) continue;
      const int before = writer.at(static_cast<size_t>(value));
      SPLITSCOPE_CHECK(before >= 0, fmt::format("{} reads value {} before any op writes it",
                                                tasks.graph.task(id).label, value));
      tasks.graph.add_dependency(before, id);
    }
    return id;
  };

  for (const PlanOp& op : plan.ops) {
    const std::string label = op_label(plan, op);
    switch (op.role) {
      case OpRole::kCompute:
      case OpRole::kEpilogue: {
        SPLITSCOPE_CHECK(op.device >= 0 && op.device < plan.devices, label + " is on no device of the plan");
        float* scratch = tasks.scratch[static_cast<size_t>(op.device)].data();
        TaskFunction work = compute_task(plan, op, buffers, weights, scratch);
        const int id = add({op.device, Lane::kCompute, label, std::move(work)},
                           {op.id, op.device, Lane::kCompute, SpanKind::kCompute, op.flops, 0}, op.inputs);
        op_task[static_cast<size_t>(op.id)] = id;
        for (int value : op.outputs) writer.at(static_cast<size_t>(value)) = id;
        break;
      }
      case OpRole::kTransfer: {
        const int id = add({op.device, Lane::kCopyIn, label, transfer_task(plan, op, buffers)},
                           {op.id, op.device, Lane::kCopyIn, SpanKind::kTransfer, 0, op.bytes_moved}, op.inputs);
        writer.at(static_cast<size_t>(op.outputs.at(0))) = id;
        break;
      }
      case OpRole::kCollective: {
        for (size_t k = 0; k < op.outputs.size(); ++k) {
          const int device = output_device(plan, op, k);
          const int id = add({device, Lane::kCopyIn, fmt::format("{} (to device {})", label, device),
                              collective_task(plan, op, k, buffers)},
                             {op.id, device, Lane::kCopyIn, SpanKind::kCollective, 0,
                              collective_received_bytes(plan, op, k)},
                             op.inputs);
          writer.at(static_cast<size_t>(op.outputs[k])) = id;
        }
        break;
      }
    }
  }

  // Each device runs its compute and epilogue ops in schedule order.
  std::vector<int> scheduled(plan.ops.size(), 0);
  for (size_t device = 0; device < plan.schedule.size(); ++device) {
    int previous = -1;
    for (int op : plan.schedule[device]) {
      const int task = op_task.at(static_cast<size_t>(op));
      SPLITSCOPE_CHECK(task >= 0 && plan.op(op).device == static_cast<int>(device),
                       fmt::format("the schedule of device {} lists op {}, which is not a compute op there", device, op));
      scheduled[static_cast<size_t>(op)] += 1;
      if (previous >= 0) tasks.graph.add_dependency(previous, task);
      previous = task;
    }
  }
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute && op.role != OpRole::kEpilogue) continue;
    SPLITSCOPE_CHECK(scheduled[static_cast<size_t>(op.id)] == 1,
                     fmt::format("{} appears {} times in the schedule of device {}", op_label(plan, op),
                                 scheduled[static_cast<size_t>(op.id)], op.device));
  }
  return tasks;
}

}  // namespace splitscope
