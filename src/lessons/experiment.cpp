#include "lessons/experiment.hpp"

#include <cmath>
#include <map>

#include "ir/lower.hpp"
#include "ir/model_limits.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {

std::shared_ptr<const Graph> lesson_graph(const std::string& network, bool train, int64_t batch) {
  Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, network));
  if (batch > 0) {
    model.batch = batch;
    check_model_limits(model, "batch");
  }
  auto forward = std::make_shared<const Graph>(lower(model));
  if (!train) return forward;
  return std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
}

Trial simulate_trial(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
                     const Machine& machine, int microbatches) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  auto plan = std::make_shared<const Plan>(make_plan(*make_partitioner(strategy), graph, options));
  check(*plan);
  Simulator simulator(machine);
  RunOptions run;
  run.warmup = 0;
  run.repeats = 1;
  const RunResult result = simulator.run(*plan, run);
  Trial trial;
  trial.strategy = strategy;
  trial.devices = devices;
  trial.microbatches = microbatches;
  trial.summary = summarize(*plan, result);
  trial.makespan_us = result.timelines.at(0).makespan_us();
  trial.plan = plan;
  trial.timeline = result.timelines.at(0);
  return trial;
}

LessonTimeline Trial::figure(std::string title) const {
  return LessonTimeline{std::move(title), plan, timeline, summary};
}

Machine with_link_bandwidth(Machine machine, double gbps) {
  machine.topology.link.bandwidth_gbps = gbps;
  machine.topology.bus.bandwidth_gbps = gbps;
  machine.topology.nic.bandwidth_gbps = gbps;
  return machine;
}

double speedup_at_bandwidth(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
                            const Machine& machine, double gbps) {
  const Machine links = with_link_bandwidth(machine, gbps);
  return simulate_trial(graph, "single", 1, links).makespan_us /
         simulate_trial(graph, strategy, devices, links).makespan_us;
}

std::optional<double> find_flip(double low, double high, const std::function<bool(double)>& holds, bool integer,
                                double relative) {
  if (holds(low) || !holds(high)) return std::nullopt;
  // Invariant: false at low, true at high.
  while (true) {
    if (integer) {
      if (high - low <= 1) return high;
    } else if (high / low <= 1 + relative) {
      return high;
    }
    double middle = integer ? std::floor((low + high) / 2) : std::sqrt(low * high);
    if (holds(middle)) {
      high = middle;
    } else {
      low = middle;
    }
  }
}

FlipPoint find_flip_point(const FlipSearch& search, const std::function<double(double)>& quantity) {
  std::map<double, double> tried;
  const auto quantity_at = [&](double x) {
    const auto known = tried.find(x);
    if (known != tried.end()) return known->second;
    return tried[x] = quantity(x);
  };
  const auto holds = [&](double x) {
    const double y = quantity_at(x);
    return search.reaches ? y >= search.threshold : y < search.threshold;  // NaN: neither
  };
  for (int i = 0; i < search.samples; ++i) {
    const double fraction = search.samples > 1 ? double(i) / (search.samples - 1) : 0.0;
    double x = search.low * std::pow(search.high / search.low, fraction);
    if (search.integer) x = std::round(x);
    quantity_at(x);
  }
  FlipPoint flip;
  flip.parameter = search.parameter;
  flip.unit = search.unit;
  flip.low = search.low;
  flip.high = search.high;
  flip.value = find_flip(search.low, search.high, holds, search.integer, search.relative);
  flip.meaning = search.meaning;
  flip.quantity = search.quantity;
  flip.threshold = search.threshold;
  flip.log_scale = true;
  flip.curve.assign(tried.begin(), tried.end());
  return flip;
}

}  // namespace splitscope
