#include "exec/cpu/cpu_run_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "exec/cpu/compute_task.hpp"
#include "ir/graph.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

double gib(int64_t bytes) { return static_cast<double>(bytes) / double(int64_t{1} << 30); }

}  // namespace

int64_t CpuRunMemory::total() const {
  return activations + weights + gradients + optimizer_state + workspace + output + threads;
}

CpuRunMemory& CpuRunMemory::operator+=(const CpuRunMemory& other) {
  activations += other.activations;
  weights += other.weights;
  gradients += other.gradients;
  optimizer_state += other.optimizer_state;
  workspace += other.workspace;
  output += other.output;
  threads += other.threads;
  return *this;
}

CpuRunMemory cpu_run_memory(const Plan& plan, int threads) {
  CpuRunMemory memory;
  const int per_weight =
      plan.graph->is_training() ? plan.graph->training()->optimizer.state_per_param() : 0;
  // The cpu backend keeps every element in a float32 slot whatever the plan
  // stores it in (stored_precision.hpp rounds the values, not their slots),
  // and under amp the float32 masters beside the weights.
  const auto float_slots = [&plan](const Value& value) {
    return value.bytes / value_element_bytes(plan, value) * int64_t{sizeof(float)};
  };
  const int64_t weight_copies = storage_bytes(plan.precision).casts_weights() && plan.graph->is_training() ? 2 : 1;
  for (const Value& value : plan.values) {
    switch (value.role) {
      case ValueRole::kActivation: memory.activations += float_slots(value); break;
      case ValueRole::kParameter:
        memory.weights += weight_copies * float_slots(value);
        memory.optimizer_state += per_weight * float_slots(value);
        break;
      case ValueRole::kGradient: memory.gradients += float_slots(value); break;
    }
  }
  std::vector<int64_t> scratch(static_cast<size_t>(std::max(plan.devices, 1)), 0);
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute) continue;  // only kernels have scratch (a collective has no one device)
    int64_t& need = scratch.at(static_cast<size_t>(op.device));
    need = std::max(need, compute_scratch_floats(plan, op) * int64_t{4});
  }
  for (const int64_t bytes : scratch) memory.workspace += bytes;
  for (const int id : plan.outputs) memory.output += float_slots(plan.value(id));
  memory.threads = int64_t{std::max(threads, 1)} * kThreadBytes;
  return memory;
}

int64_t memory_margin_bytes(int64_t total_bytes) { return std::max(int64_t{512} << 20, total_bytes / 16); }

void check_memory_fits(const CpuRunMemory& memory, int64_t available_bytes, int64_t total_bytes, int64_t batch) {
  if (available_bytes <= 0) return;
  const int64_t margin = memory_margin_bytes(total_bytes);
  const int64_t usable = available_bytes - margin;
  if (memory.total() <= usable) return;
  // The parts that do not grow with the batch stay; the others shrink with it.
  const int64_t fixed = memory.total() - memory.per_batch();
  std::string fits;
  if (memory.per_batch() > 0 && batch > 1 && usable > fixed) {
    const auto rows = static_cast<int64_t>(static_cast<double>(usable - fixed) /
                                           static_cast<double>(memory.per_batch()) * static_cast<double>(batch));
    if (rows >= 1) fits = fmt::format("; a --batch of at most {} fits", std::min(rows, batch - 1));
  }
  throw InputError(
      "--backend cpu", "",
      fmt::format("the run needs {:.1f} GiB (activations {:.1f}, weights {:.1f}, gradients {:.1f}, optimizer "
                  "state {:.1f}, kernel workspace {:.1f}, output {:.1f}, threads {:.1f}) and {:.1f} GiB is free "
                  "for it ({:.1f} GiB available now, less a margin of {:.1f} GiB: docs/limits.md){}; use a smaller "
                  "--batch or network, or predict it with --backend sim",
                  gib(memory.total()), gib(memory.activations), gib(memory.weights), gib(memory.gradients),
                  gib(memory.optimizer_state), gib(memory.workspace), gib(memory.output), gib(memory.threads),
                  gib(std::max<int64_t>(usable, 0)), gib(available_bytes), gib(margin), fits));
}

}  // namespace splitscope
