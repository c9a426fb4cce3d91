#include "report/judgement.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/model_error_interval.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"
#include "util/check.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

std::string percent(double share) { return format_share(share); }

std::string plural(const std::string& noun, int64_t count) { return count == 1 ? noun : noun + "s"; }

/// "1.50 GiB in 36 all-gathers", "2.00 MiB in 3 transfers and 2 all-reduces".
std::string movement_phrase(const RunSummary& run) {
  std::string ops;
  for (size_t i = 0; i < run.movement.size(); ++i) {
    const MovementSummary& kind = run.movement[i];
    if (i > 0) ops += i + 1 == run.movement.size() ? " and " : ", ";
    ops += fmt::format("{} {}", kind.count, plural(kind.kind, kind.count));
  }
  if (ops.empty()) return "no data crosses devices";
  return fmt::format("{} in {}", binary_bytes(double(run.transfers.bytes)), ops);
}

std::string transfer_phrase(const RunSummary& run) {
  if (const auto& ps = run.info.parameter_server) {
    // Its pulls and pushes run beside the plan, not as plan ops on a critical path.
    int64_t bytes = 0;
    for (int64_t shard : ps->shard_bytes) bytes += shard;
    return fmt::format("each worker pulls the weights and pushes its gradients ({} each way a step): {} of device "
                       "time moves them without computing",
                       binary_bytes(double(bytes)), percent(run.shares.transfer));
  }
  return fmt::format("transfers are {} of the critical path ({})", percent(run.critical_path.transfer_share()),
                     movement_phrase(run));
}

/// The cause of idle time, most specific first.
std::pair<Decider, std::string> idle_phrase(const RunSummary& run) {
  const double fair = 1.0 / std::max(1, run.devices);
  if (run.devices > 1 && run.busiest_flop_share() >= kImbalanceFactor * fair) {
    return {Decider::kImbalance,
            fmt::format("device {} holds {} of the FLOPs and the others wait for it (devices idle {})",
                        run.busiest_device(), percent(run.busiest_flop_share()), percent(run.shares.idle))};
  }
  if (run.bubble_ideal) {
    return {Decider::kPipelineBubble,
            fmt::format("devices idle {} in the pipeline bubble (ideal {} for {} stages and {} micro-batches)",
                        percent(run.shares.idle), percent(*run.bubble_ideal), run.stages, run.microbatches)};
  }
  if (run.devices > 1 && run.busiest_compute_share() >= kImbalanceFactor * fair) {
    return {Decider::kImbalance,
            fmt::format("device {} does {} of the compute time and the others wait for it (devices idle {})",
                        run.busiest_compute_device(), percent(run.busiest_compute_share()),
                        percent(run.shares.idle))};
  }
  return {Decider::kWaiting,
          fmt::format("devices idle {} of the run waiting on each other's results", percent(run.shares.idle))};
}

/// "the single device" or, for a data-parallel baseline, "the data-parallel replicas".
std::string baseline_phrase(const RunSummary& baseline) {
  return baseline.baseline ? "the single device" : "the " + baseline.strategy + "-parallel replicas";
}

std::string inflation_phrase(const RunSummary& run, const RunSummary& baseline) {
  const double ratio = run.total_compute_ms() / baseline.total_compute_ms();
  const std::string whose = baseline.baseline ? "the single device's" : baseline_phrase(baseline) + "'";
  return fmt::format("the split ops take {:.2f}x {} compute time ({} against {})", ratio, whose,
                     format_ms(run.total_compute_ms()), format_ms(baseline.total_compute_ms()));
}

