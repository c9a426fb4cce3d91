#pragma once
/// \file
/// A hybrid plan's traffic by the group it stays in (Plan::degrees): bytes
/// between two devices of one tensor group (its all-reduces and gathers),
/// between two stages of one replica (pipeline hand-offs), and between
/// replicas (the gradients' data-parallel all-reduce). Read off the traffic
/// matrix (plan_traffic.hpp), so it counts what the collectives' algorithms send.

#include <cstdint>

#include "plan/plan_traffic.hpp"

namespace splitscope {

struct GroupTraffic {
  int64_t tensor = 0;    ///< inside a tensor group: same replica, same stage
  int64_t pipeline = 0;  ///< between stages of one replica
  int64_t data = 0;      ///< between replicas
};

/// `traffic` of a plan of `degrees` (its devices: their product), split by group.
GroupTraffic group_traffic(const DeviceTraffic& traffic, const ParallelDegrees& degrees);

}  // namespace splitscope
