#include "sim/engine/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>

#include "plan/collective_schedule.hpp"
#include "plan/plan_walk.hpp"
#include "sim/network/collective_schedule_cache.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/costs/host_issue.hpp"
#include "sim/network/nccl_contention.hpp"
#include "sim/network/nccl_protocol.hpp"
#include "sim/network/ring_step_group.hpp"
#include "util/check.hpp"
#include "util/huge_pages.hpp"

namespace splitscope {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kMicro = 1e6;

enum class EventKind : uint8_t {
  kComputeDone,  ///< subject: op
  kSendArrives,  ///< subject: send; its latency has passed, its bytes start to flow
  kReleased,     ///< subject: op; the host has issued its first call (host_issue.hpp)
  kSendDone,     ///< subject: send; its last byte has arrived
  kHandedOff,    ///< subject: compute op; an input a copy lane brought reached its lane (contended machines)
  kSendIssued,   ///< subject: index into held_sends_; the host has issued a ready collective send
  /// subject: collective op in step groups; an input arrived this instant and others are still missing:
  /// after whatever else this instant brings, it runs its steps or, inputs still missing, its sends.
  kGroupDecides,
};

struct Payload {
  EventKind kind = EventKind::kComputeDone;
  int subject = -1;
};

/// A transfer, one send of a collective, or one step of a collective in step groups, in flight.
struct Send {
  int op = -1;
  int part = -1;  ///< the collective's send index (step groups: step); -1 for a transfer
  Route route;
  /// A step group's links (ring_step_group.hpp), instead of `route`'s; null for one send.
  const std::vector<int>* group_links = nullptr;
  double bytes = 0;
  double arrival = 0;  ///< seconds: when its latency has passed
  FlowNetwork::FlowId flow = -1;
  /// Alone on its route, and not in the flow network: its completion is
  /// already queued (Engine::launch_send()).
  bool lone = false;
  EventHandle done;

  std::span<const int> links() const { return group_links != nullptr ? std::span<const int>(*group_links) : route.links(); }
};

/// A collective's progress.
struct CollectiveRun {
  int op = -1;
  std::vector<std::pair<int, int>> slots;  ///< (input value, its slot in op.inputs), by value
  /// Its deliveries and the values each participant holds: the schedule's, or the step group's.
  const std::vector<CollectiveDelivery>* deliveries = nullptr;
  int segments = 1;
  /// Played as steps (ring_step_group.hpp), one flow group a step, while
  /// not null; else as the schedule's sends.
  const RingStepGroup* group = nullptr;
  int step = 0;                    ///< step groups: the step in flight
  double alone_rate = 0;           ///< step groups: each send's rate alone on its links, once asked
  int participants_missing = 0;    ///< step groups: participants some of whose inputs are not yet written
  std::vector<int> segments_missing;  ///< step groups: per participant, its inputs not yet written
  std::vector<uint8_t> input_ready;  ///< step groups: per input slot, whether it is written
  bool deciding = false;           ///< step groups: a kGroupDecides event is queued
  const CollectiveSchedule* schedule = nullptr;  ///< shared by the collectives of one shape; null in step groups
  std::vector<int> send_waits;
  std::vector<int> delivery_waits;
  std::vector<double> delivery_start;  ///< seconds; the first send into or out of that device
  size_t delivered = 0;
  /// A ring priced by NCCL's model (nccl_protocol.hpp): each send's latency
  /// and flow bytes come from it instead of its route's latency and its
  /// bytes; null where its sends run plain.
  const NcclRingSends* nccl = nullptr;
  /// Each send's route, shared like the schedule.
  const std::vector<Route>* routes = nullptr;
  /// With a host lane: per send, the collective's calls issued before its
  /// first (host_issue.hpp), shared like the schedule; null without one.
  const std::vector<int>* calls_before = nullptr;
  /// What its NCCL kernel takes from the compute it overlaps
  /// (nccl_contention.hpp), on a GPU whose compute it slows; else null.
  const NcclShare* share = nullptr;
  /// With a share: per delivery, kIdle until a send into or out of its
  /// device starts, kRunning until the delivery, then kOver.
  std::vector<uint8_t> share_state;
};

constexpr uint8_t kIdle = 0;
constexpr uint8_t kRunning = 1;
constexpr uint8_t kOver = 2;

/// The op a GPU's compute lane runs while NCCL collectives may come and go
/// on it (nccl_contention.hpp): it runs at 1 / (seconds · factor) of its
/// work, the factor following the collectives running on its device, so
/// when one starts or ends what is left of it is re-timed.
struct OverlappedRun {
  int op = -1;              ///< -1: the lane is idle
  double seconds = 0;       ///< its time alone
  double memory_part = 0;   ///< of that, the part that streams DRAM
  double left = 1;          ///< the fraction of its work still to do
  double since = 0;         ///< seconds: when `left` was last brought up to date (or when it starts)
  double floor = 0;         ///< seconds: it ends no earlier (the host's last call, with a host lane)
  EventHandle done;
};

/// A collective running on a device, and what it takes there.
struct RunningShare {
  int op = -1;
  NcclShare share;
};

/// A collective send whose inputs exist before the host has issued it.
struct HeldSend {
  int op = -1;
  int index = -1;
};

/// What the engine keeps of each op besides its spans, in 8 bytes. A
/// million-op plan does not fit in the caches, and every fresh page costs a
/// fault, so the engine reads each PlanOp once, writes its spans at once
/// (they then hold the times: a compute span's end_us holds the op's
/// duration in seconds until it starts), and runs on these. An op's span
/// is its own index until the first collective (which has a span per
/// delivery), and from there on span_of_ says; a collective's run is in
/// collective_of_: a pipeline's state is half the 16 MB it was with both
/// kept here, and the event loop reads it at every step.
struct OpState {
  uint16_t pending = 0;    ///< compute, transfer: inputs still to come
  uint16_t device = 0;     ///< compute: where it runs; transfer: the destination
  uint16_t source = 0;     ///< transfer: the source device
  uint8_t role_code = 0;   ///< the OpRole
  uint8_t flags = 0;       ///< kDone, kInSchedule, kStarted

