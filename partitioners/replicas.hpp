#pragma once
/// \file
/// Hybrid parallelism (`--replicas R`): R data-parallel copies of any
/// strategy's plan, each over N/R devices and its share of the batch (the
/// first B mod R replicas one row more), with each weight slice's gradient
/// all-reduced (ring) across the R replicas before its update, e.g.
/// 2 x tensor-2 on 4 devices (Megatron's data x tensor parallelism).
/// Replica r runs on devices r·N/R .. (r+1)·N/R - 1, so a model split's
/// heavy traffic stays inside a group of neighbours and only gradients
/// cross groups.
///
/// Replicas of equal rows share one inner plan (partitioned once for the
/// longer rows, once for the shorter). With
/// PartitionOptions::compact_replicas the plan holds replica 0 once
/// (Plan::replicas, plan_replicas.hpp); expand_replicas() of it is, op for
/// op, the plan written without it.

#include <memory>

#include "partitioners/partitioner.hpp"

namespace splitscope {

/// `inner` run as `replicas` data-parallel copies. Its plans are named
/// "<inner> x<R>". partition() throws InputError when the devices are not a
/// multiple of R or the batch has fewer than R rows; the inner strategy's
/// own limits apply to each replica (its N/R devices, its rows).
std::unique_ptr<Partitioner> with_replicas(std::unique_ptr<Partitioner> inner, int replicas);

}  // namespace splitscope
