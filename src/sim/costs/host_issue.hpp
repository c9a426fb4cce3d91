#pragma once
/// \file
/// The host lane of an eager GPU run (DeviceSpec::host_issue_us). One host
/// thread issues every device's work, op after op in the plan's walk order
/// (plan/plan_walk.hpp: the order the cuda backend issues in), and
/// each device call — a kernel launch, a cuBLAS or cuDNN call, an
/// asynchronous copy, with the event record and stream wait around it —
/// costs the host `host_issue_us`. The device cannot run a call before it is
/// issued, so where ops are small the host, not the device, sets the pace.
/// A run replayed from a CUDA graph issues nothing per call (host_issue_us 0).
///
/// The calls an op makes are the device steps the cuda backend compiles it
/// to (src/exec/cuda/plan_compiler.cpp), counted from the plan alone:
/// - dense and conv2d: the product (a convolution slice that cuts groups: one
///   call per group it touches), plus the bias-and-activation kernel where
///   the slice adds a bias or applies its activation;
/// - LSTM and GRU cells: the input product, the recurrent product where
///   h_{t-1} exists, the element-wise kernel; stack: a copy per step; concat:
///   a copy per input it takes channels from;
/// - the backward kinds: their products and kernels, plus the copy of a
///   running gradient sum in (dense_grad_weight: dW and db; the cells'
///   gradient products: a gather before each product);
/// - an update: a kernel per weight tensor (Adam: two, its step count first);
/// - a transfer: one copy; a collective: a copy per send of its algorithm, a
///   sum kernel per reducing send, a copy per local delivery;
/// - every other op: one kernel.
///
/// A collective's calls go out in the cuda backend's order (plan_compiler.cpp's
/// collective()): the local deliveries' copies, then the sends in schedule
/// order, so a send cannot start before the host has issued its copy.

#include <vector>

#include "plan/plan.hpp"
#include "sim/network/collective_schedule_cache.hpp"

namespace splitscope {

/// The device calls the host issues for `op` (at least 1); a collective's
/// schedule comes from `schedules` (the engine's, shared with its run).
int device_calls(const Plan& plan, const PlanOp& op, CollectiveScheduleCache& schedules);
/// The same, with a cache of its own (one op looked at alone).
int device_calls(const Plan& plan, const PlanOp& op);

/// Per send, the collective's calls the host issues before that send's first.
std::vector<int> calls_before_sends(const CollectiveSchedule& schedule);

/// When the host has issued each op's first and last call, in seconds from
/// the run's start, at `issue_seconds` a call (indexed by op id).
struct HostRelease {
  double first = 0;
  double last = 0;
};
std::vector<HostRelease> host_releases(const Plan& plan, double issue_seconds, CollectiveScheduleCache& schedules);
std::vector<HostRelease> host_releases(const Plan& plan, double issue_seconds);

}  // namespace splitscope
