// Claim 7: with asynchronous updates each gradient is on average about N-1
// updates stale with N replicas; stale gradients slow or destabilise
// training, and a lower learning rate, dropping or scaling stale gradients
// and a synchronous warm-up reduce the damage. Trained for real on the cpu
// backend (threads: the staleness and the async losses vary from run to
// run). It flips at the learning rate from which async ends worse than sync.

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/ps_experiment.hpp"

namespace splitscope {
namespace {

/// Async's final loss over sync's at `learning_rate`: infinite where async
/// diverges, NaN where sync does (no comparison).
double async_over_sync_loss(const PsSetup& base, double learning_rate) {
  PsSetup sync = base, async = base;
  sync.learning_rate = async.learning_rate = learning_rate;
  sync.ps.mode = PsMode::kSync;
  async.ps.mode = PsMode::kAsync;
  const PsTrial synchronous = train_ps_on_cpu(sync);
  const PsTrial asynchronous = train_ps_on_cpu(async);
  if (synchronous.diverged) return std::numeric_limits<double>::quiet_NaN();
  return asynchronous.final_loss / synchronous.final_loss;
}

/// A run's loss at each update (step window), for the page.
LessonSeries ps_loss_by_update(const std::string& name, const PsTrial& trial) {
  LessonSeries series{trial.diverged ? name + " (diverged)" : name, {}};
  for (size_t i = 0; i < trial.loss_curve.size(); ++i) {
    series.points.emplace_back(double(i + 1), trial.loss_curve[i].second);
  }
  return series;
}

nlohmann::ordered_json ps_loss_json(const PsTrial& trial) {
  return trial.diverged ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(trial.final_loss);
}

}  // namespace

LessonResult lesson_async_staleness(const LessonSettings&) {
  PsSetup base;
  base.workers = 4;
  base.learning_rate = 0.05;  // sync trains well at it (docs/lessons.md)
  base.ps.steps = 60;
  const int expected_staleness = base.workers - 1;

  PsSetup sync = base;
  PsSetup async = base;
  async.ps.mode = PsMode::kAsync;
  PsSetup lower_lr = async;
  lower_lr.learning_rate = base.learning_rate / 4;
  PsSetup dropping = async;
  dropping.ps.max_staleness = 1;
  PsSetup scaling = async;
  scaling.ps.staleness_scaled_lr = true;
  PsSetup warmup = async;
  warmup.ps.sync_warmup = 10;
  const PsTrial synchronous = train_ps_on_cpu(sync);
  const PsTrial asynchronous = train_ps_on_cpu(async);
  const PsTrial slower = train_ps_on_cpu(lower_lr);
  const std::vector<std::pair<std::string, PsTrial>> mitigations{
      {"lower learning rate (lr / 4)", slower},
      {"drop gradients staler than 1 (--max-staleness 1)", train_ps_on_cpu(dropping)},
      {"scale by staleness (--staleness-lr)", train_ps_on_cpu(scaling)},
      {"synchronous warm-up (--sync-warmup 10)", train_ps_on_cpu(warmup)}};
  // A diverged run stops before it reports its staleness; the lr / 4 run is
  // plain async too (the learning rate does not change who waits for whom).
  const PsTrial& stale = asynchronous.diverged ? slower : asynchronous;

  const bool staleness_near =
      !stale.diverged && std::abs(stale.staleness_mean - expected_staleness) <= 0.25 * expected_staleness;
  const bool damaged = !synchronous.diverged && asynchronous.final_loss > synchronous.final_loss * kGainMargin;
  int helped = 0;
  std::string helpers;
  nlohmann::ordered_json mitigation_json = nlohmann::ordered_json::array();
  for (const auto& [name, trial] : mitigations) {
    const bool helps = trial.final_loss < asynchronous.final_loss / kGainMargin;
    helped += helps ? 1 : 0;
    if (helps) helpers += (helpers.empty() ? "" : ", ") + name;
    mitigation_json.push_back({{"mitigation", name},
                               {"final_loss", ps_loss_json(trial)},
                               {"staleness_mean", trial.staleness_mean},
                               {"helps", helps}});
  }

  LessonResult result;
  result.setup = fmt::format("mlp-small training, batch {}, parameter servers with {} workers and 1 shard, {} steps, "
                             "SGD with momentum at lr {:g}, seed 1, on this machine's cpu backend (measured)",
                             base.batch, base.workers, base.ps.steps, base.learning_rate);
  result.verdict = staleness_near && damaged && helped > 0 ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  const std::string async_outcome = asynchronous.diverged
                                        ? std::string("async diverged")
                                        : fmt::format("async at {:.4g}", asynchronous.final_loss);
  result.why = fmt::format(
      "async gradients were {:.2f} updates stale on average{} against N-1 = {}; sync ended at a loss of {:.4g}, {}{}",
      stale.staleness_mean, asynchronous.diverged ? " (at lr / 4)" : "", expected_staleness, synchronous.final_loss,
      async_outcome,
      helped > 0 ? fmt::format(", and {} of 4 mitigations did better ({})", helped, helpers)
                 : std::string(", and no mitigation did better"));
  result.numbers = {{"workers", base.workers},
                    {"expected_staleness", expected_staleness},
                    {"async_staleness_mean", stale.staleness_mean},
                    {"async_staleness_histogram", stale.staleness_histogram},
                    {"staleness_learning_rate", asynchronous.diverged ? lower_lr.learning_rate : base.learning_rate},
                    {"sync_staleness_mean", synchronous.staleness_mean},
                    {"sync_final_loss", ps_loss_json(synchronous)},
                    {"async_final_loss", ps_loss_json(asynchronous)},
                    {"final_loss_windows", kPsFinalWindows},
                    {"mitigations", mitigation_json}};
  // Measured: each probe trains sync and async once, so the flip carries their noise.
  FlipSearch search;
  search.parameter = "learning rate";
  search.low = 0.001;
  search.high = 0.1;
  search.relative = 0.05;
  search.quantity = "async's final loss over sync's";
  search.threshold = kGainMargin;
  search.meaning = "from this learning rate up (measured, to 5%), async ends 5% or more worse than sync";
  search.samples = 5;
  result.flip = find_flip_point(search, [&](double lr) { return async_over_sync_loss(base, lr); });
  LessonCurve losses{"loss at each update (measured)", "update", "loss", false, {}, std::nullopt, ""};
  losses.series.push_back(ps_loss_by_update("sync", synchronous));
  losses.series.push_back(ps_loss_by_update("async", asynchronous));
  for (const auto& [name, trial] : mitigations) {
    // The legend's room: the option in the name's parentheses ("--staleness-lr", "lr / 4").
    const size_t open = name.rfind('('), close = name.rfind(')');
    const std::string option = open < close ? name.substr(open + 1, close - open - 1) : name;
    losses.series.push_back(ps_loss_by_update("async, " + option, trial));
  }
  result.figures.curves.push_back(losses);
  LessonBars staleness{"async's gradients by staleness (updates between pull and apply)", "gradients", {}};
  for (size_t s = 0; s < stale.staleness_histogram.size(); ++s) {
    staleness.bars.push_back({std::to_string(s), static_cast<double>(stale.staleness_histogram[s])});
  }
  result.figures.bars.push_back(staleness);
  return result;
}

}  // namespace splitscope
