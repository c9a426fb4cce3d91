// Claim 8: synchronous updates with a few spare replicas cut the time spent
// waiting for the slowest: with R spares an update applies once the first
// N-R gradients of its step are in, and the straggler's is dropped. Trained
// for real on the cpu backend with one worker held back every step; the
// flip, on the simulator, is the noise on the workers' steps from which the
// spare gains 5%.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/ps_experiment.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {
namespace {

/// On the simulator, sync's time per update over 1 spare's, each worker
/// step's compute × a lognormal factor of `sigma` (seed 1).
double simulated_spare_speedup(PsSetup setup, double sigma, const Machine& machine) {
  setup.jitter_sigma = sigma;
  PsSetup spare = setup;
  setup.ps.mode = PsMode::kSync;
  spare.ps.mode = PsMode::kSpare;
  spare.ps.spare = 1;
  return simulate_ps(setup, machine).ms_per_update() / simulate_ps(spare, machine).ms_per_update();
}

}  // namespace

LessonResult lesson_spare_replicas(const LessonSettings& settings) {
  PsSetup base;
  base.workers = 4;
  base.ps.steps = 30;
  constexpr double kDelayMs = 5;  // worker 3, every step: busy elsewhere
  PsSetup sync = base, spare = base;
  sync.straggler = spare.straggler = StragglerDelay{base.workers - 1, kDelayMs};
  spare.ps.mode = PsMode::kSpare;
  spare.ps.spare = 1;
  const PsTrial synchronous = train_ps_on_cpu(sync);
  const PsTrial spared = train_ps_on_cpu(spare);
  const double speedup = synchronous.ms_per_update() / spared.ms_per_update();

  LessonResult result;
  result.setup = fmt::format("mlp-small training, batch {}, parameter servers with {} workers and 1 shard, {} updates, "
                             "worker {} held back {:g} ms every step, sync against 1 spare (--spare 1), on this "
                             "machine's cpu backend (measured)",
                             base.batch, base.workers, base.ps.steps, base.workers - 1, kDelayMs);
  result.verdict = speedup >= kGainMargin ? LessonVerdict::kHolds
                   : speedup > 1 - kUncertainMargin ? LessonVerdict::kUncertain
                                                    : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "an update took {:.3f} ms with 1 spare against {:.3f} ms waiting for every worker ({:.2f}x); the spare run "
      "dropped {} late gradients and ended at a loss of {:.4g} against sync's {:.4g}",
      spared.ms_per_update(), synchronous.ms_per_update(), speedup, spared.gradients_dropped, spared.final_loss,
      synchronous.final_loss);
  result.numbers = {{"sync_ms_per_update", synchronous.ms_per_update()},
                    {"spare_ms_per_update", spared.ms_per_update()},
                    {"speedup", speedup},
                    {"sync_updates", synchronous.updates},
                    {"spare_updates", spared.updates},
                    {"spare_gradients_dropped", spared.gradients_dropped},
                    {"sync_final_loss", synchronous.final_loss},
                    {"spare_final_loss", spared.final_loss},
                    {"straggler_delay_ms", kDelayMs}};
  // The flip on the simulator, where it is deterministic: the simulator
  // holds no worker back, it draws noise on each worker's step instead.
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  result.numbers["simulated_speedup_without_noise"] = simulated_spare_speedup(base, 0, machine);
  FlipSearch search;
  search.parameter = "worker step noise (lognormal sigma)";
  search.low = 0.001;
  search.high = 2;
  search.quantity = "sync's time per update over 1 spare's (simulated)";
  search.threshold = kGainMargin;
  search.meaning = fmt::format("simulated on {}, seed 1: from this noise on each worker's step up, 1 spare replica "
                               "gains {:.0f}% over waiting for every worker",
                               machine_name, (kGainMargin - 1) * 100);
  result.flip = find_flip_point(search, [&](double sigma) { return simulated_spare_speedup(base, sigma, machine); });
  LessonCurve losses{"loss against wall time (measured)", "wall time (ms)", "loss", false, {}, std::nullopt, ""};
  losses.series.push_back({"sync, waiting for every worker", synchronous.loss_curve});
  losses.series.push_back({"1 spare replica", spared.loss_curve});
  result.figures.curves.push_back(losses);
  return result;
}

}  // namespace splitscope
