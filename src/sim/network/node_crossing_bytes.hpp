#pragma once
/// \file
/// The bytes of a plan that cross nodes with plan device i on machine device
/// i, counted op by op: what the default placement reports
/// (PlacementInfo::cross_node_bytes) without the traffic matrix, which holds
/// devices² counts (2 GiB at 16,384 devices), and without unrolling a ring
/// collective's 2(N-1)·N sends: in a ring every byte a participant receives
/// comes from the participant before it (plan/ring_steps.hpp), so a
/// ring is N pairs. Equal to cross_node_bytes(plan_traffic(plan), default
/// map, shape) (device_placement.hpp; tests/sim/network_tiers_test.cpp).

#include <cstdint>

#include "plan/plan.hpp"
#include "sim/machine/device_placement.hpp"

namespace splitscope {

/// Bytes of `plan` whose sender and receiver sit in different nodes of
/// `shape` when plan device d runs on machine device d.
int64_t default_cross_node_bytes(const Plan& plan, NodeShape shape);

}  // namespace splitscope
