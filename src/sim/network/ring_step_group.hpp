#pragma once
/// \file
/// A ring step as one group of flows (docs/collective.md, "Step groups").
///
/// In a ring step every participant i sends one piece to i+1 at once. Where
/// those N sends are symmetric -- every send's route has the same latency,
/// every link they cross has the same capacity, line rate and protocol, and
/// every such link is crossed by as many of them (one on a switch) -- each
/// send gets the same rate and ends at the same moment as every other, so
/// the engine plays the step as one flow over all their links (each link
/// listed once per send crossing it), one event per step instead of N, and
/// the ring as its steps (plan/ring_steps.hpp) instead of its
/// N·steps sends. Alone on its links, a group drains at exactly the rate
/// each of its sends would; beside other flows, the max-min share it gets
/// is the smallest any of its sends would get on its own (the ring's
/// slowest link paces every send of the step), which equals each send's
/// where the others share its links symmetrically (another ring over the
/// same participants) and is the slowest send's where they do not.
///
/// A step whose links differ is grouped the same way where its sends are
/// still uniform: each pays the same latency, gets the same share alone (its
/// slowest link's capacity over the step's crossings of it) and, where NCCL
/// prices the ring, drains the same bytes; alone, the group is then each
/// send exactly. A data-parallel ring of one GPU per node whose every hop
/// crosses the same tiers (NIC, leaf uplink, leaf uplink, NIC) is one.
///
/// Not grouped (their sends run one by one, as the schedule lists them):
/// rings of at most kMixedStepGroupMinSends - 1 sends whose steps mix links
/// (NVLink inside a node, a NIC across nodes),
/// a participant twice, host-staged buses whose up and down links differ,
/// broadcasts and concats, and every collective on a machine with a host
/// lane (its host issues each send in turn, so no two start together).

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/plan.hpp"
#include "plan/ring_steps.hpp"
#include "sim/network/nccl_protocol.hpp"
#include "sim/machine/topology.hpp"

namespace splitscope {

/// Rings of fewer participants run their sends (at most 2·15·16 = 480):
/// setting up their groups cost more than it saved (bench_sim's tensor
/// plans, rings of 4, evaluated 9% slower), and their results stay exactly
/// those of the sends.
inline constexpr int kMinStepGroupParticipants = 16;

/// A ring whose steps mix links (NVLink inside a node, NICs and switch
/// tiers across) runs in step groups where its sends one by one would be
/// more than this: the sends limit of docs/limits.md
/// (src/plan/collective_schedule.cpp refuses a ring of more sends), so
/// that mixed rings that ran one by one before still do, and those refused
/// before run (an all-reduce over 1,449 devices or more: 8.4 million sends
/// at 2,048, 537 million at 16,384). A ring's chunks move one participant a
/// step, so its slowest send paces every step either way. A mixed group
/// drains at the smallest share any of its links gives one crossing and
/// pays the longest route latency, so each step takes what its slowest send
/// would alone; the sends on faster links finish no earlier, which one by
/// one they may (docs/collective.md, "Mixed step groups").
inline constexpr int64_t kMixedStepGroupMinSends = (int64_t{1} << 22) + 1;

struct RingStepGroup {
  const RingSteps* steps = nullptr;  ///< the ring's steps and deliveries (owned by the caller's cache)
  std::vector<int> links;            ///< every link one step's sends cross, once per send crossing it
  double latency_seconds = 0;        ///< each send's route latency (a mixed step: the longest)
  /// NCCL's pricing of the ring (nccl_protocol.hpp), where it prices it:
  /// every send of a step pays send_latency_seconds and drains
  /// flow_bytes.front() (one entry: the sends are alike, or a mixed step's
  /// slowest send's time at the group's rate).
  std::optional<NcclRingSends> nccl;
};

/// The step group of ring collective `op` of `plan` with steps `steps`, on
/// `topology` with GPUs of `generation`; nullopt where its sends are not
/// symmetric or uniform (above) or has fewer than kMinStepGroupParticipants
/// participants.
std::optional<RingStepGroup> ring_step_group(const Plan& plan, const PlanOp& op, const RingSteps& steps,
                                             const Topology& topology, NcclGeneration generation);

}  // namespace splitscope
