#include "demo/rnn_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/judgement.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"
#include "run/run_driver.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

std::optional<double> median_ms(const RunReport& run) {
  if (!run.summary.timed()) return std::nullopt;
  return run.summary.makespan->median_ms;
}

std::string optional_ms(const std::optional<double>& ms) { return ms ? format_ms(*ms) : "-"; }
std::string optional_speedup(const std::optional<double>& speedup) {
  return speedup ? format_speedup(*speedup) : "-";
}

}  // namespace

std::optional<double> SweepPoint::best_speedup() const {
  if (split_speedup && microbatched_speedup) return std::max(*split_speedup, *microbatched_speedup);
  return split_speedup ? split_speedup : microbatched_speedup;
}

std::optional<size_t> first_win(const std::vector<SweepPoint>& points) {
  for (size_t i = 0; i < points.size(); ++i) {
    const auto best = points[i].best_speedup();
    if (best && verdict_for(*best) == Verdict::kWins) return i;
  }
  return std::nullopt;
}

std::string crossover_text(const SweepResult& result) {
  const std::string& name = result.sweep.name;
  const auto first = first_win(result.points);
  if (!first) {
    const SweepPoint* closest = nullptr;
    for (const SweepPoint& point : result.points) {
      if (point.best_speedup() && (closest == nullptr || *point.best_speedup() > *closest->best_speedup())) {
        closest = &point;
      }
    }
    if (closest == nullptr) return fmt::format("crossover: none (no split could run at any {} tried)", name);
    return fmt::format("crossover: none: the fused single device is never beaten over the {} tried; the closest "
                       "a split came is {} at {}={}",
                       name, format_speedup(*closest->best_speedup()), name, closest->value);
  }
  const SweepPoint& point = result.points[*first];
  const bool microbatched = point.microbatched_speedup && (!point.split_speedup ||
                                                           *point.microbatched_speedup > *point.split_speedup);
  // Joined by hand: fmt::join trips GCC 12's false -Wstringop-overflow at -O3.
  std::string wins;
  for (const SweepPoint& p : result.points) {
    if (p.best_speedup() && verdict_for(*p.best_speedup()) == Verdict::kWins) {
      wins += fmt::format("{}{} ({})", wins.empty() ? "" : ", ", p.value, format_speedup(*p.best_speedup()));
    }
  }
  return fmt::format("crossover: a split first beats the fused single device at {}={}, {} as fast ({}); it wins at "
                     "{}={}",
                     name, point.value, format_speedup(*point.best_speedup()),
                     microbatched ? fmt::format("the layer split with {} micro-batches", point.microbatches)
                                  : std::string("the layer split"),
                     name, wins);
}

namespace {

/// `error` at one point, said as such: the user gave --sweep, not the shape
/// options the point sets (an option they did give, like --devices, is named).
[[noreturn]] void fail_at_point(const RnnSweep& sweep, int64_t value, const InputError& error) {
  const bool shape_option = error.source().find("--layers") != std::string::npos;
  throw InputError("--sweep", "",
                   fmt::format("{}={}: {}{}{}", sweep.name, value, shape_option ? "" : error.source() + ": ",
                               error.field().empty() ? "" : error.field() + ": ", error.problem()));
}

}  // namespace

RnnDemoSettings resolve_sweep_point(const RnnDemoSettings& base, const RnnSweep& sweep, int64_t value) {
  RnnDemoSettings point = base;
  point.shape = with_swept(base.shape, sweep.name, value);
  if (sweep.name == "layers" && point.devices > value) point.devices = static_cast<int>(value);
  if (sweep.name == "batch" && point.microbatches > value) point.microbatches = static_cast<int>(value);
  try {
    return resolve_settings(point);
  } catch (const InputError& error) {
    fail_at_point(sweep, value, error);
  }
}

