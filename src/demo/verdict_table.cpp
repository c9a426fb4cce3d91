#include "demo/verdict_table.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <tuple>

#include "report/text_table.hpp"
#include "report/units.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

std::string title_of(DemoWay way, int devices, int microbatches) {
  switch (way) {
    case DemoWay::kFused: return "single device, fused stack";
    case DemoWay::kCells: return "single device, cell by cell";
    case DemoWay::kSplit: return fmt::format("layer split over {} device{}", devices, devices == 1 ? "" : "s");
    case DemoWay::kSplitMicrobatched: return fmt::format("layer split, {} micro-batches", microbatches);
  }
  return "?";
}

/// The cells run one by one against the fused stack. `ops`: the run's
/// compute ops (one a cell, or in training several: the forward cell, its
/// step gradient and the gradient products).
std::string cells_reason(double speedup, const RnnDemoShape& shape, int64_t ops, bool training) {
  const int64_t cells = shape.layers * shape.steps;
  const std::string what = training ? fmt::format("{} ops for {} cells, forward and backward", ops, cells)
                                    : fmt::format("{} ops", cells);
  switch (verdict_for(speedup)) {
    case Verdict::kLoses:
      return fmt::format(
          "one op per cell{} ({}) takes {:.2f}x the fused stack's time: each step's {} on {} rows instead of one "
          "product over {}, and every op is dispatched on its own",
          training ? " and gradient" : "", what, 1.0 / speedup,
          training ? "input product and weight-gradient products run" : "input product runs", shape.batch,
          shape.batch * shape.steps);
    case Verdict::kEven:
    case Verdict::kUncertain:  // verdict_for() never says it; no interval here
      return fmt::format("one op per cell ({}) runs as fast as the fused stack here", what);
    case Verdict::kWins:
      return fmt::format("one op per cell ({}) beats the fused stack ({:.2f}x as fast)", what, speedup);
  }
  return "";
}

/// Idle beyond the ideal fill and drain by more than this share of device
/// time is waiting of another kind (devices sharing cores, slow hand-offs).
constexpr double kIdleBeyondIdeal = 0.10;

/// Why devices of a layer split idle: the wavefront's fill and drain, or,
/// when the idle share is far beyond that ideal, waiting on each other.
std::string idle_phrase(const RunSummary& run, const RnnDemoShape& shape) {
  // A training step's forward and backward waves have no such closed form here.
  const auto ideal = run.training ? std::nullopt : ideal_wavefront_idle(shape, run.devices, run.microbatches);
  const std::string ideal_text =
      ideal ? fmt::format("{} for {} layers over {} steps{}", format_share(*ideal), run.devices, shape.steps,
                          run.microbatches > 1 ? fmt::format(" x {} micro-batches", run.microbatches) : "")
            : std::string();
  std::string phrase;
  if (ideal && run.shares.idle <= *ideal + kIdleBeyondIdeal) {
    phrase = fmt::format("devices idle {} of the run while the wavefront fills and drains (ideal {})",
                         format_share(run.shares.idle), ideal_text);
  } else if (ideal) {
    phrase = fmt::format("devices idle {} of the run waiting on each other's cells, far beyond the wavefront's "
                         "ideal fill and drain ({})",
                         format_share(run.shares.idle), ideal_text);
  } else {
    phrase = fmt::format("devices idle {} of the run waiting on each other's cells as the wavefront fills and drains",
                         format_share(run.shares.idle));
  }
  // A slow fill is often a slow link: each layer waits for its input's transfer.
  if (run.critical_path.transfer_share() >= kMinorShare) {
    phrase += fmt::format("; transfers are {} of the critical path", format_share(run.critical_path.transfer_share()));
  }
  return phrase;
}

