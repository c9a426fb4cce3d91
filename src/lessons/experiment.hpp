#pragma once
/// \file
/// What the lessons' experiments share: a network planned by a named
/// strategy and simulated on a machine, its summary, and a bisection that
/// finds where a verdict flips.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ir/graph.hpp"
#include "lessons/lesson.hpp"
#include "plan/plan.hpp"
#include "report/run_summary.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

/// A strategy's plan of a network, simulated.
struct Trial {
  std::string strategy;
  int devices = 1;
  int microbatches = 1;
  double makespan_us = 0;
  RunSummary summary;
  std::shared_ptr<const Plan> plan;
  Timeline timeline;

  /// The run as the page draws it, under `title`.
  LessonTimeline figure(std::string title) const;
};

/// A zoo network (or network file), forward only or as a training step, at
/// `batch` (0: the file's own).
std::shared_ptr<const Graph> lesson_graph(const std::string& network, bool train, int64_t batch = 0);

/// Plans `graph` with `strategy` over `devices` and simulates it on `machine`.
Trial simulate_trial(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
                     const Machine& machine, int microbatches = 1);

/// `machine` with every link (switch port, NIC, bus) at `gbps`.
Machine with_link_bandwidth(Machine machine, double gbps);

/// The speedup of `strategy` over `single` on `machine` with every link at `gbps`.
double speedup_at_bandwidth(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
                            const Machine& machine, double gbps);

/// The smallest x in [low, high] where `holds(x)` is true, given it is false at
/// `low`; bisects on a log scale to `relative` precision (or over integers
/// when `integer`). nullopt when it is false at `high` too, or true at `low`.
std::optional<double> find_flip(double low, double high, const std::function<bool(double)>& holds,
                                bool integer = false, double relative = 0.01);

/// Where a verdict flips: a quantity of the experiment, compared with a
/// threshold, over a range of one parameter.
struct FlipSearch {
  std::string parameter;
  std::string unit;
  double low = 1;
  double high = 1;
  bool integer = false;    ///< whole numbers only (counts)
  double relative = 0.01;  ///< the bisection's precision on a rate
  std::string quantity;    ///< the curve's y: "speedup over single"
  double threshold = 1;
  /// The side of the threshold past the flip: true, the quantity reaches it
  /// (>=); false, it falls below it.
  bool reaches = true;
  std::string meaning;
  int samples = 9;  ///< spread evenly (on a log scale) over the range, for the curve
};

/// The flip of `search`: the quantity sampled over the range, then
/// find_flip() on `quantity(x)` against the threshold; every value tried
/// goes into the curve (each x is evaluated once).
FlipPoint find_flip_point(const FlipSearch& search, const std::function<double(double)>& quantity);

}  // namespace splitscope
