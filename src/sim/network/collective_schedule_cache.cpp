#include "sim/network/collective_schedule_cache.hpp"

#include <functional>

namespace splitscope {

size_t CollectiveScheduleCache::ShapeHash::operator()(const Shape& shape) const {
  size_t hash = shape.numbers.size();
  for (int64_t number : shape.numbers) hash = hash * 1'000'003u ^ std::hash<int64_t>{}(number);
  return hash;
}

CollectiveScheduleCache::Shape CollectiveScheduleCache::shape_of(const Plan& plan, const PlanOp& op) {
  Shape shape;
  shape.numbers.reserve(6 + op.participants.size() + op.inputs.size());
  shape.numbers.push_back(static_cast<int64_t>(op.role));
  shape.numbers.push_back(static_cast<int64_t>(op.collective));
  shape.numbers.push_back(static_cast<int64_t>(op.algorithm));
  shape.numbers.push_back(op.device);
  // The counts too: a malformed op never shares a well-formed op's shape, so
  // collective_schedule() sees it and throws, naming it.
  shape.numbers.push_back(static_cast<int64_t>(op.inputs.size()));
  shape.numbers.push_back(static_cast<int64_t>(op.outputs.size()));
  for (int device : op.participants) shape.numbers.push_back(device);
  // Every input's size: a bucket's segments as well as each participant's.
  for (int input : op.inputs) shape.numbers.push_back(input >= 0 ? plan.value(input).bytes : -1);
  return shape;
}

const CollectiveSchedule& CollectiveScheduleCache::of(const Plan& plan, const PlanOp& op) {
  Shape shape = shape_of(plan, op);
  auto it = schedules_.find(shape);
  if (it == schedules_.end()) it = schedules_.emplace(std::move(shape), collective_schedule(plan, op)).first;
  return it->second;
}

const RingSteps* CollectiveScheduleCache::steps_of(const Plan& plan, const PlanOp& op) {
  Shape shape = shape_of(plan, op);
  auto it = steps_.find(shape);
  if (it == steps_.end()) it = steps_.emplace(std::move(shape), ring_steps(plan, op)).first;
  return it->second ? &*it->second : nullptr;
}

}  // namespace splitscope
