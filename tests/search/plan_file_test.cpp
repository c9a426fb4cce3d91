// Plan files: written, read back, rebuilt, and refused for another network,
// batch, training or device count, or when the rebuild comes out different.

#include <gtest/gtest.h>

#include <functional>

#include "plan_file/plan_file.hpp"
#include "search_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

PlanSpec pipeline_spec() {
  PlanSpec spec;
  spec.strategy = "pipeline";
  spec.devices = 4;
  spec.replicas = 2;
  spec.microbatches = 2;
  spec.schedule = PipelineSchedule::kOneForwardOneBackward;
  spec.recompute = true;
  return spec;
}

std::string problem_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(PlanFile, RoundTripsThroughJsonAndRebuildsTheSamePlan) {
  const auto graph = testing::zoo_network("mlp-small", true);
  const Plan plan = build_plan(pipeline_spec(), graph);
  const PlanFile file = plan_file_of(pipeline_spec(), plan);
  // The balanced cut is pinned: mlp-small's 6 units over 2 stages.
  ASSERT_EQ(file.spec.stage_starts.size(), size_t{2});
  EXPECT_EQ(file.spec.stage_starts.front(), 0);
  const PlanFile read = plan_file_from_json(to_json(file), "test.json");
  EXPECT_EQ(read.network, file.network);
  EXPECT_EQ(read.digest, file.digest);
  EXPECT_EQ(describe(read.spec), describe(file.spec));
  EXPECT_EQ(read.spec.bucket_bytes, file.spec.bucket_bytes);
  const Plan rebuilt = rebuild_plan(read, "test.json", graph, 0, nullptr);
  EXPECT_EQ(digest(rebuilt), digest(plan));
  EXPECT_EQ(rebuilt.strategy, "pipeline x2");
  EXPECT_EQ(rebuilt.microbatches, 2);
  EXPECT_EQ(rebuilt.pipeline_schedule, PipelineSchedule::kOneForwardOneBackward);
}

TEST(PlanFile, RefusesAnotherNetworkBatchTrainingOrDeviceCountNamingIt) {
  const auto graph = testing::zoo_network("mlp-small", true);
  const PlanFile file = plan_file_of(pipeline_spec(), build_plan(pipeline_spec(), graph));
  EXPECT_NE(problem_of([&] { rebuild_plan(file, "p.json", testing::zoo_network("cnn-small", true), 0, nullptr); })
                .find("network: the plan is for mlp-small, not cnn-small"),
            std::string::npos);
  EXPECT_NE(problem_of([&] { rebuild_plan(file, "p.json", testing::zoo_network("mlp-small", false), 0, nullptr); })
                .find("training: the plan is a training step; add --train"),
            std::string::npos);
  EXPECT_NE(problem_of([&] { rebuild_plan(file, "p.json", graph, 8, nullptr); })
                .find("devices: the plan is for 4 devices, not 8"),
            std::string::npos);
  const auto bigger = std::make_shared<const Graph>(graph->with_batch(16));
  EXPECT_NE(problem_of([&] { rebuild_plan(file, "p.json", bigger, 0, nullptr); })
                .find("batch: the plan is for a batch of 8, not 16"),
            std::string::npos);
}

TEST(PlanFile, RefusesARebuildThatCameOutDifferent) {
  const auto graph = testing::zoo_network("mlp-small", false);
  PlanSpec spec = pipeline_spec();
  spec.schedule = PipelineSchedule::kGpipe;
  spec.recompute = false;
  PlanFile file = plan_file_of(spec, build_plan(spec, graph));
  file.digest.ops += 1;
  EXPECT_NE(problem_of([&] { rebuild_plan(file, "p.json", graph, 0, nullptr); }).find("came out different"),
            std::string::npos);
}

TEST(PlanFile, MalformedFilesAreInputErrorsNamingTheField) {
  const auto graph = testing::zoo_network("mlp-small", false);
  PlanSpec spec;
  spec.strategy = "tensor";
  spec.devices = 2;
  nlohmann::json document = to_json(plan_file_of(spec, build_plan(spec, graph)));
  document["schema"] = "splitscope.plan/0";
  EXPECT_NE(problem_of([&] { plan_file_from_json(document, "p.json"); }).find("p.json: schema"), std::string::npos);
  document["schema"] = kPlanFileSchema;
  document["strategy"]["schedule"] = "zigzag";
  EXPECT_NE(problem_of([&] { plan_file_from_json(document, "p.json"); }).find("gpipe or 1f1b"), std::string::npos);
  document["strategy"]["schedule"] = "gpipe";
  document["devices"] = 0;
  EXPECT_NE(problem_of([&] { plan_file_from_json(document, "p.json"); }).find("devices"), std::string::npos);
}

