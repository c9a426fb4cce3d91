#include "sim/engine/ps_simulation.hpp"

#include <fmt/format.h>

#include <deque>

#include "exec/run_limits.hpp"
#include "exec/ps/run_record.hpp"
#include "exec/ps/shard_ledger.hpp"
#include "exec/ps/shard_tally.hpp"
#include "exec/ps/step_windows.hpp"
#include "plan/parameter_shards.hpp"
#include "plan/plan_part.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/costs/op_jitter.hpp"
#include "sim/engine/simulator.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

enum class EventKind { kTransferStarts, kTransferDone, kComputeDone, kShardDone };

struct Event {
  EventKind kind = EventKind::kComputeDone;
  int id = 0;
};

struct Copy {
  int worker = 0;
  int shard = 0;
  bool push = false;
  double bytes = 0;
  Route route;
  FlowNetwork::FlowId flow = -1;
  EventHandle done;
};

struct WorkerState {
  std::vector<int> pulled;  ///< per shard, the version pulled
  int steps = 0;            ///< steps whose push was answered
  int outstanding = 0;      ///< pulls in flight, or pushes not yet answered
  int arrived = 0;          ///< pushes delivered of the current step
  bool waiting = false;     ///< for a version to pull
  bool done = false;
  double phase_start = 0;   ///< seconds: when its pull or push began
  int64_t rows = 0;
  std::vector<Span> step_spans;  ///< its part's predicted ops, from 0
  double step_seconds = 0;
};

struct ShardState {
  explicit ShardState(const ParameterServerOptions& options, int workers) : ledger(options, workers) {}
  ShardLedger ledger;
  struct Arrival {
    int worker;
    int pulled;
    int64_t rows;
  };
  std::deque<Arrival> queue;
  bool busy = false;
  int serving = -1;  ///< the worker whose gradient it is dealing with
  bool completes = false;
  double busy_start = 0;
  /// Weights it holds (of each worker's replica), given the bytes of each; tally.bytes counts them.
  int64_t weights(int64_t weight_bytes) const { return tally.bytes / weight_bytes; }
  ShardTally tally;
};

class PsSimulation {
 public:
  PsSimulation(const Simulator& simulator, const Plan& plan, const RunOptions& options,
               const ParameterServerOptions& ps)
      : simulator_(simulator),
        plan_(plan),
        options_(options),
        ps_(ps),
        workers_count_(ps_workers(plan)),
        flows_(link_rates(simulator.topology())) {
    for (int w = 0; w < workers_count_; ++w) {
      WorkerState worker;
      const DevicePart part = device_part(plan, w);
      const Timeline timeline = simulator.simulate(part.plan);
      worker.step_seconds = timeline.makespan_us() * 1e-6;
      for (Span span : timeline.spans) {
        span.device = w;
        if (span.op >= 0) span.op = part.plan_op.at(static_cast<size_t>(span.op));
        worker.step_spans.push_back(span);
      }
      worker.rows = part.plan.value(part.plan.outputs.at(0)).batch.size();
      worker.pulled.assign(static_cast<size_t>(plan.parameter_servers), -1);
      workers_.push_back(std::move(worker));
    }
    for (int k = 0; k < plan.parameter_servers; ++k) shards_.emplace_back(ps, workers_count_);
    const std::vector<int> shard_of = parameter_shards(plan, 0);
    size_t index = 0;
    for (int id : plan.parameters) {
      const Value& value = plan.value(id);
      if (value.device != 0) continue;
      ShardState& shard = shards_.at(static_cast<size_t>(shard_of[index++]));
      shard.tally.bytes += value.bytes;
    }
  }

  RunResult run() {
    for (int w = 0; w < workers_count_; ++w) try_pull(w);
    while (true) {
      // The flow network's changes of this instant settle before the clock moves on.
      if (flows_.unsettled() && (queue_.empty() || queue_.peek().time > now_)) {
        flows_.settle(now_);
        reschedule_flows();
      }
      if (queue_.empty()) break;
      const auto event = queue_.remove_next();
      now_ = event.time;
      switch (event.payload.kind) {
        case EventKind::kTransferStarts: transfer_starts(event.payload.id); break;
        case EventKind::kTransferDone: transfer_done(event.payload.id); break;
        case EventKind::kComputeDone: compute_done(event.payload.id); break;
        case EventKind::kShardDone: shard_done(event.payload.id); break;
      }
    }
    std::vector<ShardTally> tallies;
    for (const ShardState& shard : shards_) tallies.push_back(shard.tally);
    ParameterServerSummary summary = summarize_shards(ps_, workers_count_, tallies, pushed_);
    if (summary.window_ends.empty()) throw RunError("--strategy ps: no update was applied; every gradient was dropped");
    RunResult result;
    result.timelines = cut_into_windows(spans_, summary.window_ends);
    result.info.parameter_server = std::move(summary.info);
    return result;
  }