/// What each device of a run had of a pooled machine, from RunInfo's facts:
/// the cpu backend's intra-op threads ("intra-op threads": "1"), or a pooled
/// simulated machine's shares ("pooled": "1 of 2 shares per device").
/// {0, ""} when the devices are whole machines (GPUs) or it is unknown.
std::pair<int, std::string> pool_share(const RunInfo& info) {
  for (const auto& [fact, value] : info.facts) {
    if (fact == "intra-op threads") return {std::atoi(value.c_str()), "thread"};
    if (fact == "pooled") return {std::atoi(value.c_str()), "share"};
  }
  return {0, ""};
}

/// Compute time against the fused run's, in thread time (device time x
/// threads) where the threads are known: on the cpu a split device gets a
/// share of the cores and the single device all of them, so device time
/// alone overstates how much slower the cells ran.
struct Inflation {
  double device_ratio = 0;
  std::optional<double> thread_ratio;
  int threads = 0;    ///< per split device
  std::string unit;   ///< "thread" (cpu) or "share" (a pooled simulated machine)
};

Inflation inflation_of(const RunSummary& run, const RunSummary& baseline, int baseline_threads) {
  Inflation inflation;
  inflation.device_ratio = run.total_compute_ms() / baseline.total_compute_ms();
  std::tie(inflation.threads, inflation.unit) = pool_share(run.info);
  if (inflation.threads > 0 && baseline_threads > 0) {
    inflation.thread_ratio = inflation.device_ratio * inflation.threads / static_cast<double>(baseline_threads);
  }
  return inflation;
}

std::string inflation_phrase(const RunSummary& run, const DemoBaseline& baseline, const Inflation& inflation) {
  const RunSummary& base = baseline.summary;
  std::string text = fmt::format("the cells compute for {:.2f}x {}'s time in all ({} over {} devices",
                                 inflation.device_ratio, baseline.name, format_ms(run.total_compute_ms()), run.devices);
  if (inflation.thread_ratio) {
    const std::string& unit = inflation.unit;
    text += fmt::format(" of {} {}{} each against {} on {} {}{}, so {:.2f}x its {} time)", inflation.threads, unit,
                        inflation.threads == 1 ? "" : "s", format_ms(base.total_compute_ms()), baseline.threads, unit,
                        baseline.threads == 1 ? "" : "s", *inflation.thread_ratio, unit);
  } else {
    text += fmt::format(" against {})", format_ms(base.total_compute_ms()));
  }
  // Against the fused stack the cells' cost is the op per cell; against the
  // same cells on one device it is what the devices share.
  return text + (baseline.fused ? ": one op per cell, each step's input product on its own"
                                : ": the split devices share the machine the single device had to itself");
}

/// The reason of a split row that does not win: judge()'s deciding factor,
/// in words that fit a layer-split RNN where the generic ones would mislead.
std::string split_reason(const Judgement& judgement, const RunSummary& run, const DemoBaseline& baseline,
                         const RnnDemoShape& shape) {
  std::string phrase;
  switch (judgement.decider) {
    case Decider::kComputeInflation: {
      const Inflation inflation = inflation_of(run, baseline.summary, baseline.threads);
      if (!inflation.thread_ratio || *inflation.thread_ratio >= kWinSpeedup || !judgement.losses) {
        phrase = inflation_phrase(run, baseline, inflation);
        break;
      }
      // Thread for thread the cells are no slower: the smaller shares of the
      // cores explain the device time, and the other losses decide.
      phrase = judgement.losses->exposed_transfer > judgement.losses->idle
                   ? fmt::format("devices only move data {} of the run; transfers are {} of the critical path",
                                 format_share(run.shares.transfer), format_share(run.critical_path.transfer_share()))
                   : idle_phrase(run, shape);
      phrase += fmt::format(" ({0} for {0} the cells compute as fast as {1}: {2:.2f}x its {0} time)", inflation.unit,
                            baseline.name, *inflation.thread_ratio);
      break;
    }
    case Decider::kWaiting:
    case Decider::kPipelineBubble: phrase = idle_phrase(run, shape); break;
    default: return judgement.reason;  // already says "only breaks even" where it does
  }
  return judgement.verdict == Verdict::kEven
             ? fmt::format("spreading the work over {} only breaks even: {}", counted(run.devices, "device"), phrase)
             : phrase;
}

