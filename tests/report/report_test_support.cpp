#include "report_test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "plan/collective_schedule.hpp"

namespace splitscope::testing {

std::shared_ptr<const Graph> dense_chain_graph() {
  const Model model = parse_model_text(R"({"name": "chain", "batch": 2, "input": [8], "layers": [
      {"type": "dense", "units": 4, "name": "fc1"},
      {"type": "dense", "units": 4, "name": "fc2"},
      {"type": "dense", "units": 2, "name": "fc3"}]})",
                                       "chain.json");
  return std::make_shared<const Graph>(lower(model));
}

HandPlan::HandPlan(std::string strategy, int devices, int microbatches) {
  plan_.strategy = std::move(strategy);
  // A hand plan named after a strategy has that strategy's traits.
  plan_.traits = {.baseline = plan_.strategy == "single", .microbatched = plan_.strategy == "pipeline"};
  plan_.devices = devices;
  plan_.microbatches = microbatches;
  plan_.graph = dense_chain_graph();
  plan_.schedule.resize(static_cast<size_t>(devices));
}

int HandPlan::new_value(int device, NodeId node, int producer, int64_t bytes) {
  Value value;
  value.id = static_cast<int>(plan_.values.size());
  value.device = device;
  value.node = node;
  value.batch = {0, 2};
  value.channels = {0, 4};
  value.producer = producer;
  value.bytes = bytes;
  plan_.values.push_back(value);
  return value.id;
}

int HandPlan::input(int device) {
  const int id = new_value(device, 0, -1, 64);
  plan_.inputs.push_back(id);
  return id;
}

int HandPlan::compute(int device, NodeId node, std::vector<int> inputs, int64_t flops, int microbatch) {
  PlanOp op;
  op.id = static_cast<int>(plan_.ops.size());
  op.role = OpRole::kCompute;
  op.node = node;
  op.device = device;
  op.microbatch = microbatch;
  op.slice = full_slice(plan_.graph->node(node), {0, 2});
  op.inputs = std::move(inputs);
  op.flops = flops;
  op.outputs = {new_value(device, node, op.id, 32)};
  plan_.schedule[static_cast<size_t>(device)].push_back(op.id);
  plan_.ops.push_back(op);
  return op.id;
}

int HandPlan::transfer(int value, int device, int64_t bytes) {
  PlanOp op;
  op.id = static_cast<int>(plan_.ops.size());
  op.role = OpRole::kTransfer;
  op.node = plan_.value(value).node;
  op.device = device;
  op.src_device = plan_.value(value).device;
  op.inputs = {value};
  op.bytes_moved = bytes;
  op.outputs = {new_value(device, op.node, op.id, bytes)};
  plan_.ops.push_back(op);
  return op.id;
}

int HandPlan::collective(CollectiveKind kind, std::vector<int> values, std::vector<int> participants,
                         int64_t payload, int64_t moved) {
  PlanOp op;
  op.id = static_cast<int>(plan_.ops.size());
  op.role = OpRole::kCollective;
  op.collective = kind;
  op.algorithm = default_algorithm(kind);
  op.node = plan_.value(values.front()).node;
  op.device = kind == CollectiveKind::kConcat ? participants.front() : -1;
  op.participants = participants;
  op.inputs = values;
  op.payload_bytes = payload;
  op.bytes_moved = moved;
  for (int device : participants) op.outputs.push_back(new_value(device, op.node, op.id, payload));
  plan_.ops.push_back(op);
  return op.id;
}

int HandPlan::output(int op, size_t index) const { return plan_.op(op).outputs.at(index); }

void HandPlan::set_memory(const std::vector<int64_t>& peaks) {
  plan_.memory.clear();
  for (int64_t peak : peaks) plan_.memory.push_back({peak / 2, peak - peak / 2, 0, peak});
}

Span compute_span(int device, int op, double start_us, double end_us, int64_t flops) {
  Span span;
  span.device = device;
  span.lane = Lane::kCompute;
  span.kind = SpanKind::kCompute;
  span.op = op;
  span.start_us = start_us;
  span.end_us = end_us;
  span.flops = flops;
  return span;
}

Span copy_span(int device, int op, SpanKind kind, double start_us, double end_us, int64_t bytes, Lane lane) {
  Span span;
  span.device = device;
  span.lane = lane;
  span.kind = kind;
  span.op = op;
  span.start_us = start_us;
  span.end_us = end_us;
  span.bytes = bytes;
  return span;
}

