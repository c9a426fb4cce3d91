#include "sim/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sim/collectives.hpp"
#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

enum class EventKind : uint8_t {
  kComputeDone,  ///< subject: op
  kSendArrives,  ///< subject: send; its latency has passed, its bytes start to flow
  kSendDone,     ///< subject: send; its last byte has arrived
};

struct Payload {
  EventKind kind = EventKind::kComputeDone;
  int subject = -1;
};

/// A transfer, or one send of a collective, in flight.
struct Send {
  int op = -1;
  int part = -1;  ///< the collective's send index; -1 for a transfer
  Route route;
  double bytes = 0;
  FlowNetwork::FlowId flow = -1;
  EventHandle done;
};

/// A collective's progress.
struct CollectiveRun {
  CollectiveSchedule schedule;
  std::vector<int> send_waits;
  std::vector<int> delivery_waits;
  std::vector<double> delivery_start;
  std::vector<double> delivery_end;
  size_t delivered = 0;
};

/// Readers of a value: (op, input slot) pairs, stored by value (CSR).
struct Readers {
  std::vector<int> offsets;  ///< values + 1
  std::vector<int> ops;
  std::vector<int> slots;
};

class Engine {
 public:
  Engine(const Plan& plan, const Topology& topology, const std::vector<double>& op_seconds)
      : plan_(plan),
        topology_(topology),
        op_seconds_(op_seconds),
        flows_(link_capacities(topology)) {}

  Timeline run() {
    validate();
    prepare();
    start();
    while (!queue_.empty()) {
      const auto event = queue_.remove_next();
      now_ = event.time;
      switch (event.payload.kind) {
        case EventKind::kComputeDone: compute_done(event.payload.subject); break;
        case EventKind::kSendArrives: send_arrives(event.payload.subject); break;
        case EventKind::kSendDone: send_done(event.payload.subject); break;
      }
    }
    check_finished();
    return timeline();
  }

 private:
  static std::vector<double> link_capacities(const Topology& topology) {
    std::vector<double> capacities;
    capacities.reserve(topology.links().size());
    for (const Link& link : topology.links()) capacities.push_back(link.bytes_per_second);
    return capacities;
  }

  // --- setting up ---------------------------------------------------------