/// A win where the work did not spread: the split's ops themselves ran
/// faster in total than the single device's (smaller kernels that suit the
/// hardware better, less contention). Saying "the work spreads" would be false.
std::optional<std::string> faster_ops_phrase(const RunSummary& run, const RunSummary& baseline) {
  const double fair = 1.0 / std::max(1, run.devices);
  const bool spread = run.busiest_flop_share() < kImbalanceFactor * fair;
  if (spread || baseline.total_compute_ms() <= 0) return std::nullopt;
  const double ratio = run.total_compute_ms() / baseline.total_compute_ms();
  if (ratio * kWinSpeedup > 1.0) return std::nullopt;
  return fmt::format(
      "its ops compute faster than on {} ({:.2f}x the compute time: {} against {}), though device "
      "{} holds {} of the FLOPs",
      baseline_phrase(baseline), ratio, format_ms(run.total_compute_ms()), format_ms(baseline.total_compute_ms()), run.busiest_device(),
      percent(run.busiest_flop_share()));
}

Losses losses_of(const RunSummary& run, const RunSummary& baseline) {
  Losses losses;
  const double device_time_ms = run.makespan->representative_ms * run.devices;
  if (device_time_ms > 0) {
    losses.compute_inflation = (run.total_compute_ms() - baseline.total_compute_ms()) / device_time_ms;
  }
  losses.exposed_transfer = run.shares.transfer;
  losses.idle = run.shares.idle;
  return losses;
}

/// Rule 5: the largest loss, in words.
std::pair<Decider, std::string> largest_loss(const RunSummary& run, const RunSummary& baseline,
                                             const Losses& losses) {
  const bool can_inflate = baseline.total_compute_ms() > 0;
  if (can_inflate && losses.compute_inflation > losses.exposed_transfer && losses.compute_inflation > losses.idle) {
    return {Decider::kComputeInflation, inflation_phrase(run, baseline)};
  }
  if (losses.exposed_transfer > losses.idle) return {Decider::kTransfers, transfer_phrase(run)};
  return idle_phrase(run);
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kWins: return "wins";
    case Verdict::kLoses: return "loses";
    case Verdict::kEven: return "even";
    case Verdict::kUncertain: return "uncertain";
  }
  return "?";
}

std::string_view to_string(Decider decider) {
  switch (decider) {
    case Decider::kDoesNotFit: return "does-not-fit";
    case Decider::kNoBaseline: return "no-baseline";
    case Decider::kBaselineDoesNotFit: return "baseline-does-not-fit";
    case Decider::kIsBaseline: return "is-baseline";
    case Decider::kTransfers: return "transfers";
    case Decider::kImbalance: return "imbalance";
    case Decider::kPipelineBubble: return "pipeline-bubble";
    case Decider::kWaiting: return "waiting";
    case Decider::kComputeInflation: return "compute-inflation";
    case Decider::kSpread: return "spread";
    case Decider::kFasterOps: return "faster-ops";
    case Decider::kUncertain: return "uncertain-interval";
    case Decider::kModelError: return "uncertain-model-error";
  }
  return "?";
}

namespace {

/// The threshold an interval straddles, as the reasons name it.
std::string threshold_name(const SpeedupInterval& interval) {
  return interval.low < kWinSpeedup && interval.high >= kWinSpeedup ? fmt::format("{:.2f}x win", kWinSpeedup)
                                                                     : fmt::format("{:.2f}x lose", kLoseSpeedup);
}

}  // namespace

bool straddles_a_threshold(const SpeedupInterval& interval) {
  return (interval.low < kWinSpeedup && interval.high >= kWinSpeedup) ||
         (interval.low <= kLoseSpeedup && interval.high > kLoseSpeedup);
}

Verdict verdict_for(double speedup) {
  if (speedup >= kWinSpeedup) return Verdict::kWins;
  if (speedup <= kLoseSpeedup) return Verdict::kLoses;
  return Verdict::kEven;
}