std::string makespan_cell(const std::optional<MakespanStats>& makespan) {
  if (!makespan) return "does not fit";
  if (makespan->repeats < 2) return format_ms(makespan->median_ms);
  return fmt::format("{} +-{:.0f}%", format_ms(makespan->median_ms), makespan->spread() * 100.0);
}

}  // namespace

std::string_view to_string(DemoWay way) {
  switch (way) {
    case DemoWay::kFused: return "single-fused";
    case DemoWay::kCells: return "single-cells";
    case DemoWay::kSplit: return "layer-split";
    case DemoWay::kSplitMicrobatched: return "layer-split-microbatched";
  }
  return "?";
}

RunSummary fused_summary(const FusedTiming& fused, const Graph& graph) {
  RunSummary summary;
  summary.model = graph.name();
  summary.params = graph.total_params();
  summary.flops = graph.total_flops();
  summary.batch = graph.batch();
  summary.strategy = "fused";
  summary.devices = 1;
  summary.makespan = makespan_stats(fused.timelines);
  DeviceSummary device;
  device.compute_ms = summary.makespan->representative_ms;
  device.flops = summary.flops;
  summary.per_device = {device};
  summary.shares.compute = 1;
  return summary;
}

DemoBaseline fused_baseline(const FusedTiming& fused, const Graph& graph) {
  return DemoBaseline{fused_summary(fused, graph), fused.threads, "the fused stack", true};
}

DemoBaseline single_baseline(const RunReport& cells) {
  return DemoBaseline{cells.summary, pool_share(cells.summary.info).first, "the single device", false};
}

DemoRow fused_row(const FusedTiming& fused) {
  DemoRow row;
  row.way = DemoWay::kFused;
  row.title = title_of(DemoWay::kFused, 1, 1);
  row.strategy = "fused";
  row.makespan = makespan_stats(fused.timelines);
  row.compute_ms = row.makespan->representative_ms;
  row.decider = "baseline";
  row.reason = fmt::format("the baseline: {}", fused.implementation);
  return row;
}

DemoRow single_baseline_row(const RunReport& cells) {
  const RunSummary& s = cells.summary;
  DemoRow row;
  row.way = DemoWay::kCells;
  row.title = title_of(DemoWay::kCells, 1, 1);
  row.strategy = s.strategy;
  if (s.timed()) {
    row.makespan = *s.makespan;
    row.compute_ms = s.total_compute_ms();
  }
  row.decider = "baseline";
  row.reason = "the baseline: every cell's forward and backward one op each, on one device";
  return row;
}

DemoRow plan_row(DemoWay way, const RunReport& run, const FusedTiming& fused, const RnnDemoShape& shape) {
  return plan_row(way, run, fused_baseline(fused, *run.plan->graph), shape);
}

DemoRow plan_row(DemoWay way, const RunReport& run, const DemoBaseline& baseline, const RnnDemoShape& shape) {
  const RunSummary& s = run.summary;
  DemoRow row;
  row.way = way;
  row.strategy = s.strategy;
  row.devices = s.devices;
  row.microbatches = s.microbatches;
  row.title = title_of(way, s.devices, s.microbatches);
  row.moved_bytes = s.transfers.bytes;
  if (s.timed()) {
    row.makespan = *s.makespan;
    row.compute_ms = s.total_compute_ms();
    row.transfer_ms = s.transfers.time_ms;
    row.idle_share = s.shares.idle;
    row.speedup = baseline.summary.makespan->median_ms / s.makespan->median_ms;
  }
  if (way == DemoWay::kCells && baseline.fused && s.timed()) {
    row.verdict = verdict_for(row.speedup);
    row.decider = "per-op";
    int64_t ops = 0;
    for (const PlanOp& op : run.plan->ops) ops += op.role == OpRole::kCompute ? 1 : 0;
    row.reason = cells_reason(row.speedup, shape, ops, s.training.has_value());
    return row;
  }
  const Judgement judgement = judge(s, &baseline.summary);
  row.verdict = judgement.verdict;
  row.decider = std::string(to_string(judgement.decider));
  if (!s.timed() || !judgement.verdict) {
    row.speedup = 0;
    row.reason = judgement.reason;
    return row;
  }
  if (*judgement.verdict == Verdict::kWins) {
    row.reason = judgement.reason;
    return row;
  }
  row.reason = split_reason(judgement, s, baseline, shape);
  return row;
}