  OpRole role() const { return static_cast<OpRole>(role_code); }
};
static_assert(sizeof(OpState) == 8);

constexpr uint8_t kDone = 2;
constexpr uint8_t kInSchedule = 4;  ///< compute, epilogue, update: its device's schedule lists it
constexpr uint8_t kStarted = 8;     ///< compute, epilogue, update: its lane has started it

/// How many ops ahead read_ops() asks for an op's input list: a few hundred
/// nanoseconds of memory latency over the time one op takes to read.
constexpr size_t kInputsAhead = 32;
/// How many ops ahead read_ops() asks for the PlanOp itself (the hardware's
/// prefetcher does not keep up with a stream of 224-byte records).
constexpr size_t kOpsAhead = 2 * kInputsAhead;
/// Below this many ops the plan is in the caches and the prefetches only
/// cost (a 856-op pipeline plan simulated 12% slower with them).
constexpr size_t kPrefetchMinOps = 16384;

/// One reader of a value, in a list per value (latest op first; the order
/// only decides which of simultaneous events is queued first). A collective
/// finds which of its inputs it was in its own input list: collectives are few.
struct Reader {
  int op = -1;
  int next = -1;
};

/// Per value: its readers, and the next output of the op writing it.
struct ValueLinks {
  int first_reader = -1;  ///< index into readers_; -1 for none; kNetworkInput
  int next_output = -1;   ///< the next value its producer writes; -1 for none
};

/// `first_reader` of a value no op writes (yet, while read_ops() runs).
constexpr int kNetworkInput = -2;
/// `next_output` of a value no op writes, once an op has read it.
constexpr int kReadUnwritten = -3;

/// A device's compute lane: where it is in its schedule, and whether it runs an op.
struct ComputeLane {
  const int* next = nullptr;  ///< the schedule's next op
  const int* end = nullptr;
  bool busy = false;
};

/// The op a device of a contended machine (OpCostModel::contended()) is
/// running. Devices that share a pool (a CPU's cores and memory) slow each
/// other: with k of the plan's n devices busy, the op takes
///   alone + (busy − alone) · (k − 1) / (n − 1)
/// seconds, its alone time with the others idle, its busy time with all n
/// running (the two the machine prices; linear between them, as a pool's
/// shared bandwidth splits among the devices using it). It runs at
/// 1 / that of its work, so when another device starts or ends, what is
/// left of it is re-timed: processor sharing, as flow_network.hpp does for links.
struct SharedRun {
  int op = -1;        ///< -1: the device is idle
  double left = 0;    ///< the fraction of its work still to do
  double since = 0;   ///< seconds: when `left` was last brought up to date
  double alone = 0;   ///< seconds
  double busy = 0;    ///< seconds
  double floor = 0;   ///< seconds: it ends no earlier (the host's last call, with a host lane)
  EventHandle done;
};

class Engine {
 public:
  Engine(const Plan& plan, const Topology& topology, const OpCostModel& costs, const OpJitter* jitter)
      : plan_(plan),
        jitter_(jitter),
        topology_(topology),
        costs_(costs),
        pricing_(costs, plan),
        handoff_(costs.lane_handoff_seconds()),
        contended_(costs.contended() && plan.devices > 1),
        replicas_(plan.replicas ? plan.replicas->count : 1),
        flows_(link_capacities(topology)),
        lone_on_link_(topology.links().size(), -1) {}

  /// The timeline, or nullopt if `deadline` passed first (SimulationDeadline).
  std::optional<Timeline> run(const SimulationDeadline& deadline = {}) {
    prepare();
    if (deadline.passed()) return std::nullopt;
    start();
    // Without a deadline the countdown starts where it cannot reach zero in any plan.
    uint64_t events_to_look = deadline.exists() ? SimulationDeadline::kEventsBetweenLooks : UINT64_MAX;
    while (true) {
      // The flow network's changes of this instant settle before the clock moves on.
      if (flows_.unsettled() && (queue_.empty() || queue_.peek().time > now_)) {
        flows_.settle(now_);
        reschedule_flows();
      }
      if (queue_.empty()) break;
      if (--events_to_look == 0) [[unlikely]] {
        if (deadline.passed()) return std::nullopt;
        events_to_look = SimulationDeadline::kEventsBetweenLooks;
      }
      const auto event = queue_.remove_next();
      now_ = event.time;
      switch (event.payload.kind) {
        case EventKind::kComputeDone: compute_done(event.payload.subject); break;
        case EventKind::kSendArrives: send_arrives(event.payload.subject); break;
        case EventKind::kSendDone: send_done(event.payload.subject); break;
        case EventKind::kHandedOff: input_ready(event.payload.subject, now_); break;
        case EventKind::kReleased: released(event.payload.subject); break;
        case EventKind::kSendIssued: send_issued(event.payload.subject); break;
        case EventKind::kGroupDecides: group_decides(event.payload.subject); break;
      }
    }
    check_finished();
    if (plan_.replicas) keep_replica_zero();
    return std::move(timeline_);
  }

 private:
  static std::vector<double> link_capacities(const Topology& topology) {
    std::vector<double> capacities;
    capacities.reserve(topology.links().size());
    for (const Link& link : topology.links()) capacities.push_back(link.bytes_per_second);
    return capacities;
  }

  Span& span_of(int op, int delivery = 0) {
    const auto o = static_cast<size_t>(op);
    const int first = o < span_of_.size() ? span_of_[o] : op;
    return timeline_.spans[static_cast<size_t>(first + delivery)];
  }

  // --- setting up ---------------------------------------------------------

  void prepare() {
    SPLITSCOPE_CHECK(plan_.graph != nullptr, "a plan needs its graph");
    SPLITSCOPE_CHECK(plan_.devices <= topology_.devices(), "the plan has more devices than the machine");
    SPLITSCOPE_CHECK(plan_.devices <= UINT16_MAX + 1, "too many devices");  // indices fit OpState's 16 bits
    const size_t ops = plan_.ops.size();
    const size_t values = plan_.values.size();
    lanes_.assign(static_cast<size_t>(plan_.devices), ComputeLane{});
    for (size_t d = 0; d < plan_.schedule.size() && d < lanes_.size(); ++d) {
      lanes_[d].next = plan_.schedule[d].data();
      lanes_[d].end = plan_.schedule[d].data() + plan_.schedule[d].size();
    }
    if (contended_) shared_.assign(static_cast<size_t>(plan_.devices), SharedRun{});
    overlapped_.assign(static_cast<size_t>(plan_.devices), OverlappedRun{});
    running_shares_.assign(static_cast<size_t>(plan_.devices), {});
    SPLITSCOPE_CHECK(plan_.schedule.size() <= static_cast<size_t>(plan_.devices),
                     fmt::format("the plan has {} schedules for {} devices", plan_.schedule.size(), plan_.devices));
    clear_values(ops, values);
    read_ops(ops, values);
    hold_for_host();
  }

  /// Every value starts unwritten (a network input until an op writes it),
  /// and no op has outputs until read_ops() reads them.
  void clear_values(size_t ops, size_t values) {
    reserve_on_huge_pages(links_, values);
    links_.assign(values, ValueLinks{kNetworkInput, -1});
    reserve_on_huge_pages(first_output_, ops);
    first_output_.assign(ops, -1);
  }

  /// `op` writes its outputs: each value's link now waits for readers, and
  /// the op's list of them is in value order (the order value_ready() runs
  /// their readers in). The plan's ops are in data-flow order (plan_check's
  /// rule), so every later reader finds the value written.
  void write_outputs(const PlanOp& op, size_t values) {
    if (op.spans_replicas && replicas_ > 1) {
      // Replica 0's sums; the other replicas' are the same values again.
      const auto own = static_cast<std::ptrdiff_t>(replica_block(op, op.outputs.size()));
      link_outputs(op.id, std::vector<int>(op.outputs.begin(), op.outputs.begin() + own), values);
      return;
    }
    if (std::is_sorted(op.outputs.begin(), op.outputs.end())) {
      link_outputs(op.id, op.outputs, values);
      return;
    }
    // None of the partitioners' ops: sorted, a finished op's readers still run in value order.
    std::vector<int> sorted = op.outputs;
    std::sort(sorted.begin(), sorted.end());
    link_outputs(op.id, sorted, values);
  }

  void link_outputs(int op, const std::vector<int>& outputs, size_t values) {
    int* next = &first_output_[static_cast<size_t>(op)];
    for (const int value : outputs) {
      SPLITSCOPE_CHECK(value >= 0 && static_cast<size_t>(value) < values,
                       fmt::format("op {} writes an unknown value", op));
      ValueLinks& links = links_[static_cast<size_t>(value)];
      SPLITSCOPE_CHECK(links.next_output != kReadUnwritten,
                       fmt::format("op {} writes value {}, which an op before it reads (plan ops must be in "
                                   "data-flow order)", op, value));
      SPLITSCOPE_CHECK(links.first_reader == kNetworkInput,
                       fmt::format("value {} is written twice (again by op {})", value, op));
      links.first_reader = -1;
      *next = value;
      next = &links.next_output;
    }
  }

