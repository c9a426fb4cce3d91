#include "partitioners/hybrid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <vector>

#include "ir/model_limits.hpp"
#include "partitioners/channel_split.hpp"
#include "partitioners/dense_pairs.hpp"
#include "partitioners/head_split.hpp"
#include "plan/plan_builder.hpp"
#include "partitioners/replicas.hpp"
#include "partitioners/stage_units.hpp"
#include "partitioners/transformer_blocks.hpp"
#include "partitioners/strategies.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

std::string degrees_text(const ParallelDegrees& degrees) {
  return fmt::format("{},{},{}", degrees.tensor, degrees.pipeline, degrees.data);
}

/// One replica of a hybrid: P stages of T devices each, over T·P devices.
class HybridReplicaPartitioner : public Partitioner {
 public:
  HybridReplicaPartitioner(int tensor, int pipeline)
      : tensor_(tensor), pipeline_(pipeline), name_(fmt::format("tensor {} x pipeline {}", tensor, pipeline)) {}

  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return "pipeline stages, each tensor-split over its devices"; }
  StrategyTraits traits() const override { return {.microbatched = true, .trains = true}; }
  int max_devices(const Graph& /*graph*/) const override { return tensor_ * pipeline_; }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    const int microbatches = options.microbatches;
    const auto stage_of = assign_stages(*graph, pipeline_, cost_function(options), "hybrid", options.stage_starts);
    const auto pairs = dense_pairs(*graph);
    std::set<NodeId> seconds;
    for (const auto& pair : pairs) seconds.insert(pair.second);
    const auto rows = split_evenly(graph->batch(), microbatches);
    const auto order = graph->wavefront_order();

    PlanBuilder builder(graph, name_, traits(), tensor_ * pipeline_, microbatches);
    if (tensor_ > 1 && has_attention_blocks(*graph)) {
      // A transformer: each stage's tensor group splits it by heads, as `tensor` does.
      const HeadSplitter heads(*graph, tensor_, options.sequence_parallel);
      if (options.sequence_parallel) builder.reduce_scatter_partial_sums();
      for (const Pass pass : {Pass::kForward, Pass::kBackward}) {
        for (int mb = 0; mb < microbatches; ++mb) {
          for (NodeId id : order) {
            const OpNode& node = graph->node(id);
            if (node.kind == OpKind::kInput || node.pass != pass) continue;
            heads.place(id, stage_of[id] * tensor_, mb, rows[static_cast<size_t>(mb)], builder);
          }
        }
      }
      builder.note(options.sequence_parallel
                       ? "each stage's tensor group splits attention by heads, MLPs as dense pairs and the output layer "
                         "by vocabulary; sequence parallel: layer norms and residual adds each run on 1/" +
                             std::to_string(tensor_) + " of the sequence, embeddings whole on each device of the group"
                       : "each stage's tensor group splits attention by heads, MLPs as dense pairs and the output layer "
                         "by vocabulary; embeddings, layer norms and residual adds run whole on each device of the "
                         "group");
      builder.set_pipeline_schedule(options.schedule, tensor_);
      return builder.build();
    }
    // One splitter a micro-batch: each keeps the cuts of its own rows' tensors.
    std::vector<ChannelSplitter> splitters;
    splitters.reserve(static_cast<size_t>(microbatches));
    for (int mb = 0; mb < microbatches; ++mb) {
      splitters.emplace_back(*graph, tensor_, builder, mb, rows[static_cast<size_t>(mb)]);
    }
    // As `pipeline`: every micro-batch's forward, then every backward, in
    // each op's stage; inside a stage, as `tensor`.
    for (const Pass pass : {Pass::kForward, Pass::kBackward}) {
      for (ChannelSplitter& splitter : splitters) {
        for (NodeId id : order) {
          const OpNode& node = graph->node(id);
          if (node.kind == OpKind::kInput || node.pass != pass) continue;
          splitter.set_first_device(stage_of[id] * tensor_);
          if (pass == Pass::kBackward) {
            splitter.place_backward(id);
          } else if (seconds.count(id)) {
            splitter.place_row_split(id, splitter.following_cut(id));
          } else {
            splitter.place_vertical(id);
          }
        }
      }
    }
    if (pairs.empty() && tensor_ > 1) {
      builder.note("no consecutive dense layers to pair: each stage is split vertically");
    }
    builder.set_pipeline_schedule(options.schedule, tensor_);
    return builder.build();
  }

 private:
  int tensor_;
  int pipeline_;
  std::string name_;
};