SweepResult run_rnn_sweep(const RnnDemoSettings& base, const RnnSweep& sweep, const DemoBackend& backend,
                          const RunOptions& options, Progress& progress) {
  SweepResult result;
  result.sweep = sweep;
  result.base = base;
  // Resolve every point before running any, so that a bad value fails at once.
  std::vector<RnnDemoSettings> settings;
  for (int64_t value : sweep.values) settings.push_back(resolve_sweep_point(base, sweep, value));
  // And admit every point's plans (the cpu backend's memory check) before any
  // runs: the largest point is the one most likely not to fit.
  if (backend.admit) {
    for (size_t i = 0; i < settings.size(); ++i) {
      const RnnDemoSettings& s = settings[i];
      try {
        const auto graph = demo_graph(s.shape);
        backend.admit(*split_plan(graph, 1, 1, backend.cost));
        backend.admit(*split_plan(graph, s.devices, s.microbatches, backend.cost));
      } catch (const InputError& error) {
        fail_at_point(sweep, sweep.values[i], error);
      }
    }
  }
  RunOptions run = options;
  run.want_output = false;
  run.on_repeat = progress.repeat_callback();
  RunRequest forward;
  forward.options = run;
  for (size_t i = 0; i < settings.size(); ++i) {
    try {
      const RnnDemoSettings& s = settings[i];
      const auto graph = demo_graph(s.shape);
      const int split_kinds = s.microbatches > 1 ? 2 : 1;
      std::vector<std::shared_ptr<const Plan>> plans(static_cast<size_t>(split_kinds));
      for (int k = 0; k < split_kinds; ++k) {
        plans[static_cast<size_t>(k)] = split_plan(graph, s.devices, k == 0 ? 1 : s.microbatches, backend.cost);
      }
      auto executor = backend.executor(s.devices);
      auto fused_runner = backend.fused(s.devices);
      const std::string where = fmt::format("{}={}", sweep.name, sweep.values[i]);

      progress.begin_run(fmt::format("{}: fused stack on one device", where));
      const FusedTiming fused = fused_runner->run(graph, run);
      progress.end_run();
      if (i == 0) {
        result.fused_implementation = fused.implementation;
        result.fused_method = fused.method;
        result.measured = fused.measured;
      }

      SweepPoint point;
      point.value = sweep.values[i];
      point.devices = s.devices;
      point.microbatches = s.microbatches;
      point.fused_ms = makespan_stats(fused.timelines).median_ms;
      for (size_t k = 0; k < plans.size(); ++k) {
        const auto& plan = plans[k];
        progress.begin_run(fmt::format("{}: {} over {} devices", where, plan->strategy, s.devices));
        const RunResult ran = run_plan(*executor, *plan, forward);
        progress.end_run();
        const RunReport report = make_run_report(plan, ran, nullptr);
        const std::optional<double> ms = median_ms(report);
        const std::optional<double> speedup =
            ms ? std::optional<double>(point.fused_ms / *ms) : std::nullopt;
        if (i == 0 && k == 0) result.info = ran.info;
        if (k == 0) {
          point.split_ms = ms;
          point.split_speedup = speedup;
          point.split_reason = plan_row(DemoWay::kSplit, report, fused, s.shape).reason;
        } else {
          point.microbatched_ms = ms;
          point.microbatched_speedup = speedup;
        }
      }
      result.points.push_back(std::move(point));
    } catch (const InputError& error) {
      fail_at_point(sweep, sweep.values[i], error);  // e.g. more devices than the simulated machine has
    }
  }
  if (const auto first = first_win(result.points)) result.crossover = result.points[*first].value;
  return result;
}

std::string sweep_table_text(const SweepResult& result) {
  using Align = TextTable::Align;
  TextTable table({result.sweep.name, "devices", "fused 1 device", "layer split", "vs fused", "micro-batched",
                   "vs fused", "verdict", "why (layer split)"},
                  {Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kLeft, Align::kLeft});
  for (const SweepPoint& point : result.points) {
    const auto best = point.best_speedup();
    table.add_row({std::to_string(point.value), std::to_string(point.devices), format_ms(point.fused_ms),
                   optional_ms(point.split_ms), optional_speedup(point.split_speedup),
                   point.microbatches > 1 ? fmt::format("{} (M={})", optional_ms(point.microbatched_ms),
                                                        point.microbatches)
                                          : "-",
                   optional_speedup(point.microbatched_speedup),
                   best ? std::string(to_string(verdict_for(*best))) : "-", point.split_reason});
  }
  return table.render() + crossover_text(result) + "\n";
}

}  // namespace splitscope
