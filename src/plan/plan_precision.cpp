#include "plan/plan_precision.hpp"

#include "plan/plan_memory.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat32Bytes = 4;

/// `bytes` of float32 elements restated at `element_bytes` per element.
int64_t restated_bytes(int64_t bytes, int64_t element_bytes) { return bytes / kFloat32Bytes * element_bytes; }

}  // namespace

Plan store_at_precision(Plan plan, Precision precision) {
  SPLITSCOPE_CHECK(plan.precision == Precision::kFp32, "a plan is restated at a precision once, from float32");
  plan.precision = precision;
  const StorageBytes storage = storage_bytes(precision);
  if (storage.activation == kFloat32Bytes && storage.weight == kFloat32Bytes && !storage.casts_weights()) {
    return plan;  // fp32 and tf32 store float32: the bytes are already right
  }
  // A compute op reads activations and weight copies and writes activations
  // and gradients: one size at every precision (ir/precision.hpp).
  SPLITSCOPE_CHECK(storage.activation == storage.weight && storage.weight == storage.gradient,
                   "compute ops' bytes scale as one");
  for (Value& value : plan.values) value.bytes = restated_bytes(value.bytes, value_element_bytes(plan, value));
  const std::optional<TrainingSpec>& training = plan.graph->training();
  for (PlanOp& op : plan.ops) {
    switch (op.role) {
      case OpRole::kCompute:
      case OpRole::kEpilogue:
        op.bytes_read = restated_bytes(op.bytes_read, storage.activation);
        op.bytes_written = restated_bytes(op.bytes_written, storage.activation);
        break;
      case OpRole::kTransfer:
      case OpRole::kCollective: {
        const int64_t element = value_element_bytes(plan, plan.value(op.outputs.at(0)));
        op.bytes_moved = restated_bytes(op.bytes_moved, element);
        op.payload_bytes = restated_bytes(op.payload_bytes, element);
        break;
      }
      case OpRole::kUpdate: {
        SPLITSCOPE_CHECK(training.has_value(), "an update op belongs to a training graph");
        const int64_t weights = plan.value(op.params).bytes / storage.weight;
        op.bytes_read = training->optimizer.update_bytes_read(weights, storage);
        op.bytes_written = training->optimizer.update_bytes_written(weights, storage);
        break;
      }
    }
  }
  plan.memory = compute_memory(plan);
  return plan;
}

}  // namespace splitscope
