#include "plan_file/plan_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "util/errors.hpp"
#include "util/strings.hpp"
#include "util/json_fields.hpp"

namespace splitscope {
namespace {

constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

PipelineSchedule schedule_named(const JsonFields& fields, const std::string& name) {
  if (name == "gpipe") return PipelineSchedule::kGpipe;
  if (name == "1f1b") return PipelineSchedule::kOneForwardOneBackward;
  fields.fail("schedule", "must be gpipe or 1f1b, got '" + name + "'");
}

std::vector<int64_t> integers(const JsonFields& fields, std::string_view field, std::string_view what) {
  const nlohmann::json& list = fields.required(field, what);
  if (!list.is_array()) fields.fail(field, "must be an array of integers, got " + json_type_name(list));
  std::vector<int64_t> values;
  for (const auto& value : list) values.push_back(fields.checked_integer(value, field, 0, kMaxBytes));
  return values;
}

NetworkIdentity identity_from(const JsonFields& fields) {
  fields.allow_only({"name", "batch", "training", "layers", "ops", "flops", "params"}, "a plan file's network");
  return {.name = fields.string("name", "the network's name"),
          .batch = fields.integer("batch", "the batch", 1, kMaxBytes),
          .training = fields.optional_bool("training", false),
          .layers = fields.integer("layers", "the model's layer count", 0, kMaxBytes),
          .ops = fields.integer("ops", "the lowered graph's op count", 0, kMaxBytes),
          .flops = fields.integer("flops", "the graph's FLOPs", 0, kMaxBytes),
          .params = fields.integer("params", "the parameter count", 0, kMaxBytes)};
}

PlanSpec spec_from(const JsonFields& fields, int devices) {
  fields.allow_only({"name", "replicas", "microbatches", "schedule", "recompute", "stage_starts", "parameter_servers",
                     "bucket_bytes", "precision", "degrees", "sequence_parallel"},
                    "a plan file's strategy");
  PlanSpec spec;
  spec.devices = devices;
  spec.strategy = fields.string("name", "the strategy's name");
  spec.replicas = static_cast<int>(fields.optional_integer("replicas", 1, 1, kMaxCount));
  spec.microbatches = static_cast<int>(fields.optional_integer("microbatches", 1, 1, kMaxCount));
  spec.schedule = schedule_named(fields, fields.optional_string("schedule", "gpipe"));
  spec.recompute = fields.optional_bool("recompute", false);
  if (fields.has("stage_starts")) {
    for (int64_t start : integers(fields, "stage_starts", "the first layer of each stage")) {
      if (start > kMaxCount) fields.fail("stage_starts", "holds a layer past any network's");
      spec.stage_starts.push_back(static_cast<int>(start));
    }
  }
  spec.parameter_servers = static_cast<int>(fields.optional_integer("parameter_servers", 1, 1, kMaxCount));
  spec.bucket_bytes = fields.optional_integer("bucket_bytes", spec.bucket_bytes, 0, kMaxBytes);
  // Older files have none: they were written at fp32.
  const std::string precision = fields.optional_string("precision", "fp32");
  try {
    spec.precision = parse_precision(precision, "precision");
  } catch (const InputError&) {
    fields.fail("precision", "'" + precision + "' is not a precision (fp32, tf32, bf16, fp16, amp)");
  }
  if (fields.has("degrees")) {
    if (spec.strategy != "hybrid") fields.fail("degrees", "are hybrid's; this plan's strategy is '" + spec.strategy + "'");
    const std::vector<int64_t> degrees = integers(fields, "degrees", "hybrid's tensor, pipeline and data degrees");
    if (degrees.size() != 3 || std::ranges::any_of(degrees, [](int64_t d) { return d < 1; })) {
      fields.fail("degrees", "must be three whole numbers of at least 1: [tensor, pipeline, data]");
    }
    // Each at most the device count, so the products below stay within 2^62.
    const bool fits = std::ranges::all_of(degrees, [&](int64_t d) { return d <= devices; }) &&
                      degrees[0] * degrees[1] <= devices && degrees[0] * degrees[1] * degrees[2] == devices;
    if (!fits) {
      fields.fail("degrees", fmt::format("[{}, {}, {}] must multiply to the plan's {} devices", degrees[0], degrees[1],
                                         degrees[2], devices));
    }
    spec.degrees = ParallelDegrees{.tensor = static_cast<int>(degrees[0]),
                                   .pipeline = static_cast<int>(degrees[1]),
                                   .data = static_cast<int>(degrees[2])};
  }
  spec.sequence_parallel = fields.optional_bool("sequence_parallel", false);
  return spec;
}

PlanDigest digest_from(const JsonFields& fields) {
  fields.allow_only({"ops", "transfer_bytes", "collective_bytes", "device_flops"}, "a plan file's digest");
  return {.ops = fields.integer("ops", "the plan's op count", 0, kMaxBytes),
          .transfer_bytes = fields.integer("transfer_bytes", "bytes of the transfers", 0, kMaxBytes),
          .collective_bytes = fields.integer("collective_bytes", "bytes of the collectives", 0, kMaxBytes),
          .device_flops = integers(fields, "device_flops", "FLOPs per device")};
}

/// "ops 120 against the file's 118, device 1's FLOPs ...": where a rebuild differs.
std::vector<std::string> digest_differences(const PlanDigest& expected, const PlanDigest& actual) {
  std::vector<std::string> lines;
  const auto field = [&](const char* what, int64_t want, int64_t have) {
    if (want != have) lines.push_back(fmt::format("{} {} against the file's {}", what, have, want));
  };
  field("ops", expected.ops, actual.ops);
  field("transfer bytes", expected.transfer_bytes, actual.transfer_bytes);
  field("collective bytes", expected.collective_bytes, actual.collective_bytes);
  if (expected.device_flops != actual.device_flops) lines.push_back("FLOPs per device differ");
  return lines;
}

}  // namespace

PlanDigest digest(const Plan& plan) {
  const PlanTotals totals = plan_totals(plan);
  return {.ops = static_cast<int64_t>(plan.ops.size()),
          .transfer_bytes = totals.transfer_bytes,
          .collective_bytes = totals.collective_bytes,
          .device_flops = totals.device_flops};
}

PlanFile plan_file_of(const PlanSpec& spec, const Plan& plan, std::optional<PlanPrediction> predicted) {
  return {.network = identify(*plan.graph),
          .spec = pinned_spec(spec, plan),
          .digest = digest(plan),
          .predicted = std::move(predicted)};
}

nlohmann::json to_json(const PlanFile& file) {
  const NetworkIdentity& network = file.network;
  const PlanSpec& spec = file.spec;
  nlohmann::json strategy = {{"name", spec.strategy},
                             {"replicas", spec.replicas},
                             {"microbatches", spec.microbatches},
                             {"schedule", std::string(to_string(spec.schedule))},
                             {"recompute", spec.recompute},
                             {"bucket_bytes", spec.bucket_bytes},
                             {"precision", std::string(to_string(spec.precision))}};
  if (!spec.stage_starts.empty()) strategy["stage_starts"] = spec.stage_starts;
  if (spec.strategy == "ps") strategy["parameter_servers"] = spec.parameter_servers;
  if (spec.degrees) strategy["degrees"] = {spec.degrees->tensor, spec.degrees->pipeline, spec.degrees->data};
  if (spec.sequence_parallel) strategy["sequence_parallel"] = true;
  nlohmann::json document = {
      {"schema", kPlanFileSchema},
      {"network",
       {{"name", network.name},
        {"batch", network.batch},
        {"training", network.training},
        {"layers", network.layers},
        {"ops", network.ops},
        {"flops", network.flops},
        {"params", network.params}}},
      {"devices", spec.devices},
      {"strategy", strategy},
      {"digest",
       {{"ops", file.digest.ops},
        {"transfer_bytes", file.digest.transfer_bytes},
        {"collective_bytes", file.digest.collective_bytes},
        {"device_flops", file.digest.device_flops}}}};
  if (file.predicted) {
    document["predicted"] = {{"machine", file.predicted->machine}, {"makespan_us", file.predicted->makespan_us}};
  }
  return document;
}

PlanFile plan_file_from_json(const nlohmann::json& document, const std::string& source) {
  if (!document.is_object()) throw InputError(source, "", "a plan file is a JSON object (" + std::string(kPlanFileSchema) + ")");
  const JsonFields fields(document, "", source);
  fields.allow_only({"schema", "network", "devices", "strategy", "digest", "predicted"}, "a plan file");
  const std::string schema = fields.string("schema", "the format, " + std::string(kPlanFileSchema));
  if (schema != kPlanFileSchema) {
    fields.fail("schema", fmt::format("is '{}'; this build reads {} (write it again with `splitscope plan --out`)",
                                      schema, kPlanFileSchema));
  }
  PlanFile file;
  file.network = identity_from(fields.object("network", "the network the plan is for"));
  const int devices = static_cast<int>(fields.integer("devices", "the device count", 1, kMaxCount));
  file.spec = spec_from(fields.object("strategy", "the strategy and its parameters"), devices);
  file.digest = digest_from(fields.object("digest", "what the plan came out as"));
  if (fields.has("predicted")) {
    const JsonFields predicted = fields.object("predicted", "the search's prediction");
    predicted.allow_only({"machine", "makespan_us"}, "a plan file's prediction");
    file.predicted = PlanPrediction{predicted.string("machine", "the machine it was predicted on"),
                                    predicted.number("makespan_us", "the predicted makespan", NumberRule::kNonNegative)};
  }
  return file;
}

PlanFile read_plan_file(const std::string& path) {
  return plan_file_from_json(parse_json_text(read_input_file(path), path), path);
}

Plan rebuild_plan(const PlanFile& file, const std::string& source, const std::shared_ptr<const Graph>& graph,
                  int devices, std::shared_ptr<const CostFunction> cost) {
  std::vector<std::string> differences = identity_differences(file.network, identify(*graph));
  if (devices > 0 && devices != file.spec.devices) {
    differences.push_back(
        fmt::format("devices: the plan is for {} devices, not {} (drop --devices or give {})", file.spec.devices,
                    devices, file.spec.devices));
  }
  if (!differences.empty()) {
    throw InputError("--plan", source, fmt::format("is not a plan for this run: {}", join(differences, "; ")));
  }
  Plan plan = build_plan(file.spec, graph, std::move(cost));
  const auto drift = digest_differences(file.digest, digest(plan));
  if (!drift.empty()) {
    throw InputError("--plan", source,
                     fmt::format("rebuilt as {} but came out different from the file's plan ({}); this build "
                                 "partitions differently: write the plan again with this build",
                                 describe(file.spec), join(drift, "; ")));
  }
  return plan;
}

}  // namespace splitscope