RunResult run_result(std::vector<Timeline> timelines, std::string backend, std::string machine) {
  RunResult result;
  result.timelines = std::move(timelines);
  result.info.backend = std::move(backend);
  result.info.measured = result.info.backend != "sim";
  result.info.device_mode = result.info.measured ? "cpu threads" : "simulated";
  result.info.machine_name = std::move(machine);
  result.info.device_name = "test device";
  result.info.driver = "none";
  result.info.facts = {{"dtype", "fp32"}};
  return result;
}

std::shared_ptr<const Plan> single_plan(int64_t flops) {
  HandPlan plan("single", 1);
  plan.compute(0, 1, {plan.input(0)}, flops);
  plan.set_memory({1000});
  return plan.build();
}

RunResult single_result(double makespan_us, std::string backend, std::string machine) {
  return run_result({Timeline{{compute_span(0, 0, 0, makespan_us)}}}, std::move(backend), std::move(machine));
}

std::shared_ptr<const Plan> two_stage_plan() {
  HandPlan hand("horizontal", 2);
  const int fc1 = hand.compute(0, 1, {hand.input(0)}, 100);
  const int fc2 = hand.compute(0, 2, {hand.output(fc1)}, 200);
  const int move = hand.transfer(hand.output(fc2), 1, 1024);
  hand.compute(1, 3, {hand.output(move)}, 100);
  hand.set_memory({4096, 2048});
  return hand.build();
}

Timeline two_stage_timeline(double scale) {
  return Timeline{{compute_span(0, 0, 0, 100 * scale), compute_span(0, 1, 100 * scale, 300 * scale),
                   copy_span(1, 2, SpanKind::kTransfer, 300 * scale, 350 * scale, 1024),
                   compute_span(1, 3, 350 * scale, 450 * scale)}};
}

Comparison sample_comparison() {
  ReportContext context;
  context.date = "2024-01-02T03:04:05+0000";
  context.host = "test-host";
  context.executable = "/usr/bin/splitscope";
  context.version = "0.1.0";
  context.git_revision = "abc1234";
  context.build_type = "release";
  context.cpus = 2;
  context.command_line = {"splitscope", "compare", "chain", "--devices", "2"};
  ComparisonBuilder builder(context);

  RunResult single = run_result({Timeline{{compute_span(0, 0, 0, 390)}}, Timeline{{compute_span(0, 0, 0, 400)}},
                                 Timeline{{compute_span(0, 0, 0, 420)}}});
  builder.add(single_plan(400), single);
  builder.add(two_stage_plan(), run_result({two_stage_timeline()}));

  HandPlan pipeline("pipeline", 2, 4);
  pipeline.compute(0, 1, {pipeline.input(0)}, 200);
  pipeline.compute(1, 2, {pipeline.input(1)}, 200);
  pipeline.set_memory({4096, 1024});
  RunResult too_big = run_result({});
  too_big.info.device_memory_bytes = {3000, 3000};
  builder.add(pipeline.build(), too_big);

  builder.add(single_plan(400), single_result(40, "sim", "sim-machine"));
  builder.add(two_stage_plan(), run_result({two_stage_timeline(0.05)}, "sim", "sim-machine"));
  return std::move(builder).build();
}

namespace {

std::filesystem::path temp_root() {
  return std::filesystem::temp_directory_path() / ("splitscope-report-test-" + std::to_string(::getpid()));
}

/// Removes this process's test folders when the tests end (kept when one failed, to look at).
class TempCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::UnitTest::GetInstance()->Passed()) std::filesystem::remove_all(temp_root());
  }
};

// gtest's way to register an environment with gtest_main: an initializer.
[[maybe_unused]] const ::testing::Environment* const kTempCleanup =
    ::testing::AddGlobalTestEnvironment(new TempCleanup);

}  // namespace

std::string fresh_dir(const std::string& name) {
  const auto dir = temp_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string source_root() {
  const char* root = std::getenv("SPLITSCOPE_SOURCE_ROOT");
  return root != nullptr ? root : ".";
}

int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer{};
  std::string text;
  size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) text.append(buffer.data(), read);
  const int status = pclose(pipe);
  if (output != nullptr) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace splitscope::testing