  /// Asks the memory for what reading the ops ahead of `id` will need
  /// (read_ops(); the comments at kInputsAhead and kOpsAhead).
  void prefetch_ahead(size_t id, size_t ops) const {
    if (id + kOpsAhead < ops) {
      // Ahead of the rest: the loads below read the op there.
      const auto* ahead = reinterpret_cast<const char*>(&plan_.ops[id + kOpsAhead]);
      for (size_t offset = 0; offset < sizeof(PlanOp); offset += 64) __builtin_prefetch(ahead + offset);
    }
    if (id + kInputsAhead < ops) {
      const PlanOp& ahead = plan_.ops[id + kInputsAhead];
      __builtin_prefetch(ahead.inputs.data());
      __builtin_prefetch(ahead.outputs.data());
      if (scheduled(ahead.role)) pricing_.prefetch(ahead);
    }
  }

  /// One pass over the ops: checks, packed state, spans, durations and reader lists.
  void read_ops(size_t ops, size_t values) {
    reserve_on_huge_pages(state_, ops);
    state_.resize(ops);
    // Capacity never touched costs nothing: room for the collectives' extra
    // spans, so that a million spans are never copied.
    reserve_on_huge_pages(timeline_.spans, ops + ops / 2);
    reserve_on_huge_pages(readers_, 2 * ops);
    const auto on_device = [&](int device) { return device >= 0 && device < plan_.devices; };
    const bool prefetch = ops >= kPrefetchMinOps;
    for (size_t id = 0; id < ops; ++id) {
      const PlanOp& op = plan_.ops[id];
      SPLITSCOPE_CHECK(op.id == static_cast<int>(id), fmt::format("op {} has id {}", id, op.id));
      // Each op's input list is a separate heap block: without asking for it
      // a few ops ahead, reading it was a third of this pass (a cache miss per op).
      if (prefetch) prefetch_ahead(id, ops);
      OpState& state = state_[id];
      state = OpState{};
      state.role_code = static_cast<uint8_t>(op.role);
      if (!span_of_.empty()) span_of_[id] = static_cast<int>(timeline_.spans.size());
      switch (op.role) {
        case OpRole::kCompute:
        case OpRole::kEpilogue:
        case OpRole::kUpdate: {
          SPLITSCOPE_CHECK(on_device(op.device), fmt::format("op {} is on device {}, outside the plan's {}",
                                                             id, op.device, plan_.devices));
          state.device = static_cast<uint16_t>(op.device);
          scheduled_ops_ += 1;
          // end_us holds the duration (seconds) until the op starts, and
          // start_us when its last copied input reaches its lane (input_ready());
          // on a contended machine, the time alone, and start_us the time busy.
          const double factor = jitter_ != nullptr ? jitter_->factor(static_cast<int>(id)) : 1.0;
          const double busy = pricing_.seconds(op) * factor;
          add_span(single_span(op), contended_ ? pricing_.alone_seconds(op) * factor : busy);
          if (contended_) timeline_.spans.back().start_us = busy;
          break;
        }
        case OpRole::kTransfer:
          SPLITSCOPE_CHECK(on_device(op.device) && on_device(op.src_device) && op.inputs.size() == 1 &&
                               op.inputs[0] >= 0 && op.outputs.size() == 1,
                           fmt::format("transfer op {} must move one value between two of the plan's devices", id));
          state.device = static_cast<uint16_t>(op.device);
          state.source = static_cast<uint16_t>(op.src_device);
          add_span(single_span(op), 0);
          break;
        case OpRole::kCollective:
          for (int device : op_devices(op)) {
            SPLITSCOPE_CHECK(on_device(device), fmt::format("collective op {} touches device {}, outside the "
                                                            "plan's {}", id, device, plan_.devices));
          }
          if (span_of_.empty()) {
            // The first collective: from here on, spans and ops part ways.
            span_of_.resize(ops);
            for (size_t before = 0; before <= id; ++before) span_of_[before] = static_cast<int>(before);
            collective_of_.assign(ops, -1);
          }
          collective_of_[id] = static_cast<int>(collectives_.size());
          collectives_.push_back(start_collective(op));
          for (const CollectiveDelivery& delivery : *collectives_.back().deliveries) {
            add_span(delivery_span(op, delivery), 0);
          }
          break;
      }
      for (size_t slot = 0; slot < replica_block(op, op.inputs.size()); ++slot) {
        const int value = op.inputs[slot];
        SPLITSCOPE_CHECK(value < static_cast<int>(values), fmt::format("op {} reads an unknown value", id));
        if (value < 0) continue;
        if (links_[static_cast<size_t>(value)].first_reader == kNetworkInput) {
          links_[static_cast<size_t>(value)].next_output = kReadUnwritten;
          continue;
        }
        // A collective counts its inputs itself (a bucket over thousands of replicas reads more than 2^16).
        if (op.role != OpRole::kCollective) {
          SPLITSCOPE_CHECK(state.pending < UINT16_MAX, "too many inputs");
          state.pending += 1;
        }
        int& head = links_[static_cast<size_t>(value)].first_reader;
        readers_.push_back(Reader{static_cast<int>(id), head});
        head = static_cast<int>(readers_.size()) - 1;
      }
      if (op.role == OpRole::kTransfer && state.pending == 0) ready_transfers_.push_back(static_cast<int>(id));
      write_outputs(op, values);
    }
  }

  /// Every compute, epilogue and update op is in its own device's schedule
  /// exactly once, and nothing else is (plan_walk.hpp's rule, with
  /// schedule_predecessors()'s messages), checked on the packed state.
  /// Only called where the run found a schedule wrong (try_start_compute(),
  /// check_finished()): the lanes check each entry as they reach it, and
  /// this pass, whose reads follow each device's schedule through a
  /// million-op state, was 7% of a simulation.
  void check_schedules() {
    size_t seen = 0;
    for (size_t device = 0; device < plan_.schedule.size(); ++device) {
      for (int id : plan_.schedule[device]) {
        SPLITSCOPE_CHECK(id >= 0 && static_cast<size_t>(id) < state_.size(),
                         fmt::format("the schedule of device {} lists op {}, which the plan lacks", device, id));
        OpState& state = state_[static_cast<size_t>(id)];
        SPLITSCOPE_CHECK(!(state.flags & kInSchedule), fmt::format("op {} ({}) appears twice in the schedules", id,
                                                                    op_label(plan_, plan_.op(id))));
        SPLITSCOPE_CHECK(scheduled(state.role()) && static_cast<size_t>(state.device) == device,
                         fmt::format("the schedule of device {} lists op {} ({}), which is not a compute op there",
                                     device, id, op_label(plan_, plan_.op(id))));
        state.flags |= kInSchedule;
        ++seen;
      }
    }
    if (seen == scheduled_ops_) return;
    for (size_t id = 0; id < state_.size(); ++id) {
      SPLITSCOPE_CHECK(!scheduled(state_[id].role()) || (state_[id].flags & kInSchedule),
                       fmt::format("compute op {} ({}) is in no schedule", id,
                                   op_label(plan_, plan_.ops[id])));
    }
  }

  /// Whether ops of `role` run on a compute lane, in their device's schedule.
  static bool scheduled(OpRole role) {
    return role == OpRole::kCompute || role == OpRole::kEpilogue || role == OpRole::kUpdate;
  }

