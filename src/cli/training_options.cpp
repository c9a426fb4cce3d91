#include "cli/training_options.hpp"

#include <fmt/format.h>

#include <cmath>

#include "ir/training.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

void add_training_options(CLI::App& command, TrainingOptions& options, bool steps) {
  command.add_flag("--train", options.train,
                   "run training steps (forward, loss, backward, optimizer update) instead of forward passes");
  if (steps) {
    command.add_option("--steps", options.steps, "training steps to run (with --train); each is timed")
        ->capture_default_str()
        ->each([&options](const std::string&) { options.steps_given = true; });
  }
  command.add_option("--schedule", options.schedule,
                     "pipeline training schedule: gpipe (all forwards, then all backwards) or 1f1b (PipeDream-Flush)")
      ->check(CLI::IsMember({"gpipe", "1f1b"}))
      ->capture_default_str()
      ->each([&options](const std::string&) { options.schedule_given = true; });
  command.add_option("--optimizer", options.optimizer, "sgd (with --momentum) or adam (with --train)")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  command.add_option("--lr", options.learning_rate, "learning rate (with --train)")->capture_default_str();
  command.add_option("--momentum", options.momentum, "SGD momentum, 0 for plain SGD (with --train)")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.momentum_given = true; });
  command.add_option("--bucket-mib", options.bucket_mib,
                     "training data and --replicas: all-reduce the gradients in buckets of this many MiB, "
                     "as PyTorch DDP's bucket_cap_mb (the first bucket 1 MiB at most); 0: one per weight slice")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.bucket_given = true; });
  command.add_flag("--recompute", options.recompute,
                   "training: keep only each device's inputs of a micro-batch's forward pass and re-run the forward "
                   "just before its backward (GPipe's re-materialisation): less activation memory, one more forward "
                   "of FLOPs");
}

void add_zero_option(CLI::App& command, TrainingOptions& options) {
  command.add_option("--zero", options.zero,
                     "training data, hybrid and --replicas: 1 shards the optimizer state (and amp's fp32 masters) "
                     "over the data-parallel replicas, ZeRO stage 1; 0 keeps it whole on every replica")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.zero_given = true; });
}

std::shared_ptr<const Graph> graph_to_run(std::shared_ptr<const Graph> graph, const TrainingOptions& options) {
  const std::optional<Optimizer> optimizer = training_optimizer(options);
  if (!optimizer) return graph;
  if (options.steps < 1) throw InputError("--steps", "", "must be at least 1, got " + std::to_string(options.steps));
  return std::make_shared<const Graph>(training_graph(*graph, *optimizer));
}

std::optional<Optimizer> training_optimizer(const TrainingOptions& options) {
  if (!options.train) {
    if (options.steps_given) {
      throw InputError("--steps", "",
                       "counts training steps; add --train (a forward run's timed runs are --repeat N)");
    }
    if (options.schedule_given || options.recompute || options.bucket_given || options.zero_given) {
      throw InputError(options.recompute      ? "--recompute"
                       : options.bucket_given ? "--bucket-mib"
                       : options.zero_given   ? "--zero"
                                              : "--schedule",
                       "",
                       "applies to training runs only; add --train");
    }
    return std::nullopt;
  }
  if (!(options.learning_rate > 0 && std::isfinite(options.learning_rate))) {
    throw InputError("--lr", "", fmt::format("must be a positive, finite learning rate, got {}", options.learning_rate));
  }
  if (!(options.momentum >= 0 && options.momentum < 1)) {
    throw InputError("--momentum", "", "must be in [0, 1), got " + std::to_string(options.momentum));
  }
  const bool adam = options.optimizer == "adam";
  if (adam && options.momentum_given) {
    throw InputError("--momentum", "", "applies to --optimizer sgd; Adam keeps its own moments (β1 0.9, β2 0.999)");
  }
  Optimizer optimizer;
  optimizer.kind = adam ? OptimizerKind::kAdam : OptimizerKind::kSgd;
  optimizer.learning_rate = options.learning_rate;
  optimizer.momentum = adam ? 0.0 : options.momentum;
  return optimizer;
}

void check_training_repeats(const TrainingOptions& options, bool repeats_given) {
  if (options.train && repeats_given) {
    throw InputError("--repeat", "",
                     fmt::format("with --train each timed run is one training step: give --steps K instead (now {})",
                                 options.steps));
  }
}

int64_t bucket_bytes(const TrainingOptions& options) {
  // Up to 1 TiB: beyond it every network's gradients are one bucket anyway.
  if (!(options.bucket_mib >= 0 && options.bucket_mib <= 1 << 20)) {
    throw InputError("--bucket-mib", "",
                     fmt::format("must be between 0 and {} MiB, got {}", 1 << 20, options.bucket_mib));
  }
  return static_cast<int64_t>(options.bucket_mib * (1 << 20));
}

PipelineSchedule pipeline_schedule(const TrainingOptions& options) {
  return options.schedule == "1f1b" ? PipelineSchedule::kOneForwardOneBackward : PipelineSchedule::kGpipe;
}

void set_training_plan_options(const TrainingOptions& options, PartitionOptions& partition) {
  partition.schedule = pipeline_schedule(options);
  partition.bucket_bytes = bucket_bytes(options);
  partition.recompute = options.train && options.recompute;
  if (options.zero != 0 && options.zero != 1) {
    throw InputError("--zero", "", fmt::format("must be 0 or 1, got {}; 0: every replica keeps the whole optimizer "
                                               "state, 1: ZeRO stage 1 shards it over the data-parallel replicas",
                                               options.zero));
  }
  partition.zero_stage = options.train ? options.zero : 0;
}

void check_zero_backend(const TrainingOptions& options, Backend backend) {
  if (options.train && options.zero == 1 && backend != Backend::kSim) {
    throw UnavailableError("--zero 1 is modelled by plan memory and the simulator only; the " + std::string(to_string(backend)) +
                           " backend runs every replica's whole optimizer state: use --backend sim");
  }
}

}  // namespace splitscope::cli