 private:
  static std::vector<double> link_rates(const Topology& topology) {
    std::vector<double> rates;
    for (const Link& link : topology.links()) rates.push_back(link.bytes_per_second);
    return rates;
  }

  int shard_device(int shard) const { return workers_count_ + shard; }
  double now_us() const { return now_ * 1e6; }

  void try_pull(int w) {
    WorkerState& worker = workers_[static_cast<size_t>(w)];
    if (worker.done) return;
    if (ps_.mode == PsMode::kAsync && worker.steps == ps_.steps) {
      worker.done = true;
      return;
    }
    for (size_t k = 0; k < shards_.size(); ++k) {
      if (shards_[k].ledger.finished()) {
        worker.done = true;
        return;
      }
      if (shards_[k].ledger.worker_waits(worker.pulled[k])) {
        worker.waiting = true;
        return;
      }
    }
    worker.waiting = false;
    worker.phase_start = now_;
    worker.outstanding = static_cast<int>(shards_.size());
    for (size_t k = 0; k < shards_.size(); ++k) {
      worker.pulled[k] = shards_[k].ledger.version();
      launch(w, static_cast<int>(k), false);
    }
  }

  void launch(int worker, int shard, bool push) {
    Copy copy;
    copy.worker = worker;
    copy.shard = shard;
    copy.push = push;
    copy.bytes = static_cast<double>(shards_.at(static_cast<size_t>(shard)).tally.bytes);
    copy.route = push ? simulator_.topology().route(worker, shard_device(shard))
                      : simulator_.topology().route(shard_device(shard), worker);
    const int id = static_cast<int>(copies_.size());
    copies_.push_back(copy);
    queue_.insert(now_ + copy.route.latency_seconds, {EventKind::kTransferStarts, id});
  }

  void transfer_starts(int id) {
    Copy& copy = copies_[static_cast<size_t>(id)];
    if (copy.bytes <= 0 || copy.route.link_count == 0) {
      arrived(id);
      return;
    }
    copy.flow = flows_.join(now_, copy.route.links(), copy.bytes);
    if (flow_owner_.size() <= static_cast<size_t>(copy.flow)) flow_owner_.resize(static_cast<size_t>(copy.flow) + 1, -1);
    flow_owner_[static_cast<size_t>(copy.flow)] = id;
    reschedule_flows();
  }

  void transfer_done(int id) {
    flows_.leave(copies_[static_cast<size_t>(id)].flow);
    reschedule_flows();
    arrived(id);
  }

  void reschedule_flows() {
    for (FlowNetwork::FlowId flow : flows_.rescheduled()) {
      Copy& copy = copies_[static_cast<size_t>(flow_owner_[static_cast<size_t>(flow)])];
      if (copy.done.valid()) queue_.cancel(copy.done);
      copy.done = queue_.insert(std::max(now_, flows_.finish_time(flow)),
                                {EventKind::kTransferDone, flow_owner_[static_cast<size_t>(flow)]});
    }
  }

  void arrived(int id) {
    const Copy copy = copies_[static_cast<size_t>(id)];
    WorkerState& worker = workers_[static_cast<size_t>(copy.worker)];
    if (copy.push) {
      if (++worker.arrived == static_cast<int>(shards_.size())) {
        spans_.push_back(push_span(copy.worker, worker.phase_start * 1e6, now_us(), replica_bytes()));
      }
      ShardState& shard = shards_[static_cast<size_t>(copy.shard)];
      shard.queue.push_back({copy.worker, worker.pulled[static_cast<size_t>(copy.shard)], worker.rows});
      if (!shard.busy) serve_next(copy.shard);
      return;
    }
    if (--worker.outstanding > 0) return;
    spans_.push_back(pull_span(copy.worker, worker.phase_start * 1e6, now_us(), replica_bytes()));
    // Compute: the part's predicted ops, stretched by this step's noise.
    const double factor =
        options_.jitter_sigma > 0 ? OpJitter(options_.jitter_sigma, options_.seed, worker.steps).factor(copy.worker) : 1.0;
    for (const Span& op : worker.step_spans) {
      Span span = op;
      span.start_us = now_us() + op.start_us * factor;
      span.end_us = now_us() + op.end_us * factor;
      spans_.push_back(span);
    }
    queue_.insert(now_ + worker.step_seconds * factor, {EventKind::kComputeDone, copy.worker});
  }