  /// Of `op`'s `size` inputs (or outputs), replica 0's: the first 1/R of a
  /// collective spanning the replicas, all of any other op's.
  size_t replica_block(const PlanOp& op, size_t size) const {
    return op.spans_replicas && replicas_ > 1 ? size / static_cast<size_t>(replicas_) : size;
  }

  /// With a host lane (DeviceSpec::host_issue_us), every compute, epilogue,
  /// update and transfer op also waits for the host to issue it: one more
  /// pending input, which its release event supplies. A collective's sends
  /// are held one by one, when they are otherwise ready (start_collective_send).
  void hold_for_host() {
    const double issue = costs_.host_issue_seconds();
    if (issue <= 0) return;
    releases_ = host_releases(plan_, issue, schedules_);
    for (CollectiveRun& run : collectives_) run.calls_before = &calls_before_of(*run.schedule);
    for (size_t id = 0; id < state_.size(); ++id) {
      if (state_[id].role() == OpRole::kCollective) continue;
      SPLITSCOPE_CHECK(state_[id].pending < UINT16_MAX, "too many inputs");
      state_[id].pending += 1;
    }
  }

  /// The host has issued `op`'s first call.
  [[gnu::noinline]] void released(int op) {
    OpState& state = state_[static_cast<size_t>(op)];
    if (state.role() == OpRole::kTransfer) {
      if (--state.pending == 0) start_transfer(op);
      return;
    }
    input_ready(op, now_);
  }

  /// Appends a span, built in place (a million of them is much of the work).
  void add_span(const SpanSlot& slot, double end_us) {
    append_unstarted_span(timeline_.spans, slot).end_us = end_us;
  }

  CollectiveRun start_collective(const PlanOp& op) {
    // value_ready() finds a collective's slot by value: its inputs must differ.
    CollectiveRun run;
    const size_t own = replica_block(op, op.inputs.size());
    run.slots.reserve(own);
    for (size_t slot = 0; slot < own; ++slot) run.slots.emplace_back(op.inputs[slot], static_cast<int>(slot));
    std::sort(run.slots.begin(), run.slots.end());
    SPLITSCOPE_CHECK(std::adjacent_find(run.slots.begin(), run.slots.end(),
                                        [](const auto& a, const auto& b) { return a.first == b.first; }) ==
                         run.slots.end(),
                     fmt::format("collective op {} reads one value twice", op.id));
    run.op = op.id;
    if (const RingStepGroup* group = group_of(op)) {
      run.group = group;
      run.deliveries = &group->steps->deliveries;
      run.segments = group->steps->segments;
      run.participants_missing = static_cast<int>(run.deliveries->size());
      run.segments_missing.assign(run.deliveries->size(), run.segments);
      run.input_ready.assign(op.inputs.size(), 0);
      run.delivery_start.assign(run.deliveries->size(), kNever);
      if (group->nccl && !contended_) {
        run.share = &share_of(group, *group->nccl);
        run.share_state.assign(run.deliveries->size(), kIdle);
        overlap_ = true;
      }
      return run;
    }
    unroll(run, op);
    return run;
  }

  /// Collective `op` of step groups: the group its steps run as, or null
  /// where they cannot (ring_step_group.hpp; with a host lane, its sends
  /// are issued one by one). Once per shape.
  const RingStepGroup* group_of(const PlanOp& op) {
    if (costs_.host_issue_seconds() > 0 || op.participants.size() < static_cast<size_t>(kMinStepGroupParticipants)) {
      return nullptr;
    }
    const RingSteps* steps = schedules_.steps_of(plan_, op);
    if (steps == nullptr) return nullptr;
    auto [it, inserted] = groups_.try_emplace(steps);
    if (inserted) it->second = ring_step_group(plan_, op, *steps, topology_, costs_.facts().nccl_generation);
    return it->second ? &*it->second : nullptr;
  }

  /// `run` (of `op`) runs as the sends of its schedule.
  void unroll(CollectiveRun& run, const PlanOp& op) {
    run.group = nullptr;
    run.schedule = &schedules_.of(plan_, op);
    run.deliveries = &run.schedule->deliveries;
    run.segments = run.schedule->segments;
    run.send_waits.reserve(run.schedule->sends.size());
    for (const CollectiveSend& send : run.schedule->sends) run.send_waits.push_back(send.waits_for);
    for (const CollectiveDelivery& delivery : run.schedule->deliveries) {
      run.delivery_waits.push_back(delivery.waits_for);
    }
    run.delivery_start.assign(run.schedule->deliveries.size(), kNever);
    run.nccl = nccl_sends_of(op, *run.schedule);
    run.routes = &routes_of(*run.schedule);
    // Devices that slow each other already price compute with its neighbours; NCCL's kernels are a GPU's.
    if (run.nccl != nullptr && !contended_) {
      run.share = &share_of(run.schedule, *run.nccl);
      run.share_state.assign(run.schedule->deliveries.size(), kIdle);
      overlap_ = true;
    }
  }

  /// The route of each send of `schedule`, once per schedule: collectives of
  /// one shape share it. Asking the topology per send was 3-4% of a
  /// collective-heavy run, half of it the copy of the returned Route, which
  /// read it back wider than route() had written it (a store-forwarding stall).
  const std::vector<Route>& routes_of(const CollectiveSchedule& schedule) {
    auto [it, inserted] = send_routes_.try_emplace(&schedule);
    if (inserted) {
      it->second.reserve(schedule.sends.size());
      for (const CollectiveSend& send : schedule.sends) {
        it->second.push_back(route_between(send.from_device, send.to_device));
      }
    }
    return it->second;
  }

  /// What a send from `from` to `to` crosses: nothing within one device.
  Route route_between(int from, int to) const { return from != to ? topology_.route(from, to) : Route{}; }

  /// route_between(), once per pair of devices: a pipeline's transfers
  /// cross the same few pairs hundreds of thousands of times. Kept for the
  /// pairs asked only: a table of every pair indexed by source · devices +
  /// destination took O(devices²) memory (8.6 GB at 16,384 devices, 250 MB
  /// of a 2,048-device hybrid run's 330).
  const Route& transfer_route(int from, int to) {
    const uint64_t pair = static_cast<uint64_t>(from) * static_cast<uint64_t>(plan_.devices) + static_cast<uint64_t>(to);
    auto [it, inserted] = transfer_routes_.try_emplace(pair);
    if (inserted) it->second = route_between(from, to);
    return it->second;
  }

  /// NCCL's pricing of `schedule` for `op`, or null where its sends run
  /// plain; once per schedule, which collectives of one shape share (their
  /// sends, routes and sizes are the same).
  const NcclRingSends* nccl_sends_of(const PlanOp& op, const CollectiveSchedule& schedule) {
    auto [it, inserted] = nccl_sends_.try_emplace(&schedule);
    if (inserted) {
      NcclRingSends sends;
      if (nccl_ring_sends(plan_, op, schedule, topology_, costs_.facts().nccl_generation, &sends)) {
        it->second = std::move(sends);
      }
    }
    return it->second ? &*it->second : nullptr;
  }

  /// What collective `sends` takes of its GPUs, once per schedule (or step group).
  const NcclShare& share_of(const void* schedule, const NcclRingSends& sends) {
    auto [it, inserted] = shares_.try_emplace(schedule);
    if (inserted) it->second = nccl_share(sends, costs_.facts());
    return it->second;
  }

