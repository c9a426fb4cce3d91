#pragma once
/// \file
/// Plans that hold their data-parallel replicas once (Plan::replicas,
/// ReplicaSet): the whole plan from them, and the figures of the whole
/// that need no expansion.
///
/// `data` (and `ps`) build one replica and the gradient all-reduces that
/// span all of them; a backend that runs every op (the cpu and cuda
/// executors, MPI ranks, plan files, Chakra traces) runs expand_replicas()'s
/// plan, op for op the one the partitioner wrote before replicas were held
/// once. The simulator plays replica 0 alone where the replicas are alike
/// (replicas_alike()).

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

/// Ops of the whole plan: R times each replica's, plus each spanning collective once.
int64_t expanded_op_count(const Plan& plan);

/// The whole plan: every replica's ops and values, numbered as the
/// partitioner numbered them when it wrote every replica (ReplicaSet's
/// runs), schedules and memory for every device. A plan without replicas
/// comes back as it is. InputError (check_plan_ops) when the whole plan
/// would have more ops than a plan may.
Plan expand_replicas(const Plan& plan);

/// Plan::memory of `device` (any of the whole plan's): a compact plan's
/// replica's own, or its short replica's.
const DeviceMemory& device_memory(const Plan& plan, int device);

/// Whether every replica runs the same ops for the same time: equal rows
/// (no short replica). True for a plan without replicas.
bool replicas_alike(const Plan& plan);

}  // namespace splitscope
