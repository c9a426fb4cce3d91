#pragma once
/// \file
/// The simulator's collective schedules, one per shape. A plan repeats a
/// few collective shapes (tensor parallelism: the same all-gather after
/// every layer), and building a ring's schedule allocates per send, which
/// an automatic search evaluating a thousand plans a second should not pay
/// a hundred times a plan.
///
/// A schedule depends on its op only through the op's kind, algorithm, root,
/// participants and input sizes; its deliveries name the op's own output
/// values, so users of a shared schedule take delivery i's value from
/// `op.outputs[i]` (what collective_schedule() puts there), not from it.

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "plan/collective_schedule.hpp"
#include "plan/plan.hpp"
#include "plan/ring_steps.hpp"

namespace splitscope {

class CollectiveScheduleCache {
 public:
  /// The schedule of collective `op` of `plan`; valid while this cache lives.
  const CollectiveSchedule& of(const Plan& plan, const PlanOp& op);
  /// The steps of ring collective `op` (ring_steps.hpp), or null where it
  /// is no ring; valid while this cache lives. Its deliveries are shared
  /// like a schedule's.
  const RingSteps* steps_of(const Plan& plan, const PlanOp& op);

 private:
  struct Shape {
    std::vector<int64_t> numbers;  ///< role, kind, algorithm, root, input and output counts, then (participant, input bytes) pairs
    bool operator==(const Shape&) const = default;
  };
  struct ShapeHash {
    size_t operator()(const Shape& shape) const;
  };
  static Shape shape_of(const Plan& plan, const PlanOp& op);
  std::unordered_map<Shape, CollectiveSchedule, ShapeHash> schedules_;  ///< nodes never move
  std::unordered_map<Shape, std::optional<RingSteps>, ShapeHash> steps_;
};

}  // namespace splitscope