  /// Whatever reads only network inputs starts, one hand-off after the run
  /// does (the run hands its first ops to the lanes).
  void start() {
    now_ = handoff_;
    for (size_t id = 0; id < releases_.size(); ++id) {
      if (state_[id].role() == OpRole::kCollective) continue;
      queue_.insert(std::max(now_, releases_[id].first), {EventKind::kReleased, static_cast<int>(id)});
    }
    for (const int id : ready_transfers_) {
      if (state_[static_cast<size_t>(id)].pending == 0) start_transfer(id);  // a host lane holds them (hold_for_host())
    }
    for (const CollectiveRun& run : collectives_) {
      const PlanOp& op = plan_.ops[static_cast<size_t>(run.op)];
      for (size_t slot = 0; slot < replica_block(op, op.inputs.size()); ++slot) {
        const int value = op.inputs[slot];
        if (value >= 0 && links_[static_cast<size_t>(value)].first_reader == kNetworkInput) {
          collective_value_ready(op.id, static_cast<int>(slot));
        }
      }
    }
    for (int device = 0; device < plan_.devices; ++device) try_start_compute(device);
  }

  // --- the lanes ----------------------------------------------------------

  /// `value` exists; `by_copy`: a copy lane wrote it, so compute ops reading
  /// it see it one lane hand-off later.
  void value_ready(int value, bool by_copy) {
    for (int at = links_[static_cast<size_t>(value)].first_reader; at >= 0;) {
      const Reader reader = readers_[static_cast<size_t>(at)];
      at = reader.next;
      OpState& state = state_[static_cast<size_t>(reader.op)];
      switch (state.role()) {
        case OpRole::kCompute:
        case OpRole::kEpilogue:
        case OpRole::kUpdate:
          if (by_copy && handoff_ > 0 && contended_) {
            queue_.insert(now_ + handoff_, {EventKind::kHandedOff, reader.op});
          } else {
            input_ready(reader.op, by_copy ? now_ + handoff_ : now_);
          }
          break;
        case OpRole::kTransfer:
          if (--state.pending == 0) start_transfer(reader.op);
          break;
        case OpRole::kCollective: {
          // A bucket over N replicas reads thousands of values: its slot by search, not by a scan of them all.
          const auto& slots = run_of(reader.op).slots;
          const auto at = std::lower_bound(slots.begin(), slots.end(), std::pair<int, int>{value, -1});
          if (at != slots.end() && at->first == value) collective_value_ready(reader.op, at->second);
          break;
        }
      }
    }
  }

  /// An input of compute op `op` reaches its lane at `at` (seconds, not
  /// before now). Where the devices do not slow each other, nothing that
  /// happens before `at` can change when the op starts (its device runs its
  /// schedule in order, and the op waits at its head), so the op is started
  /// at once and told to wait: its span's start_us holds the latest such
  /// time until it starts. An event per copied input would be nearly a
  /// quarter of a pipeline's events. On a contended machine (a pooled CPU) a
  /// waiting device is idle, which its neighbours' pace depends on: there,
  /// the hand-off is an event.
  void input_ready(int op, double at) {
    OpState& state = state_[static_cast<size_t>(op)];
    if (at > now_) {
      double& wait_until = span_of(op).start_us;
      wait_until = std::max(wait_until, at);
    }
    if (--state.pending == 0) try_start_compute(state.device);
  }

  void try_start_compute(int device) {
    const auto d = static_cast<size_t>(device);
    ComputeLane& lane = lanes_[d];
    if (lane.busy || lane.next == lane.end) return;
    const int id = *lane.next;
    if (static_cast<size_t>(id) >= state_.size()) schedule_broken();
    OpState& state = state_[static_cast<size_t>(id)];
    if (state.pending > 0) return;
    // Each entry is checked as the lane reaches it: a compute op of this device, not started before.
    if (!scheduled(state.role()) || state.device != d || (state.flags & kStarted)) schedule_broken();
    state.flags |= kStarted;
    lane.busy = true;
    ++lane.next;
    Span& span = span_of(id);
    // end_us held the duration; with a host lane, not before the host has issued the op's last call.
    const double floor = releases_.empty() ? 0.0 : releases_[static_cast<size_t>(id)].last;
    if (contended_) {
      share_start(d, id, span.end_us, span.start_us, floor);
      span.start_us = now_ * kMicro;
      return;
    }
    // start_us held the time its last copied input reaches its lane (input_ready()).
    const double start = std::max(now_, span.start_us);
    if (overlap_) {
      overlap_start(d, id, start, span.end_us, floor);
      span.start_us = start * kMicro;
      return;
    }
    const double finish = std::max(start + span.end_us, floor);
    span.start_us = start * kMicro;
    span.end_us = finish * kMicro;
    queue_.insert(finish, {EventKind::kComputeDone, id});
  }

  // --- devices that slow each other (SharedRun) ----------------------------

  /// Seconds the op of `run` takes in all with `running_` devices busy.
  double shared_duration(const SharedRun& run) const {
    const double beside = static_cast<double>(running_ - 1) / static_cast<double>(plan_.devices - 1);
    return run.alone + (run.busy - run.alone) * beside;
  }

  /// Brings every running op's work up to now, at the pace it ran since its last update.
  void share_progress() {
    for (SharedRun& run : shared_) {
      if (run.op < 0) continue;
      const double duration = shared_duration(run);
      run.left = duration > 0 ? std::max(0.0, run.left - (now_ - run.since) / duration) : 0.0;
      run.since = now_;
    }
  }

  /// Re-times every running op's end at the pace `running_` devices give.
  void share_reschedule() {
    for (SharedRun& run : shared_) {
      if (run.op < 0) continue;
      if (run.done.valid()) queue_.cancel(run.done);
      run.done = queue_.insert(std::max(now_ + run.left * shared_duration(run), run.floor),
                               {EventKind::kComputeDone, run.op});
    }
  }

  [[gnu::noinline]] void share_start(size_t device, int op, double alone, double busy, double floor) {
    share_progress();
    ++running_;
    shared_[device] = SharedRun{op, 1.0, now_, alone, busy, floor, EventHandle{}};
    share_reschedule();
  }

  [[gnu::noinline]] void share_end(size_t device) {
    share_progress();
    --running_;
    shared_[device].op = -1;
    share_reschedule();
  }

  // --- NCCL's kernels beside compute (OverlappedRun) ----------------------

  /// How much longer than alone `run` takes with the collectives now running on `device`.
  double overlap_factor(size_t device, const OverlappedRun& run) const {
    const std::vector<RunningShare>& running = running_shares_[device];
    if (running.empty()) return 1.0;
    // Concurrent collectives on one GPU share its links: the most any one takes stands for them all.
    NcclShare share;
    for (const RunningShare& r : running) {
      share.sm = std::max(share.sm, r.share.sm);
      share.memory = std::max(share.memory, r.share.memory);
    }
    return nccl_overlap_factor(share, run.memory_part);
  }

  /// Brings `device`'s running op's work up to now, at the pace it ran since its last update.
  void overlap_progress(size_t device) {
    OverlappedRun& run = overlapped_[device];
    if (run.op < 0 || now_ <= run.since) return;
    const double duration = run.seconds * overlap_factor(device, run);
    run.left = duration > 0 ? std::max(0.0, run.left - (now_ - run.since) / duration) : 0.0;
    run.since = now_;
  }

  /// Re-times `device`'s running op's end at the pace the collectives running there give.
  void overlap_reschedule(size_t device) {
    OverlappedRun& run = overlapped_[device];
    if (run.op < 0) return;
    if (run.done.valid()) queue_.cancel(run.done);
    const double finish = run.since + run.left * run.seconds * overlap_factor(device, run);
    run.done = queue_.insert(std::max(finish, run.floor), {EventKind::kComputeDone, run.op});
  }