  int64_t replica_bytes() const {
    int64_t bytes = 0;
    for (const ShardState& shard : shards_) bytes += shard.tally.bytes;
    return bytes;
  }

  void compute_done(int w) {
    WorkerState& worker = workers_[static_cast<size_t>(w)];
    ++pushed_;
    worker.phase_start = now_;
    worker.outstanding = static_cast<int>(shards_.size());
    worker.arrived = 0;
    for (size_t k = 0; k < shards_.size(); ++k) launch(w, static_cast<int>(k), true);
  }

  void serve_next(int k) {
    ShardState& shard = shards_[static_cast<size_t>(k)];
    while (!shard.queue.empty()) {
      const ShardState::Arrival arrival = shard.queue.front();
      shard.queue.pop_front();
      const GradientVerdict verdict = shard.ledger.offer(arrival.pulled);
      if (!verdict.accepted) {
        ++shard.tally.dropped;
        answered(arrival.worker);
        continue;
      }
      shard.tally.taken(verdict.staleness, arrival.rows);
      double seconds = accumulate_seconds(shard.weights(storage_.weight));
      if (verdict.completes) seconds += update_seconds(shard.weights(storage_.weight));
      shard.busy = true;
      shard.serving = arrival.worker;
      shard.completes = verdict.completes;
      shard.busy_start = now_;
      queue_.insert(now_ + seconds, {EventKind::kShardDone, k});
      return;
    }
  }

  void shard_done(int k) {
    ShardState& shard = shards_[static_cast<size_t>(k)];
    shard.busy = false;
    if (shard.completes) {
      shard.ledger.applied();
      shard.tally.update_ends_us.push_back(now_us());
      Span span;
      span.device = shard_device(k);
      span.lane = Lane::kCompute;
      span.kind = SpanKind::kCompute;
      span.label = fmt::format("shard {} update {}", k, shard.ledger.version());
      span.start_us = shard.busy_start * 1e6;
      span.end_us = now_us();
      span.flops = plan_.graph->training()->optimizer.update_flops(shard.weights(storage_.weight));
      spans_.push_back(span);
    }
    answered(shard.serving);
    // A new version: the workers waiting for one may pull.
    for (int w = 0; w < workers_count_; ++w) {
      if (workers_[static_cast<size_t>(w)].waiting) try_pull(w);
    }
    if (!shard.busy) serve_next(k);
  }

  /// A shard has dealt with worker `w`'s gradient: once every shard has, its push returns.
  void answered(int w) {
    WorkerState& worker = workers_[static_cast<size_t>(w)];
    if (--worker.outstanding > 0) return;
    ++worker.steps;
    try_pull(w);
  }

  /// Summing a gradient of n weights into the aggregate: reads both, writes one.
  double accumulate_seconds(int64_t n) const {
    PlanOp op;
    op.role = OpRole::kEpilogue;
    op.flops = n;
    op.bytes_read = 2 * n * storage_.gradient;
    op.bytes_written = n * storage_.gradient;
    return simulator_.costs().op_seconds(plan_, op);
  }

  double update_seconds(int64_t n) const {
    const Optimizer& optimizer = plan_.graph->training()->optimizer;
    PlanOp op;
    op.role = OpRole::kUpdate;
    op.flops = optimizer.update_flops(n);
    op.bytes_read = optimizer.update_bytes_read(n, storage_);
    op.bytes_written = optimizer.update_bytes_written(n, storage_);
    return simulator_.costs().op_seconds(plan_, op);
  }

  const Simulator& simulator_;
  const Plan& plan_;
  StorageBytes storage_ = storage_bytes(plan_.precision);  ///< what the shards' weights and gradients are stored in
  RunOptions options_;
  ParameterServerOptions ps_;
  int workers_count_;
  std::vector<WorkerState> workers_;
  std::vector<ShardState> shards_;
  std::vector<Copy> copies_;
  FlowNetwork flows_;
  std::vector<int> flow_owner_;
  EventQueue<Event> queue_;
  double now_ = 0;
  int64_t pushed_ = 0;
  std::vector<Span> spans_;
};

}  // namespace

RunResult simulate_parameter_server(const Simulator& simulator, const Plan& plan, const RunOptions& options,
                                    const ParameterServerOptions& ps) {
  SPLITSCOPE_CHECK(plan.traits.parameter_server && plan.parameter_servers > 0 && plan.graph->is_training(),
                   "simulate_parameter_server() of a plan that is not ps training");
  check_parameter_server_options(ps, ps_workers(plan));
  check_recorded_runs(plan, ps.steps, "--steps", ps_workers(plan));
  PsSimulation simulation(simulator, plan, options, ps);
  return simulation.run();
}

}  // namespace splitscope
