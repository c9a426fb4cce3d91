#pragma once
/// \file
/// Bandwidth of data movement, reported the way nccl-tests does
/// (doc/PERFORMANCE.md), so that numbers can be held against theirs:
/// algorithm bandwidth algbw = payload / time, and bus bandwidth
/// busbw = algbw · factor, where the factor makes busbw comparable with the
/// hardware's link bandwidth whatever the number of ranks n.

#include <cstdint>

#include "plan/plan.hpp"

namespace splitscope {

/// All-reduce: each rank sends and receives 2(n-1)/n of the payload (ring).
double all_reduce_bus_factor(int ranks);
/// All-gather: each rank receives the (n-1)/n of the payload it lacks.
double all_gather_bus_factor(int ranks);
/// Concat (a gather to one root): the root receives (n-1)/n of the payload,
/// as in an all-gather, so the factor is the same.
double concat_bus_factor(int ranks);
/// The factor for `kind` over `ranks` participants.
double bus_factor(CollectiveKind kind, int ranks);

/// Bytes per second as GB/s (10^9, as nccl-tests prints). 0 when `seconds` is not positive.
double gigabytes_per_second(int64_t bytes, double seconds);

}  // namespace splitscope