  [[gnu::noinline]] void overlap_start(size_t device, int op, double start, double seconds, double floor) {
    const PlanOp& plan_op = plan_.ops[static_cast<size_t>(op)];
    const double dram_bytes = static_cast<double>(plan_op.bytes_read + plan_op.bytes_written);
    overlapped_[device] =
        OverlappedRun{op, seconds, memory_part(dram_bytes, seconds, costs_.facts()), 1.0, start, floor, EventHandle{}};
    overlap_reschedule(device);
  }

  /// Collective `op` starts (`running`) or ends on `device`.
  [[gnu::noinline]] void overlap_collective(size_t device, int op, const NcclShare& share, bool running) {
    overlap_progress(device);
    std::vector<RunningShare>& shares = running_shares_[device];
    if (running) {
      shares.push_back(RunningShare{op, share});
    } else {
      const auto at = std::find_if(shares.begin(), shares.end(), [&](const RunningShare& r) { return r.op == op; });
      SPLITSCOPE_CHECK(at != shares.end(), "a collective ends on a device it never started on");
      shares.erase(at);
    }
    overlap_reschedule(device);
  }

  void compute_done(int id) {
    OpState& state = state_[static_cast<size_t>(id)];
    state.flags |= kDone;
    ++finished_;
    if (contended_) {
      share_end(state.device);
      span_of(id).end_us = now_ * kMicro;
    } else if (overlap_) {
      overlapped_[state.device].op = -1;
      span_of(id).end_us = now_ * kMicro;
    }
    lanes_[state.device].busy = false;
    for (int value = first_output_[static_cast<size_t>(id)]; value >= 0;
         value = links_[static_cast<size_t>(value)].next_output) {
      value_ready(value, false);
    }
    try_start_compute(state.device);
  }

  void start_transfer(int id) {
    const OpState& state = state_[static_cast<size_t>(id)];
    Span& span = span_of(id);
    span.start_us = now_ * kMicro;
    launch_send(id, -1, transfer_route(state.source, state.device), static_cast<double>(span.bytes));
  }

  // --- sends --------------------------------------------------------------

  /// A send of `bytes` over `route`; it pays `latency` seconds before its
  /// bytes flow, or its route's latency when `latency` is negative. With
  /// `group_links`, a step group's sends (ring_step_group.hpp) over those
  /// links, as one flow whose rate is each send's.
  void launch_send(int op, int part, const Route& route, double bytes, double latency = -1,
                   const std::vector<int>* group_links = nullptr) {
    int id;
    if (free_sends_.empty()) {
      id = static_cast<int>(sends_.size());
      sends_.emplace_back();
    } else {
      id = free_sends_.back();
      free_sends_.pop_back();
    }
    // Field by field: assigning a fresh Send{} went through a temporary on
    // the stack, whose partial stores stalled the copy (a tenth of a
    // collective-heavy run).
    Send& send = sends_[static_cast<size_t>(id)];
    send.op = op;
    send.part = part;
    send.bytes = bytes;
    send.flow = -1;
    send.done = EventHandle{};
    send.route = route;
    send.group_links = group_links;
    send.arrival = now_ + (latency >= 0 ? latency : send.route.latency_seconds);
    const std::span<const int> links = send.links();
    send.lone = bytes > 0 && !links.empty() && route_idle(links);
    if (!send.lone) {
      queue_.insert(send.arrival, {EventKind::kSendArrives, id});
      return;
    }
    // Nothing crosses its links now, and anything that comes to cross them
    // before it is done asks for it first (claim_route()): until then it is
    // alone, and ends when a flow started at its arrival would.
    for (const int link : links) lone_on_link_[static_cast<size_t>(link)] = id;
    ++lone_sends_;
    const double alone = group_links != nullptr ? flows_.alone_rate(link_set_of(group_links)) : flows_.alone_rate(links);
    send.done = queue_.insert(send.arrival + bytes / alone, {EventKind::kSendDone, id});
  }

  /// Whether no flow and no lone send crosses any of `links`.
  bool route_idle(std::span<const int> links) const {
    for (const int link : links) {
      if (lone_on_link_[static_cast<size_t>(link)] >= 0 || !flows_.idle(link)) return false;
    }
    return true;
  }

  /// A flow is about to start on `route`: the lone sends on its links join
  /// the flow network as they would have been there, so that it shares
  /// their links from now on. A lone send not arrived yet goes back to
  /// arriving by its event; one arrived starts its flow at its arrival time,
  /// alone (its rate and end are the ones its queued completion has), and
  /// the start about to happen re-shares from there.
  void claim_route(std::span<const int> links) {
    if (lone_sends_ == 0) return;  // a step group's thousands of links, step after step
    for (const int link : links) {
      const int other = lone_on_link_[static_cast<size_t>(link)];
      if (other < 0) continue;
      Send& send = sends_[static_cast<size_t>(other)];
      for (const int its : send.links()) lone_on_link_[static_cast<size_t>(its)] = -1;
      send.lone = false;
      --lone_sends_;
      if (now_ < send.arrival) {
        queue_.cancel(send.done);
        send.done = EventHandle{};
        queue_.insert(send.arrival, {EventKind::kSendArrives, other});
        continue;
      }
      start_flow(other, send.arrival);  // its completion stays queued: alone, its end is the same
    }
  }

  /// A step group's links as the flow network's link set (registered once
  /// per group; groups over the same links share one): its steps join
  /// without a pass over thousands of links.
  FlowNetwork::LinkSetId link_set_of(const std::vector<int>* links) {
    auto [it, inserted] = link_sets_.try_emplace(links, -1);
    if (inserted) it->second = flows_.link_set(*links);
    return it->second;
  }

  /// Puts send `id` into the flow network as starting at `at`.
  void start_flow(int id, double at) {
    Send& send = sends_[static_cast<size_t>(id)];
    send.flow = send.group_links != nullptr ? flows_.join(at, link_set_of(send.group_links), send.bytes)
                                            : flows_.join(at, send.links(), send.bytes);
    if (flow_owner_.size() <= static_cast<size_t>(send.flow)) {
      flow_owner_.resize(static_cast<size_t>(send.flow) + 1, -1);
    }
    flow_owner_[static_cast<size_t>(send.flow)] = id;
  }

  void send_arrives(int id) {
    Send& send = sends_[static_cast<size_t>(id)];
    if (send.bytes <= 0 || send.links().empty()) {
      send_complete(id);
      return;
    }
    claim_route(send.links());
    start_flow(id, now_);
    reschedule_flows();
  }

  void send_done(int id) {
    Send& send = sends_[static_cast<size_t>(id)];
    if (send.lone) {
      if (send.group_links != nullptr && next_step_alone(id)) return;
      for (const int link : send.links()) lone_on_link_[static_cast<size_t>(link)] = -1;
      send.lone = false;
      --lone_sends_;
      send_complete(id);
      return;
    }
    flows_.leave(send.flow);
    reschedule_flows();
    send_complete(id);
  }

  /// Moves the completion events of the flows whose bandwidth just changed.
  void reschedule_flows() {
    for (FlowNetwork::FlowId flow : flows_.rescheduled()) {
      const int owner = flow_owner_[static_cast<size_t>(flow)];
      Send& send = sends_[static_cast<size_t>(owner)];
      if (send.done.valid()) queue_.cancel(send.done);
      send.done = queue_.insert(std::max(now_, flows_.finish_time(flow)), {EventKind::kSendDone, owner});
    }
  }

