#pragma once
/// \file
/// The collectives of nccl-tests as plans of their own, so that `splitscope
/// collective` measures (cpu, cuda) and predicts (sim) them with the same
/// executors and simulator as any plan: one op moving `bytes`, over devices
/// 0..N-1 in ring order, its inputs network inputs (filled before the run).
///
/// `bytes` is nccl-tests' "size": the all-reduce's tensor on each device;
/// the all-gather's gathered tensor (each device holds bytes/N of it); the
/// reduce-scatter's tensor on each device (each gets bytes/N of the sum);
/// the broadcast's tensor (the root's, device 0's); what each device sends
/// in send-recv (device i to i+1, all at once). Sizes are whole float32
/// elements, and all-gather's and reduce-scatter's a multiple of N of them
/// (nccl-tests rounds the same way): `collective_bytes` says what a
/// requested size becomes.
///
/// Bus bandwidth (nccl-tests doc/PERFORMANCE.md): busbw = algbw · factor,
/// with algbw = bytes / time and factor 2(N-1)/N for all-reduce, (N-1)/N for
/// all-gather and reduce-scatter, 1 for broadcast and send-recv: the rate
/// each link carries, comparable with the hardware's whatever N is.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

enum class CollectiveTest { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kSendRecv };

/// "all-reduce", "all-gather", "reduce-scatter", "broadcast", "send-recv".
std::string_view to_string(CollectiveTest test);
/// The test named `name`; InputError (naming `option`) for another name,
/// saying which names exist and which of nccl-tests' are not built.
CollectiveTest parse_collective_test(std::string_view name, const std::string& option);

/// The bytes a plan of `test` moves for a requested `bytes` (see above); 0
/// where the request is smaller than one element per device.
int64_t collective_bytes(CollectiveTest test, int devices, int64_t bytes);

/// nccl-tests' bus-bandwidth factor of `test` over `devices`.
double bus_bandwidth_factor(CollectiveTest test, int devices);

/// The plan of one `test` over `devices` (>= 2) moving collective_bytes(bytes) (> 0).
Plan collective_plan(CollectiveTest test, int devices, int64_t bytes);

}  // namespace splitscope