TEST(PlanFile, HybridDegreesAndSequenceParallelRoundTripAndRebuild) {
  // gpt-small (2 blocks of 2 heads) training as t2 p2 d2 over 8 devices,
  // sequence-parallel: the degrees, the option and the two stages' cuts are
  // written, read back and rebuild the same plan.
  const auto graph = testing::zoo_network("gpt-small", true);
  PlanSpec spec;
  spec.strategy = "hybrid";
  spec.devices = 8;
  spec.degrees = ParallelDegrees{.tensor = 2, .pipeline = 2, .data = 2};
  spec.sequence_parallel = true;
  const Plan plan = build_plan(spec, graph);
  const PlanFile file = plan_file_of(spec, plan);
  const nlohmann::json document = to_json(file);
  EXPECT_EQ(document["strategy"]["degrees"], nlohmann::json({2, 2, 2}));
  EXPECT_EQ(document["strategy"]["sequence_parallel"], true);
  // The cuts balanced by cost are pinned, one per pipeline stage.
  ASSERT_EQ(file.spec.stage_starts.size(), size_t{2});
  EXPECT_EQ(file.spec.stage_starts.front(), 0);
  const PlanFile read = plan_file_from_json(document, "test.json");
  ASSERT_TRUE(read.spec.degrees.has_value());
  EXPECT_EQ(*read.spec.degrees, *spec.degrees);
  EXPECT_TRUE(read.spec.sequence_parallel);
  EXPECT_EQ(describe(read.spec).rfind("hybrid t2 p2 d2", 0), 0u) << describe(read.spec);
  EXPECT_NE(describe(read.spec).find(", sequence-parallel"), std::string::npos) << describe(read.spec);
  const Plan rebuilt = rebuild_plan(read, "test.json", graph, 0, nullptr);
  EXPECT_EQ(digest(rebuilt), digest(plan));
  EXPECT_EQ(rebuilt.strategy, plan.strategy);
  // Without the option the plan has all-reduces where it had reduce-scatters
  // and all-gathers: a file that lost the field would not rebuild it.
  PlanSpec plain = spec;
  plain.sequence_parallel = false;
  EXPECT_NE(digest(build_plan(plain, graph)), digest(plan));
}

TEST(PlanFile, BadHybridFieldsAreInputErrorsNamingTheField) {
  const auto graph = testing::zoo_network("mlp-small", false);
  PlanSpec spec;
  spec.strategy = "hybrid";
  spec.devices = 4;
  spec.degrees = ParallelDegrees{.tensor = 2, .pipeline = 2, .data = 1};
  const nlohmann::json good = to_json(plan_file_of(spec, build_plan(spec, graph)));
  const auto problem_with = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json document = good;
    change(document);
    return problem_of([&] { plan_file_from_json(document, "p.json"); });
  };
  EXPECT_EQ(problem_with([](nlohmann::json&) {}), "");
  EXPECT_NE(problem_with([](nlohmann::json& d) { d["strategy"]["degrees"] = {2, 2}; }).find("strategy.degrees"),
            std::string::npos);
  EXPECT_NE(problem_with([](nlohmann::json& d) { d["strategy"]["degrees"] = {2, 0, 2}; }).find("at least 1"),
            std::string::npos);
  EXPECT_NE(problem_with([](nlohmann::json& d) { d["strategy"]["degrees"] = {2, 2, 2}; })
                .find("[2, 2, 2] must multiply to the plan's 4 devices"),
            std::string::npos);
  EXPECT_NE(problem_with([](nlohmann::json& d) { d["strategy"]["degrees"] = {4294967296, 4294967296, 1}; })
                .find("must multiply to the plan's 4 devices"),
            std::string::npos);
  EXPECT_NE(problem_with([](nlohmann::json& d) {
              d["strategy"]["name"] = "tensor";
            }).find("are hybrid's; this plan's strategy is 'tensor'"),
            std::string::npos);
  EXPECT_NE(problem_with([](nlohmann::json& d) { d["strategy"]["sequence_parallel"] = "yes"; })
                .find("strategy.sequence_parallel"),
            std::string::npos);
}

TEST(PlanFile, ExplicitStageCutsAreCheckedByThePartitioner) {
  const auto graph = testing::zoo_network("mlp-small", false);
  PlanSpec spec;
  spec.strategy = "pipeline";
  spec.devices = 2;
  spec.microbatches = 2;
  spec.stage_starts = {0, 5};
  const Plan plan = build_plan(spec, graph);
  // Units 0-4 (fc1..classifier) on device 0, the softmax alone on device 1.
  int on_second = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && op.device == 1) on_second += 1;
  }
  EXPECT_EQ(on_second, 2);  // probs, once per micro-batch
  spec.stage_starts = {0, 6};
  EXPECT_NE(problem_of([&] { build_plan(spec, graph); }).find("--stages"), std::string::npos);
  spec.stage_starts = {1, 3};
  EXPECT_NE(problem_of([&] { build_plan(spec, graph); }).find("must start at 0"), std::string::npos);
}

}  // namespace
}  // namespace splitscope