  void send_complete(int id) {
    const int op = sends_[static_cast<size_t>(id)].op;
    const int part = sends_[static_cast<size_t>(id)].part;
    free_sends_.push_back(id);
    if (part >= 0) {
      collective_send_done(op, part);
      return;
    }
    state_[static_cast<size_t>(op)].flags |= kDone;
    span_of(op).end_us = now_ * kMicro;
    ++finished_;
    SPLITSCOPE_CHECK(first_output_[static_cast<size_t>(op)] >= 0, "a transfer writes its copy");
    value_ready(first_output_[static_cast<size_t>(op)], true);
  }

  // --- collectives --------------------------------------------------------

  // collectives_ is filled before the run starts, so references into it stay valid.
  CollectiveRun& run_of(int op) {
    return collectives_[static_cast<size_t>(collective_of_[static_cast<size_t>(op)])];
  }

  /// Replica 0's input `slot` of collective `op` is written: so is every
  /// replica's same input, at this instant, where the replicas are held once.
  void collective_value_ready(int op, int slot) {
    const PlanOp& collective = plan_.ops[static_cast<size_t>(op)];
    if (!collective.spans_replicas || replicas_ == 1) {
      collective_input_ready(op, slot);
      return;
    }
    const size_t block = replica_block(collective, collective.inputs.size());
    for (size_t r = 0; r < static_cast<size_t>(replicas_); ++r) {
      collective_input_ready(op, static_cast<int>(r * block + static_cast<size_t>(slot)));
    }
  }

  [[gnu::noinline]] void collective_input_ready(int op, int slot) {
    CollectiveRun& run = run_of(op);
    if (run.group != nullptr) {
      group_input_ready(op, slot);
      return;
    }
    for (int send : run.schedule->sends_needing_input[static_cast<size_t>(slot)]) {
      if (--run.send_waits[static_cast<size_t>(send)] == 0) start_collective_send(op, send);
    }
    for (int delivery : run.schedule->deliveries_needing_input[static_cast<size_t>(slot)]) {
      if (--run.delivery_waits[static_cast<size_t>(delivery)] == 0) deliver(op, delivery);
    }
  }

  /// Per send of `schedule`, the calls issued before its first, once per schedule.
  const std::vector<int>& calls_before_of(const CollectiveSchedule& schedule) {
    auto [it, inserted] = calls_before_.try_emplace(&schedule);
    if (inserted) it->second = calls_before_sends(schedule);
    return it->second;
  }

  [[gnu::noinline]] void start_collective_send(int op, int index) {
    CollectiveRun& run = run_of(op);
    if (run.calls_before != nullptr) {
      // The host issues the collective's calls in order from its first: this send's copy is call calls_before + 1.
      const double issued = releases_[static_cast<size_t>(op)].first +
                            costs_.host_issue_seconds() * (*run.calls_before)[static_cast<size_t>(index)];
      if (issued > now_) {
        queue_.insert(issued, {EventKind::kSendIssued, static_cast<int>(held_sends_.size())});
        held_sends_.push_back(HeldSend{op, index});
        return;
      }
    }
    const CollectiveSend& send = run.schedule->sends[static_cast<size_t>(index)];
    for (int delivery : {send.delivers_to, send.touches_from}) {
      if (delivery < 0) continue;
      double& first = run.delivery_start[static_cast<size_t>(delivery)];
      first = std::min(first, now_);
      if (run.share != nullptr && run.share_state[static_cast<size_t>(delivery)] == kIdle) {
        run.share_state[static_cast<size_t>(delivery)] = kRunning;
        overlap_collective(static_cast<size_t>(run.schedule->deliveries[static_cast<size_t>(delivery)].device), op,
                           *run.share, true);
      }
    }
    const Route& route = (*run.routes)[static_cast<size_t>(index)];
    if (run.nccl != nullptr) {
      launch_send(op, index, route, run.nccl->flow_bytes[static_cast<size_t>(index)], run.nccl->send_latency_seconds);
    } else {
      launch_send(op, index, route, static_cast<double>(send.bytes));
    }
  }

  [[gnu::noinline]] void send_issued(int held) {
    const HeldSend send = held_sends_[static_cast<size_t>(held)];
    start_collective_send(send.op, send.index);
  }

  [[gnu::noinline]] void collective_send_done(int op, int index) {
    CollectiveRun& run = run_of(op);
    if (run.group != nullptr) {
      group_step_done(op);
      return;
    }
    const CollectiveSend& send = run.schedule->sends[static_cast<size_t>(index)];
    for (int next : send.then) {
      if (--run.send_waits[static_cast<size_t>(next)] == 0) start_collective_send(op, next);
    }
    if (--run.delivery_waits[static_cast<size_t>(send.delivers_to)] == 0) deliver(op, send.delivers_to);
  }

  [[gnu::noinline]] void deliver(int op, int index) {
    CollectiveRun& run = run_of(op);
    const auto i = static_cast<size_t>(index);
    Span& span = span_of(op, index);
    span.start_us = std::min(run.delivery_start[i], now_) * kMicro;
    span.end_us = now_ * kMicro;
    if (run.share != nullptr) {
      if (run.share_state[i] == kRunning) {
        overlap_collective(static_cast<size_t>((*run.deliveries)[i].device), op, *run.share, false);
      }
      run.share_state[i] = kOver;
    }
    if (++run.delivered == run.deliveries->size()) {
      state_[static_cast<size_t>(op)].flags |= kDone;
      ++finished_;
    }
    // Delivery i writes participant i's outputs (a shared schedule's values are another op's).
    const PlanOp& collective = plan_.ops[static_cast<size_t>(op)];
    const std::vector<int>& outputs = collective.outputs;
    // Another replica's participant: its values are replica 0's again, written by its own delivery.
    if (static_cast<size_t>(index * run.segments) >= replica_block(collective, outputs.size())) return;
    for (int k = 0; k < run.segments; ++k) {
      value_ready(outputs[static_cast<size_t>(index * run.segments + k)], true);
    }
  }

  // --- collectives in step groups (ring_step_group.hpp) --------------------

  /// Input `slot` of step-group collective `op` is written. Its first step
  /// starts once every participant has all its inputs (a bucket's segments
  /// come one by one; no send may start before its sender has them all). A
  /// participant that has them before the others queues a decision at this
  /// instant, after what is queued for it already: if the others came too,
  /// nothing was lost by waiting; if not, the collective runs as its
  /// schedule's sends from here, each starting when its own inputs are
  /// there (exactly as they would have started).
  void group_input_ready(int op, int slot) {
    CollectiveRun& run = run_of(op);
    run.input_ready[static_cast<size_t>(slot)] = 1;
    if (--run.segments_missing[static_cast<size_t>(slot / run.segments)] > 0) return;
    if (--run.participants_missing == 0) {
      if (!run.deciding) start_group_step(op);
      return;
    }
    if (!run.deciding) {
      run.deciding = true;
      queue_.insert(now_, {EventKind::kGroupDecides, op});
    }
  }

  [[gnu::noinline]] void group_decides(int op) {
    CollectiveRun& run = run_of(op);
    run.deciding = false;
    if (run.participants_missing == 0) {
      start_group_step(op);
      return;
    }
    // The inputs came apart: its sends start participant by participant.
    unroll(run, plan_.ops[static_cast<size_t>(op)]);
    const std::vector<uint8_t> ready = std::move(run.input_ready);
    for (size_t slot = 0; slot < ready.size(); ++slot) {
      if (ready[slot] != 0) collective_input_ready(op, static_cast<int>(slot));
    }
  }

