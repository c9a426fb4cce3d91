#pragma once
/// \file
/// The ring all-reduces that complete weight slices' gradients held in parts
/// by several replicas (`data`'s devices, `--replicas` groups), each
/// participant getting the sum over the whole batch.
///
/// Gradients travel in buckets, as in PyTorch DDP (`bucket_cap_mb`): the
/// weight slices in the order backward finishes their gradients (the plan's
/// last op writing them), packed greedily into a bucket that closes once it
/// holds at least the cap, the first bucket's cap being min(1 MiB, cap) (DDP's
/// first bucket, so that communication starts early). One all-reduce per
/// bucket; it starts once every gradient in it is ready on its sender, so the
/// buckets of the last layers overlap the backward of the first. A slice larger
/// than the cap is a bucket of its own; a cap of 0 gives one all-reduce per
/// slice. Each set of replicas (the slices over the same devices: a hybrid's
/// data-parallel groups) has buckets of its own. A bucket's op holds its slices as segments (PlanOp::inputs,
/// participant-major): the ring runs over their concatenation, as NCCL runs
/// over DDP's flat bucket.

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

/// PyTorch DDP's defaults (torch.nn.parallel.DistributedDataParallel).
inline constexpr int64_t kDefaultBucketBytes = int64_t{25} << 20;
inline constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;

/// Appends to `plan` the all-reduce of `partials` (gradient values of one
/// weight slice, one per device, whose rows together cover the batch) and
/// returns its outputs, one per participant in `partials` order.
std::vector<int> add_gradient_all_reduce(Plan& plan, const std::vector<int>& partials);

/// Appends the bucketed all-reduces of `slices` (each as
/// add_gradient_all_reduce's `partials`, every slice over the same devices)
/// with buckets of `bucket_bytes` (see above), and returns each slice's sums,
/// in its `partials` order. With `replicas` > 1 the plan holds one of that
/// many alike replicas (PlanBuilder::hold_replicas): `partials` are replica
/// 0's, over its rows, and each all-reduce spans every replica
/// (PlanOp::spans_replicas; its bytes_moved the whole ring's).
std::vector<std::vector<int>> add_gradient_all_reduces(Plan& plan, const std::vector<std::vector<int>>& slices,
                                                       int64_t bucket_bytes, int replicas = 1);

}  // namespace splitscope