class HybridPartitioner : public Partitioner {
 public:
  std::string_view name() const override { return "hybrid"; }
  std::string_view summary() const override {
    return "Megatron's tensor x pipeline x data parallelism, degrees from --degrees T,P,D";
  }
  StrategyTraits traits() const override {
    return {.microbatched = true, .trains = true, .sequence_parallel = true};
  }
  int max_devices(const Graph& graph) const override {
    const int tensor = has_attention_blocks(graph) ? head_degrees(graph).back() : vertical_device_limit(graph).first;
    const int64_t most = int64_t{tensor} * static_cast<int64_t>(stage_units(graph).size()) *
                         graph.batch();
    return static_cast<int>(std::min<int64_t>(most, std::numeric_limits<int>::max()));
  }
  /// Its degrees are the caller's choice, so `compare` never runs it unasked.
  bool applies(const Graph& /*graph*/, int /*devices*/) const override { return false; }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    const ParallelDegrees degrees = checked_degrees(*graph, options);
    auto replica = std::make_unique<HybridReplicaPartitioner>(degrees.tensor, degrees.pipeline);
    // Every replica written: the report's traffic per group reads every op.
    PartitionOptions whole = options;
    whole.compact_replicas = false;
    Plan plan = degrees.data == 1
                    ? replica->partition(std::move(graph), whole)
                    : with_replicas(std::move(replica), degrees.data)->partition(std::move(graph), whole);
    plan.strategy = hybrid_plan_name(degrees);
    plan.traits = traits();
    plan.degrees = degrees;
    const int group = degrees.tensor * degrees.pipeline;
    plan.notes.push_back(fmt::format(
        "devices numbered tensor innermost: device t + {}*(s + {}*r) is device t of stage s of replica r, so each "
        "tensor group is {} consecutive devices, each replica {}",
        degrees.tensor, degrees.pipeline, degrees.tensor, group));
    return plan;
  }

 private:
  static ParallelDegrees checked_degrees(const Graph& graph, const PartitionOptions& options) {
    if (!options.degrees) {
      throw InputError("--degrees", "",
                       fmt::format("hybrid needs its three degrees: --degrees T,P,D (tensor, pipeline, data) whose "
                                   "product is --devices, e.g. --degrees 2,2,{} for {} devices",
                                   std::max(1, options.devices / 4), std::max(4, options.devices / 4 * 4)));
    }
    const ParallelDegrees k = *options.degrees;
    const std::string given = degrees_text(k);
    if (k.tensor < 1 || k.pipeline < 1 || k.data < 1) {
      throw InputError("--degrees", given, "each degree must be at least 1 (1 for a kind of parallelism not used)");
    }
    const int64_t product = int64_t{k.tensor} * k.pipeline * k.data;
    if (product != options.devices) {
      throw InputError("--degrees", given,
                       fmt::format("{}x{}x{} = {} devices, but --devices is {}; give degrees whose product is the "
                                   "device count",
                                   k.tensor, k.pipeline, k.data, product, options.devices));
    }
    const auto units = static_cast<int>(stage_units(graph).size());
    if (k.pipeline > units) {
      throw InputError("--degrees", given,
                       fmt::format("{} pipeline stages, but {} has {} layers to stage (each stacked recurrent layer "
                                   "counts once); use a pipeline degree of at most {}",
                                   k.pipeline, graph.name(), units, units));
    }
    if (options.sequence_parallel) require_sequence_parallel(graph, k.tensor);
    if (has_attention_blocks(graph)) {
      // A transformer's tensor groups split attention by heads (head_split.hpp).
      const std::vector<int> valid = head_degrees(graph);
      if (std::find(valid.begin(), valid.end(), k.tensor) == valid.end()) {
        std::string degrees;
        for (int degree : valid) degrees += (degrees.empty() ? "" : ", ") + std::to_string(degree);
        throw InputError("--degrees", given,
                         fmt::format("a tensor degree of {}, but each tensor group splits attention by heads and {} "
                                     "devices do not divide every block's heads; use a tensor degree of {}",
                                     k.tensor, k.tensor, degrees));
      }
    } else {
      const auto [most, limiter] = vertical_device_limit(graph);
      if (k.tensor > most) {
        throw InputError("--degrees", given,
                         fmt::format("a tensor degree of {}, but layer {} has {} outputs to slice; use at most {}",
                                     k.tensor, limiter, most, most));
      }
      if (!backward_follows_split(graph, k.tensor)) {
        throw InputError("--degrees", given,
                         fmt::format("the backward pass of {} cannot follow a tensor split over {} devices (a grouped "
                                     "layer's groups do not divide among them); use another tensor degree",
                                     graph.name(), k.tensor));
      }
    }
    if (k.data > graph.batch()) {
      throw InputError("--degrees", given,
                       fmt::format("{} data replicas need a row of the batch each, and the batch has {}; use a data "
                                   "degree of at most {}",
                                   k.data, graph.batch(), graph.batch()));
    }
    const int64_t rows = graph.batch() / k.data;  // the smallest replica's
    if (options.microbatches < 1 || options.microbatches > rows) {
      throw InputError("--microbatches", "",
                       fmt::format("must be between 1 and each replica's rows ({} of the batch of {} over {} "
                                   "replicas), got {}",
                                   rows, graph.batch(), k.data, options.microbatches));
    }
    const int64_t ops = static_cast<int64_t>(graph.num_nodes());
    if (ops > kMaxGraphOps / options.microbatches) {
      throw InputError("--microbatches", "",
                       fmt::format("{} micro-batches of the {} ops of {} make more than {} ops, more than a run can "
                                   "schedule; use at most {}",
                                   options.microbatches, ops, graph.name(), kMaxGraphOps,
                                   std::max<int64_t>(1, kMaxGraphOps / ops)));
    }
    return k;
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_hybrid_partitioner() { return std::make_unique<HybridPartitioner>(); }

std::string hybrid_plan_name(const ParallelDegrees& degrees) {
  return fmt::format("hybrid t{} p{} d{}", degrees.tensor, degrees.pipeline, degrees.data);
}

ParallelDegrees parse_degrees(const std::string& text) {
  std::vector<int> numbers;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    int number = 0;
    const char* first = text.data() + at;
    const char* last = text.data() + comma;
    const auto [end, error] = std::from_chars(first, last, number);
    if (first == last || error != std::errc() || end != last) {
      throw InputError("--degrees", text,
                       "expects three whole numbers T,P,D (the tensor, pipeline and data degrees), e.g. 2,2,2");
    }
    numbers.push_back(number);
    at = comma + 1;
  }
  if (numbers.size() != 3) {
    throw InputError("--degrees", text,
                     fmt::format("expects three degrees T,P,D (tensor, pipeline, data), got {}; write 1 for a kind "
                                 "not used, e.g. 2,1,4",
                                 numbers.size()));
  }
  return {numbers[0], numbers[1], numbers[2]};
}

}  // namespace splitscope