  /// The next step of `op`'s ring starts: every participant sends at once.
  void start_group_step(int op) {
    CollectiveRun& run = run_of(op);
    const RingStepGroup& group = *run.group;
    if (run.step == 0) {
      for (size_t delivery = 0; delivery < run.deliveries->size(); ++delivery) {
        run.delivery_start[delivery] = now_;
        if (run.share != nullptr) {
          run.share_state[delivery] = kRunning;
          overlap_collective(static_cast<size_t>((*run.deliveries)[delivery].device), op, *run.share, true);
        }
      }
    }
    if (group.nccl) {
      launch_send(op, run.step, Route{}, group.nccl->flow_bytes.front(), group.nccl->send_latency_seconds,
                  &group.links);
    } else {
      launch_send(op, run.step, Route{}, static_cast<double>(group.steps->send_bytes), group.latency_seconds,
                  &group.links);
    }
  }

  /// Step-group send `id` ended alone on its links: its collective's next
  /// step would find them idle and take them alone, so the same send goes
  /// on as that step, keeping its claim on them, without a pass over its
  /// thousands of links (what makes a lone ring O(N + steps), not O(N ·
  /// steps)). False at the last step.
  bool next_step_alone(int id) {
    Send& send = sends_[static_cast<size_t>(id)];
    CollectiveRun& run = run_of(send.op);
    if (run.step + 1 >= run.group->steps->steps) return false;
    ++run.step;
    send.part = run.step;
    const RingStepGroup& group = *run.group;
    if (run.alone_rate <= 0) run.alone_rate = flows_.alone_rate(link_set_of(&group.links));
    send.arrival = now_ + (group.nccl ? group.nccl->send_latency_seconds : group.latency_seconds);
    send.done = queue_.insert(send.arrival + send.bytes / run.alone_rate, {EventKind::kSendDone, id});
    return true;
  }

  void group_step_done(int op) {
    CollectiveRun& run = run_of(op);
    if (++run.step < run.group->steps->steps) {
      start_group_step(op);
      return;
    }
    for (size_t delivery = 0; delivery < run.deliveries->size(); ++delivery) deliver(op, static_cast<int>(delivery));
  }

  // --- the end ------------------------------------------------------------

  /// Replicas held once: the timeline keeps replica 0's devices' spans
  /// (timeline.hpp: every replica ran the same); the spanning collectives'
  /// deliveries to the others go.
  void keep_replica_zero() {
    const int each = plan_.replicas->devices_each;
    std::erase_if(timeline_.spans, [&](const Span& span) { return span.device >= each; });
    timeline_.replicas = replicas_;
    timeline_.replica_devices = each;
  }

  /// A lane met an entry that is not one of its device's compute ops, or one started already.
  [[noreturn]] void schedule_broken() {
    check_schedules();  // throws, naming the entry
    SPLITSCOPE_CHECK(false, "a schedule lists an op its device cannot run");
    std::abort();
  }

  void check_finished() {
    const bool lanes_done =
        std::all_of(lanes_.begin(), lanes_.end(), [](const ComputeLane& lane) { return lane.next == lane.end; });
    if (finished_ == plan_.ops.size() && lanes_done) return;
    // A wrong schedule stalls the run or leaves entries unreached: name it rather than the stall.
    check_schedules();
    for (const PlanOp& op : plan_.ops) {
      SPLITSCOPE_CHECK(state_[static_cast<size_t>(op.id)].flags & kDone,
                       fmt::format("the simulation stalled: op {} ({}) never ran; its inputs never exist or "
                                   "its device's schedule waits on a later op",
                                   op.id, op_label(plan_, op)));
    }
    SPLITSCOPE_CHECK(lanes_done, "a schedule lists ops no lane reached");
  }

  const Plan& plan_;
  const OpJitter* jitter_;  ///< null: every op takes its priced time
  const Topology& topology_;
  const OpCostModel& costs_;
  OpCostModel::PlanPricing pricing_;
  double handoff_ = 0;  ///< seconds: DeviceSpec::lane_handoff_us
  bool contended_ = false;          ///< the devices slow each other (SharedRun)
  /// Replicas held once (Plan::replicas, widened by replica_view.hpp): the
  /// plan's spanning collectives list every replica's participants, inputs
  /// and outputs, and only replica 0's values exist (the others' are its ids again).
  int replicas_ = 1;
  std::vector<SharedRun> shared_;   ///< by device, when contended_
  int running_ = 0;                 ///< devices running an op, when contended_
  /// Some collective's NCCL kernel slows the compute it overlaps (OverlappedRun).
  bool overlap_ = false;
  std::vector<OverlappedRun> overlapped_;                 ///< by device
  std::vector<std::vector<RunningShare>> running_shares_;  ///< by device: the collectives running there
  std::unordered_map<const void*, NcclShare> shares_;  ///< by schedule or step group
  std::vector<HostRelease> releases_;  ///< per op, with a host lane; empty without one
  std::unordered_map<const CollectiveSchedule*, std::vector<int>> calls_before_;
  std::vector<HeldSend> held_sends_;
  FlowNetwork flows_;
  std::vector<int> lone_on_link_;  ///< by link: the lone send crossing it (Send::lone), -1 for none
  int lone_sends_ = 0;             ///< sends with Send::lone
  std::unordered_map<const std::vector<int>*, FlowNetwork::LinkSetId> link_sets_;  ///< by step group's links
  EventQueue<Payload> queue_;
  double now_ = 0;
  size_t finished_ = 0;
  size_t scheduled_ops_ = 0;  ///< compute, epilogue and update ops
  Timeline timeline_;  ///< the spans, written as the ops run

  std::vector<OpState> state_;
  /// By op, once the plan's first collective is read: its (first) span.
  /// Empty before: every op's span is its own index.
  std::vector<int> span_of_;
  std::vector<int> collective_of_;  ///< by op, with span_of_: a collective's run; -1 for others
  /// Transfers of network inputs, which start with the run, in op order (a
  /// pass over every op's state to find them was 1.5% of a simulation).
  std::vector<int> ready_transfers_;
  CollectiveScheduleCache schedules_;
  std::unordered_map<const RingSteps*, std::optional<RingStepGroup>> groups_;
  std::unordered_map<const CollectiveSchedule*, std::optional<NcclRingSends>> nccl_sends_;
  std::unordered_map<const CollectiveSchedule*, std::vector<Route>> send_routes_;
  std::unordered_map<uint64_t, Route> transfer_routes_;  ///< by source · devices + destination, as they are asked
  std::vector<CollectiveRun> collectives_;
  std::vector<ValueLinks> links_;  ///< by value
  std::vector<Reader> readers_;
  std::vector<int> first_output_;  ///< by op: its first output value, -1 for none
  std::vector<ComputeLane> lanes_;  ///< by device

  std::vector<Send> sends_;
  std::vector<int> free_sends_;
  std::vector<int> flow_owner_;
};

}  // namespace

Timeline simulate_plan(const Plan& plan, const Topology& topology, const OpCostModel& costs,
                       const OpJitter* jitter) {
  return *Engine(plan, topology, costs, jitter).run();  // no deadline: always a timeline
}

std::optional<Timeline> simulate_plan_until(const Plan& plan, const Topology& topology, const OpCostModel& costs,
                                            const SimulationDeadline& deadline, const OpJitter* jitter) {
  return Engine(plan, topology, costs, jitter).run(deadline);
}

}  // namespace splitscope
