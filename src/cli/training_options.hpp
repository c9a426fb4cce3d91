#pragma once
/// \file
/// The options that make `run`, `compare` and `plan` train: `--train`, with
/// `--steps`, `--schedule`, `--optimizer`, `--lr`, `--momentum`, `--bucket-mib`,
/// `--recompute`, `--zero` (docs/training.md). Each
/// command registers them and turns a forward network into its training
/// graph here.

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "ir/graph.hpp"
#include "ir/training_spec.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan.hpp"
#include "run/backend.hpp"

namespace splitscope::cli {

struct TrainingOptions {
  bool train = false;
  int steps = 3;
  bool steps_given = false;
  std::string schedule = "gpipe";
  bool schedule_given = false;
  double learning_rate = 0.01;
  double momentum = 0.9;
  bool momentum_given = false;
  std::string optimizer = "sgd";
  bool recompute = false;
  double bucket_mib = 25;  ///< PyTorch DDP's bucket_cap_mb
  bool bucket_given = false;
  int zero = 0;  ///< ZeRO stage: 0, or 1 to shard the optimizer state over the data-parallel replicas
  bool zero_given = false;
};

/// Registers the options on `command`; `steps`: whether it runs steps
/// (`run`, `compare`) rather than only planning them (`plan`).
void add_training_options(CLI::App& command, TrainingOptions& options, bool steps);

/// Registers `--zero` (`run` and `plan`, which make one strategy's plan;
/// comparisons hold strategies without replicas).
void add_zero_option(CLI::App& command, TrainingOptions& options);

/// `graph`, or with --train its training graph. InputError (exit 2) for an
/// impossible combination (training options without --train, a learning
/// rate that is not positive, momentum outside [0, 1)) or a network with a
/// layer that cannot train.
std::shared_ptr<const Graph> graph_to_run(std::shared_ptr<const Graph> graph, const TrainingOptions& options);

/// The optimizer --train asks for, or nullopt without --train. InputError
/// (exit 2) as graph_to_run() for the options themselves.
std::optional<Optimizer> training_optimizer(const TrainingOptions& options);

/// InputError (exit 2) for --repeat with --train: a training run's timed
/// runs are its --steps, and a second count would be silently ignored.
void check_training_repeats(const TrainingOptions& options, bool repeats_given);

/// The pipeline schedule --schedule names.
PipelineSchedule pipeline_schedule(const TrainingOptions& options);

/// `--bucket-mib` in bytes (PartitionOptions::bucket_bytes).
int64_t bucket_bytes(const TrainingOptions& options);

/// InputError (exit 2) for a `--zero` other than 0 or 1; UnavailableError
/// (exit 3) for `--zero 1` on a backend other than sim: the executors run the
/// gradient all-reduce and whole optimizer state, and would not measure the
/// sharded step.
void check_zero_backend(const TrainingOptions& options, Backend backend);

/// Sets what the training options ask of a plan (schedule, buckets, --recompute, --zero) in `partition`.
void set_training_plan_options(const TrainingOptions& options, PartitionOptions& partition);

}  // namespace splitscope::cli
