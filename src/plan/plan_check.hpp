#pragma once
/// \file
/// The Plan's invariants, checked: every partitioner's output passes, in the
/// tests and (cheaply) before every run.
///
///  1. Ops are in dependency order: each input is written by an earlier op or
///     is a network input (so the plan has no cycles).
///  2. Every value is written exactly once.
///  3. A compute op reads only values on its own device, with its rows and
///     the channels it needs, one per connected input slot of its graph node
///     (so every cross-device edge goes through a transfer or collective).
///  4. Transfers and collectives move what they say: ranges kept, slices
///     contiguous, partial sums reduced, byte counts equal to the values'.
///  5. Each graph op's output is tiled exactly once by compute slices (over
///     rows, output channels and reduction ranges), so FLOPs add up.
///  6. The outputs tile the network output; schedules list each device's
///     compute ops once, in plan order.

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

/// A plan holding its replicas once (Plan::replicas) is checked as its
/// whole plan (expand_replicas()) up to this many ops of it; past that, the
/// shape of its replica set only (rows tiling the batch, runs, spanning
/// all-reduces), which keeps a 16,384-replica check to the replica's ops.
inline constexpr int64_t kMaxCheckedExpandedOps = int64_t{1} << 17;

/// Every broken invariant, one sentence each; empty for a sound plan.
std::vector<std::string> plan_problems(const Plan& plan);

/// Throws std::logic_error listing the problems, if any.
void check(const Plan& plan);

}  // namespace splitscope
