#pragma once
/// \file
/// The Timeline: what happened when. It is the one contract between everything
/// that runs a Plan (the cpu and cuda executors, the simulator) and everything
/// that reports on a run. A measured run and a simulated run produce this same
/// type, so the two can be compared span by span.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace splitscope {

/// Where on a device a span ran. Copies have their own lanes so that overlap
/// of transfer with compute is visible.
enum class Lane { kCompute, kCopyIn, kCopyOut, kHost };

/// What a span did.
enum class SpanKind { kCompute, kTransfer, kCollective };

/// A move between devices that is not a plan op (a parameter server's
/// traffic runs beside the plan): what it was, so that reports count it with
/// the plan's transfers.
enum class OffPlanMove { kNone, kPull, kPush };

std::string_view to_string(Lane lane);
std::string_view to_string(SpanKind kind);
/// "pull", "push"; "" for kNone.
std::string_view to_string(OffPlanMove move);

/// One interval of work on one lane of one device.
struct Span {
  int device = 0;
  Lane lane = Lane::kCompute;
  SpanKind kind = SpanKind::kCompute;
  int op = -1;             ///< the Plan op it executed; -1 for work outside the plan
  std::string label;       ///< empty for plan ops (their name comes from the plan)
  double start_us = 0;     ///< since the start of the run
  double end_us = 0;
  int64_t flops = 0;
  int64_t bytes = 0;       ///< bytes moved across devices (transfers, collectives)
  OffPlanMove move = OffPlanMove::kNone;  ///< a span outside the plan (op -1) that moved `bytes` across devices

  double duration_us() const { return end_us - start_us; }
};

/// Work outside the plan on the host lane: an input pipeline preparing a
/// batch. It is drawn under the device its batch goes to, but it keeps the
/// host busy, not that device: a report counts it apart from the device's
/// compute (issue 54: an input-bound step showed its wait for the input as
/// 6.4 ms of compute for 2.1 ms of work).
bool is_host_work(const Span& span);

/// Every span of one run (one repeat).
///
/// Alike replicas held once (a simulation of a Plan with Plan::replicas,
/// docs/reports.md "Replicas held once"): `replicas` > 1, and the spans are
/// those of replica 0's devices 0..replica_devices-1 only. Replica r's
/// device r·replica_devices + d ran the same spans at the same times (a
/// collective spanning the replicas included: its span on each device is
/// the same), so every per-device figure of device d holds for each of
/// its copies.
struct Timeline {
  std::vector<Span> spans;
  int replicas = 1;         ///< how many replicas the spans stand for
  int replica_devices = 0;  ///< with replicas > 1: each replica's devices, the spans' devices

  /// Latest end over all spans (runs start at 0); 0 for an empty timeline.
  double makespan_us() const;
  /// One more than the highest device index seen (times the replicas, for replicas held once).
  int device_count() const;
};

}  // namespace splitscope