namespace {

/// Rule 5's sentence for a timed run and its verdict.
void explain(Judgement& judgement, const RunSummary& run, const RunSummary& baseline, Verdict verdict) {
  const Losses& losses = *judgement.losses;
  if (verdict == Verdict::kWins) {
    if (auto faster = faster_ops_phrase(run, baseline)) {
      judgement.decider = Decider::kFasterOps;
      judgement.reason = *faster;
      return;
    }
    judgement.decider = Decider::kSpread;
    const double transfer_share = run.critical_path.transfer_share();
    judgement.reason = fmt::format(
        "the work spreads over {} (the busiest holds {} of the FLOPs){} {} of the critical path",
        counted(run.devices, "device"), percent(run.busiest_flop_share()),
        transfer_share < kMinorShare ? " and transfers are only" : "; transfers still take", percent(transfer_share));
    return;
  }
  auto [decider, phrase] = largest_loss(run, baseline, losses);
  judgement.decider = decider;
  judgement.reason =
      verdict == Verdict::kEven
          ? fmt::format("spreading the work over {} only breaks even: {}", counted(run.devices, "device"), phrase)
          : phrase;
}

/// An interval across a threshold: the verdict is `uncertain`, decided by
/// `decider`, and the reason says why before the sentence rule 5 gave.
void mark_uncertain(Judgement& judgement, Decider decider, const std::string& why) {
  judgement.verdict = Verdict::kUncertain;
  judgement.decider = decider;
  judgement.reason = why + "; " + judgement.reason;
}

}  // namespace

Judgement judge(const RunSummary& run, const RunSummary* baseline) {
  Judgement judgement;
  if (!run.fits()) {
    judgement.verdict = Verdict::kLoses;
    judgement.decider = Decider::kDoesNotFit;
    judgement.reason = "does not fit: " + run.memory.problem;
    if (baseline != nullptr && baseline->timed()) judgement.baseline_makespan_ms = baseline->makespan->median_ms;
    return judgement;
  }
  if (baseline == nullptr) {
    judgement.decider = Decider::kNoBaseline;
    judgement.reason = "no single-device baseline to compare with";
    return judgement;
  }
  if (!baseline->fits()) {
    judgement.verdict = Verdict::kWins;
    judgement.decider = Decider::kBaselineDoesNotFit;
    judgement.reason = fmt::format("the model does not fit on one device ({}); split over {} devices it does",
                                   baseline->memory.problem, run.devices);
    return judgement;
  }
  SPLITSCOPE_CHECK(run.timed() && baseline->timed(), "runs that fit are timed");
  judgement.baseline_strategy = baseline->strategy;
  judgement.baseline_makespan_ms = baseline->makespan->median_ms;
  const double speedup = baseline->makespan->median_ms / run.makespan->median_ms;
  judgement.speedup = speedup;
  if (run.baseline) {
    judgement.verdict = Verdict::kEven;
    judgement.decider = Decider::kIsBaseline;
    judgement.reason = "the single-device baseline";
    return judgement;
  }
  const Verdict verdict = verdict_for(speedup);
  judgement.verdict = verdict;
  const Losses losses = losses_of(run, *baseline);
  judgement.losses = losses;
  explain(judgement, run, *baseline, verdict);
  judgement.speedup_interval = speedup_interval(baseline->makespan->repeat_ms, run.makespan->repeat_ms);
  if (const auto& interval = judgement.speedup_interval; interval && straddles_a_threshold(*interval)) {
    mark_uncertain(judgement, Decider::kUncertain,
                   fmt::format("the speedup's 95% interval, {:.2f}x to {:.2f}x over {} and {} repeats, straddles the "
                               "{} threshold, so this machine's noise could turn the verdict (more --repeat or a "
                               "quieter machine would settle it)",
                               interval->low, interval->high, baseline->makespan->repeats, run.makespan->repeats,
                               threshold_name(*interval)));
    return judgement;
  }
  judgement.model_error_interval = model_error_interval(run, *baseline);
  if (const auto& interval = judgement.model_error_interval; interval && straddles_a_threshold(*interval)) {
    mark_uncertain(judgement, Decider::kModelError,
                   fmt::format("within the model's error (its ops typically {:.0f}% off, alike in both runs) the "
                               "speedup could be {:.2f}x to {:.2f}x, across the {} threshold",
                               *shared_model_error(run, *baseline) * 100, interval->low, interval->high,
                               threshold_name(*interval)));
  }
  return judgement;
}

}  // namespace splitscope