std::optional<double> ideal_wavefront_idle(const RnnDemoShape& shape, int devices, int microbatches) {
  if (devices != shape.layers) return std::nullopt;
  const double n = devices;
  return (n - 1) / (static_cast<double>(microbatches * shape.steps) + n - 1);
}

bool against_fused(const std::vector<DemoRow>& rows) {
  return rows.empty() || rows.front().way == DemoWay::kFused;
}

std::string verdict_table_text(const std::vector<DemoRow>& rows) {
  using Align = TextTable::Align;
  TextTable table({"way", "devices", "makespan", against_fused(rows) ? "vs fused" : "vs single", "compute", "transfer",
                   "moved", "idle", "verdict", "reason"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kLeft, Align::kLeft});
  for (const DemoRow& row : rows) {
    const bool timed = row.makespan.has_value();
    const bool baseline = row.decider == "baseline";
    table.add_row({row.title, std::to_string(row.devices), makespan_cell(row.makespan),
                   timed ? format_speedup(row.speedup) : "-", timed ? format_ms(row.compute_ms) : "-",
                   baseline || !timed || row.moved_bytes == 0 ? "-" : format_ms(row.transfer_ms),
                   baseline ? "-" : binary_bytes(double(row.moved_bytes)),
                   baseline || !timed ? "-" : format_share(row.idle_share),
                   row.verdict ? std::string(to_string(*row.verdict)) : "baseline", row.reason});
  }
  return table.render();
}

std::string demo_conclusion(const std::vector<DemoRow>& rows) {
  const bool fused = against_fused(rows);
  const std::string against = fused ? "the fused single device" : "the single device";
  const DemoRow* best = nullptr;
  const DemoRow* cells = nullptr;
  for (const DemoRow& row : rows) {
    if (row.way == DemoWay::kCells && fused) cells = &row;
    if (row.way != DemoWay::kSplit && row.way != DemoWay::kSplitMicrobatched) continue;
    if (!row.verdict || !row.makespan) continue;
    if (best == nullptr || row.speedup > best->speedup) best = &row;
  }
  if (best == nullptr) return "no split ran, so there is nothing to hold against " + against;
  std::string text;
  switch (*best->verdict) {
    case Verdict::kWins:
      text = fmt::format("the layer split wins: the {} runs {:.2f}x as fast as {}; {}", best->title, best->speedup,
                         against, best->reason);
      break;
    case Verdict::kEven:
      text = fmt::format("a draw: the best split (the {}) runs at {:.2f}x {}; {}", best->title, best->speedup, against,
                         best->reason);
      break;
    case Verdict::kLoses:
      text = fmt::format("{} wins: the best split (the {}) runs at only {:.2f}x its speed; {}", against, best->title,
                         best->speedup, best->reason);
      break;
    case Verdict::kUncertain:
      text = fmt::format("too close to call on this machine: the best split (the {}) runs at {:.2f}x {}; {}",
                         best->title, best->speedup, against, best->reason);
      break;
  }
  if (cells != nullptr && cells->makespan) {
    text += fmt::format(" (the same cells one by one on one device: {:.2f}x)", cells->speedup);
  }
  return text;
}

}  // namespace splitscope