  void validate() const {
    SPLITSCOPE_CHECK(plan_.graph != nullptr, "a plan needs its graph");
    SPLITSCOPE_CHECK(plan_.devices <= topology_.devices(), "the plan has more devices than the machine");
    SPLITSCOPE_CHECK(op_seconds_.size() == plan_.ops.size(), "one duration per op");
    const auto device_ok = [&](int device) { return device >= 0 && device < plan_.devices; };
    std::vector<int> scheduled(plan_.ops.size(), 0);
    for (size_t d = 0; d < plan_.schedule.size(); ++d) {
      for (int id : plan_.schedule[d]) {
        const PlanOp& op = plan_.op(id);
        SPLITSCOPE_CHECK(op.role == OpRole::kCompute || op.role == OpRole::kEpilogue,
                         fmt::format("schedule[{}] lists op {}, which is no compute op", d, id));
        SPLITSCOPE_CHECK(op.device == static_cast<int>(d),
                         fmt::format("schedule[{}] lists op {} of device {}", d, id, op.device));
        scheduled[static_cast<size_t>(id)] += 1;
      }
    }
    for (const PlanOp& op : plan_.ops) {
      for (int device : op_devices(op)) {
        SPLITSCOPE_CHECK(device_ok(device), fmt::format("op {} is on device {}, outside the plan's {}",
                                                        op.id, device, plan_.devices));
      }
      for (int value : op.inputs) {
        SPLITSCOPE_CHECK(value < static_cast<int>(plan_.values.size()), "input of an unknown value");
      }
      if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue) {
        SPLITSCOPE_CHECK(scheduled[static_cast<size_t>(op.id)] == 1,
                         fmt::format("compute op {} ({}) must be scheduled exactly once, is {} times",
                                     op.id, op_label(plan_, op), scheduled[static_cast<size_t>(op.id)]));
      }
      if (op.role == OpRole::kTransfer) {
        SPLITSCOPE_CHECK(op.inputs.size() == 1 && op.inputs[0] >= 0 && op.outputs.size() == 1,
                         fmt::format("transfer op {} moves one value", op.id));
      }
    }
  }

  void prepare() {
    const size_t ops = plan_.ops.size();
    pending_.assign(ops, 0);
    start_.assign(ops, kNever);
    end_.assign(ops, kNever);
    collective_of_.assign(ops, -1);
    next_in_schedule_.assign(static_cast<size_t>(plan_.devices), 0);
    busy_.assign(static_cast<size_t>(plan_.devices), false);

    // Readers of every value, and how many produced inputs each op waits for.
    const size_t values = plan_.values.size();
    readers_.offsets.assign(values + 1, 0);
    for (const PlanOp& op : plan_.ops) {
      for (int value : op.inputs) {
        if (value >= 0 && plan_.value(value).producer >= 0) {
          readers_.offsets[static_cast<size_t>(value) + 1] += 1;
          pending_[static_cast<size_t>(op.id)] += 1;
        }
      }
    }
    for (size_t v = 0; v < values; ++v) readers_.offsets[v + 1] += readers_.offsets[v];
    readers_.ops.resize(static_cast<size_t>(readers_.offsets.back()));
    readers_.slots.resize(readers_.ops.size());
    std::vector<int> fill(readers_.offsets.begin(), readers_.offsets.end() - 1);
    for (const PlanOp& op : plan_.ops) {
      for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
        const int value = op.inputs[slot];
        if (value < 0 || plan_.value(value).producer < 0) continue;
        const auto at = static_cast<size_t>(fill[static_cast<size_t>(value)]++);
        readers_.ops[at] = op.id;
        readers_.slots[at] = static_cast<int>(slot);
      }
    }

    for (const PlanOp& op : plan_.ops) {
      if (op.role != OpRole::kCollective) continue;
      CollectiveRun run;
      run.schedule = decompose_collective(plan_, op);
      run.send_waits.reserve(run.schedule.sends.size());
      for (const CollectiveSend& send : run.schedule.sends) run.send_waits.push_back(send.waits_for);
      for (const CollectiveDelivery& delivery : run.schedule.deliveries) {
        run.delivery_waits.push_back(delivery.waits_for);
      }
      run.delivery_start.assign(run.schedule.deliveries.size(), kNever);
      run.delivery_end.assign(run.schedule.deliveries.size(), kNever);
      collective_of_[static_cast<size_t>(op.id)] = static_cast<int>(collectives_.size());
      collectives_.push_back(std::move(run));
    }
  }

  /// Time 0: whatever reads only network inputs starts.
  void start() {
    for (const PlanOp& op : plan_.ops) {
      if (op.role == OpRole::kTransfer && pending_[static_cast<size_t>(op.id)] == 0) start_transfer(op);
      if (op.role != OpRole::kCollective) continue;
      for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
        const int value = op.inputs[slot];
        if (value >= 0 && plan_.value(value).producer < 0) {
          collective_input_ready(op, static_cast<int>(slot));
        }
      }
    }
    for (int device = 0; device < plan_.devices; ++device) try_start_compute(device);
  }

  // --- the lanes ----------------------------------------------------------

  void value_ready(int value) {
    const auto begin = static_cast<size_t>(readers_.offsets[static_cast<size_t>(value)]);
    const auto end = static_cast<size_t>(readers_.offsets[static_cast<size_t>(value) + 1]);
    for (size_t at = begin; at < end; ++at) {
      const PlanOp& op = plan_.op(readers_.ops[at]);
      switch (op.role) {
        case OpRole::kCompute:
        case OpRole::kEpilogue:
          if (--pending_[static_cast<size_t>(op.id)] == 0) try_start_compute(op.device);
          break;
        case OpRole::kTransfer:
          if (--pending_[static_cast<size_t>(op.id)] == 0) start_transfer(op);
          break;
        case OpRole::kCollective:
          collective_input_ready(op, readers_.slots[at]);
          break;
      }
    }
  }

  void try_start_compute(int device) {
    const auto d = static_cast<size_t>(device);
    const auto& order = plan_.schedule.size() > d ? plan_.schedule[d] : no_ops_;
    if (busy_[d] || next_in_schedule_[d] >= order.size()) return;
    const int id = order[next_in_schedule_[d]];
    if (pending_[static_cast<size_t>(id)] > 0) return;
    busy_[d] = true;
    next_in_schedule_[d] += 1;
    start_[static_cast<size_t>(id)] = now_;
    queue_.insert(now_ + op_seconds_[static_cast<size_t>(id)], {EventKind::kComputeDone, id});
  }

  void compute_done(int id) {
    const PlanOp& op = plan_.op(id);
    end_[static_cast<size_t>(id)] = now_;
    ++finished_;
    busy_[static_cast<size_t>(op.device)] = false;
    for (int value : op.outputs) value_ready(value);
    try_start_compute(op.device);
  }

  void start_transfer(const PlanOp& op) {
    start_[static_cast<size_t>(op.id)] = now_;
    launch_send(op.id, -1, op.src_device, op.device,
                static_cast<double>(plan_.value(op.inputs[0]).bytes));
  }

  // --- sends --------------------------------------------------------------

  void launch_send(int op, int part, int from, int to, double bytes) {
    int id;
    if (free_sends_.empty()) {
      id = static_cast<int>(sends_.size());
      sends_.emplace_back();
    } else {
      id = free_sends_.back();
      free_sends_.pop_back();
    }
    Send& send = sends_[static_cast<size_t>(id)];
    send = Send{};
    send.op = op;
    send.part = part;
    send.bytes = bytes;
    if (from != to) send.route = topology_.route(from, to);
    queue_.insert(now_ + send.route.latency_seconds, {EventKind::kSendArrives, id});
  }

  void send_arrives(int id) {
    Send& send = sends_[static_cast<size_t>(id)];
    if (send.bytes <= 0 || send.route.link_count == 0) {
      send_complete(id);
      return;
    }
    send.flow = flows_.start(now_, send.route.links(), send.bytes);
    if (flow_owner_.size() <= static_cast<size_t>(send.flow)) {
      flow_owner_.resize(static_cast<size_t>(send.flow) + 1, -1);
    }
    flow_owner_[static_cast<size_t>(send.flow)] = id;
    reschedule_flows();
  }

  void send_done(int id) {
    flows_.finish(now_, sends_[static_cast<size_t>(id)].flow);
    reschedule_flows();
    send_complete(id);
  }

  /// Moves the completion events of the flows whose bandwidth just changed.
  void reschedule_flows() {
    for (FlowNetwork::FlowId flow : flows_.rescheduled()) {
      Send& send = sends_[static_cast<size_t>(flow_owner_[static_cast<size_t>(flow)])];
      if (queue_.contains(send.done)) queue_.remove(send.done);
      send.done = queue_.insert(std::max(now_, flows_.finish_time(flow)),
                                {EventKind::kSendDone, flow_owner_[static_cast<size_t>(flow)]});
    }
  }

  void send_complete(int id) {
    const Send send = sends_[static_cast<size_t>(id)];
    free_sends_.push_back(id);
    const PlanOp& op = plan_.op(send.op);
    if (send.part < 0) {
      end_[static_cast<size_t>(op.id)] = now_;
      ++finished_;
      value_ready(op.outputs[0]);
    } else {
      collective_send_done(op, send.part);
    }
  }

  // --- collectives --------------------------------------------------------

  // collectives_ is filled before the run starts, so references into it stay valid.
  CollectiveRun& run_of(const PlanOp& op) {
    return collectives_[static_cast<size_t>(collective_of_[static_cast<size_t>(op.id)])];
  }
  const CollectiveRun& run_of(const PlanOp& op) const {
    return collectives_[static_cast<size_t>(collective_of_[static_cast<size_t>(op.id)])];
  }

  void collective_input_ready(const PlanOp& op, int slot) {
    CollectiveRun& run = run_of(op);
    for (int send : run.schedule.sends_needing_input[static_cast<size_t>(slot)]) {
      if (--run.send_waits[static_cast<size_t>(send)] == 0) start_collective_send(op, send);
    }
    for (int delivery : run.schedule.deliveries_needing_input[static_cast<size_t>(slot)]) {
      if (--run.delivery_waits[static_cast<size_t>(delivery)] == 0) deliver(op, delivery);
    }
  }

  void start_collective_send(const PlanOp& op, int index) {
    CollectiveRun& run = run_of(op);
    const CollectiveSend& send = run.schedule.sends[static_cast<size_t>(index)];
    for (int delivery : {send.delivers_to, send.touches_from}) {
      if (delivery < 0) continue;
      double& first = run.delivery_start[static_cast<size_t>(delivery)];
      first = std::min(first, now_);
    }
    launch_send(op.id, index, send.from_device, send.to_device, static_cast<double>(send.bytes));
  }

  void collective_send_done(const PlanOp& op, int index) {
    CollectiveRun& run = run_of(op);
    const CollectiveSend& send = run.schedule.sends[static_cast<size_t>(index)];
    for (int next : send.then) {
      if (--run.send_waits[static_cast<size_t>(next)] == 0) start_collective_send(op, next);
    }
    if (--run.delivery_waits[static_cast<size_t>(send.delivers_to)] == 0) {
      deliver(op, send.delivers_to);
    }
  }

  void deliver(const PlanOp& op, int index) {
    CollectiveRun& run = run_of(op);
    const auto i = static_cast<size_t>(index);
    run.delivery_end[i] = now_;
    run.delivery_start[i] = std::min(run.delivery_start[i], now_);
    if (++run.delivered == run.schedule.deliveries.size()) ++finished_;
    value_ready(run.schedule.deliveries[i].value);
  }

  // --- the result ---------------------------------------------------------

  void check_finished() const {
    if (finished_ == plan_.ops.size()) return;
    for (const PlanOp& op : plan_.ops) {
      const bool done = op.role == OpRole::kCollective
                            ? run_of(op).delivered == run_of(op).schedule.deliveries.size()
                            : end_[static_cast<size_t>(op.id)] != kNever;
      SPLITSCOPE_CHECK(done, fmt::format("the simulation stalled: op {} ({}) never ran; its inputs "
                                         "never exist or its device's schedule waits on a later op",
                                         op.id, op_label(plan_, op)));
    }
  }

  Timeline timeline() const {
    constexpr double kMicro = 1e6;
    Timeline timeline;
    timeline.spans.reserve(plan_.ops.size());
    for (const PlanOp& op : plan_.ops) {
      const auto i = static_cast<size_t>(op.id);
      switch (op.role) {
        case OpRole::kCompute:
        case OpRole::kEpilogue:
          timeline.spans.push_back(Span{op.device, Lane::kCompute, SpanKind::kCompute, op.id, {},
                                        start_[i] * kMicro, end_[i] * kMicro, op.flops, 0});
          break;
        case OpRole::kTransfer:
          timeline.spans.push_back(Span{op.device, Lane::kCopyIn, SpanKind::kTransfer, op.id, {},
                                        start_[i] * kMicro, end_[i] * kMicro, 0,
                                        plan_.value(op.inputs[0]).bytes});
          break;
        case OpRole::kCollective: {
          const CollectiveRun& run = run_of(op);
          for (size_t d = 0; d < run.schedule.deliveries.size(); ++d) {
            const CollectiveDelivery& delivery = run.schedule.deliveries[d];
            timeline.spans.push_back(Span{delivery.device, Lane::kCopyIn, SpanKind::kCollective, op.id,
                                          {}, run.delivery_start[d] * kMicro,
                                          run.delivery_end[d] * kMicro, 0, delivery.bytes_received});
          }
          break;
        }
      }
    }
    return timeline;
  }

  const Plan& plan_;
  const Topology& topology_;
  const std::vector<double>& op_seconds_;
  FlowNetwork flows_;
  EventQueue<Payload> queue_;
  double now_ = 0;
  size_t finished_ = 0;

  std::vector<int> pending_;
  std::vector<double> start_;
  std::vector<double> end_;
  std::vector<int> collective_of_;
  std::vector<CollectiveRun> collectives_;
  Readers readers_;
  std::vector<size_t> next_in_schedule_;
  std::vector<bool> busy_;
  const std::vector<int> no_ops_;

  std::vector<Send> sends_;
  std::vector<int> free_sends_;
  std::vector<int> flow_owner_;
};

}  // namespace

Timeline simulate_plan(const Plan& plan, const Topology& topology, const std::vector<double>& op_seconds) {
  return Engine(plan, topology, op_seconds).run();
}

}  // namespace splitscope
