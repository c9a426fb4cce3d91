#pragma once
/// \file
/// Plan -> DeviceProgram, following plan.hpp's semantics op by op, in the
/// order of plan/plan_walk.hpp's walk:
/// - compute and epilogue ops run on their device's compute stream, in its
///   schedule's order;
/// - a transfer runs on the destination's copy-in stream: one peer copy, or
///   with `--link host` two hops through pinned host memory, the first on the
///   source's copy-out stream;
/// - a collective becomes the sends of its algorithm
///   (plan/collective_schedule.hpp: a ring over peer copies, or a
///   direct concat), each a copy on the receiver's copy-in stream (a reducing
///   send: a copy into a receive buffer, then a sum kernel with the
///   receiver's own chunk); a participant's own part is a local copy;
/// - every read of a buffer written on another stream waits for that write
///   (and every write waits for earlier reads and writes on other streams),
///   so the runner orders streams by events alone.

#include "exec/cuda/device_program.hpp"
#include "exec/cuda_backend.hpp"
#include "plan/plan.hpp"

namespace splitscope::gpu {

struct CompileOptions {
  LinkMode link = LinkMode::kDevice;
};

/// Compiles `plan`. Throws std::logic_error (SPLITSCOPE_CHECK) when the plan
/// breaks its own contract (a value without the rows or channels an op needs).
DeviceProgram compile_plan(const Plan& plan, const CompileOptions& options);

/// True for the op kinds this backend has a kernel for (the compiler's kernel table).
bool has_cuda_kernel(OpKind kind);

}  // namespace splitscope::gpu
