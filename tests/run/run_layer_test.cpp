// The run layer (src/run/): a backend name parsed once into its enum, a
// named machine read once however often it is used, and the one place a
// request's mode picks its driver.

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "exec/mode_runtimes.hpp"
#include "run/backend.hpp"
#include "run/run_driver.hpp"
#include "run/run_target.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace run_layer_test {
namespace {

TEST(Backend, EachNameParsesToItsBackendAndPrintsBack) {
  for (const Backend backend : {Backend::kCpu, Backend::kCuda, Backend::kSim}) {
    EXPECT_EQ(parse_backend(to_string(backend)), backend);
  }
  EXPECT_EQ(to_string(Backend::kCuda), "cuda");
  EXPECT_TRUE(computes(Backend::kCpu));
  EXPECT_TRUE(computes(Backend::kCuda));
  EXPECT_FALSE(computes(Backend::kSim));
}

TEST(Backend, AnUnknownNameIsBadInputNamingTheOption) {
  try {
    parse_backend("gpu");
    FAIL() << "gpu parsed";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--backend");
    EXPECT_EQ(error.problem(), "unknown backend 'gpu'; use cpu, cuda or sim");
  }
}

TEST(NamedMachine, IsReadOnceAtItsFirstUseAndSharedByCopies) {
  int reads = 0;
  const NamedMachine named("h100-nvlink-8", [&reads](const std::string& name) {
    ++reads;
    Machine machine;
    machine.name = name;
    machine.devices = 8;
    return machine;
  });
  EXPECT_EQ(reads, 0);  // not read until used
  const NamedMachine copy = named;
  const RunTarget target{Backend::kSim, named};
  EXPECT_EQ(named.machine().name, "h100-nvlink-8");
  EXPECT_EQ(&copy.machine(), &named.machine());
  EXPECT_EQ(target.machine.machine().devices, 8);
  EXPECT_EQ(reads, 1);
  EXPECT_TRUE(target.simulated());
  EXPECT_EQ(target.backend_name(), "sim");
}

TEST(NamedMachine, AFailedReadThrowsAtEachUse) {
  int reads = 0;
  const NamedMachine named("nowhere", [&reads](const std::string& name) -> Machine {
    ++reads;
    throw InputError(name, "", "no such machine");
  });
  EXPECT_THROW(named.machine(), InputError);
  EXPECT_THROW(named.machine(), InputError);
  EXPECT_EQ(reads, 2);  // nothing kept, so the error is the same each time
}

/// Logs which driver entry ran: "R" run, "S" input stream, "P" parameter
/// server, with the warm-up and repeat counts it was given.
class RecordingExecutor final : public Executor, public InputStreamRuntime, public ParameterServerRuntime {
 public:
  std::string_view name() const override { return "fake"; }
  RunResult run(const Plan&, const RunOptions& options) override { return logged("R", options); }
  RunResult run_input_stream(const Plan&, const RunOptions& options, const InputPipelineOptions&) override {
    return logged("S", options);
  }
  RunResult run_parameter_server(const Plan&, const RunOptions& options, const ParameterServerOptions& ps) override {
    return logged("P" + std::to_string(ps.steps), options);
  }
  std::string log;

 private:
  RunResult logged(const std::string& what, const RunOptions& options) {
    log += what + std::to_string(options.warmup) + "/" + std::to_string(options.repeats) + " ";
    return {};
  }
};

Plan ps_plan() {
  Plan plan;
  plan.traits.parameter_server = true;
  return plan;
}

TEST(RunMode, EachRequestPicksOneDriver) {
  RunRequest request;
  const Plan forward;
  const Plan ps = ps_plan();
  EXPECT_EQ(run_mode(request, forward), RunMode::kForward);
  EXPECT_EQ(run_mode(request, ps), RunMode::kForward);
  request.train = true;
  EXPECT_EQ(run_mode(request, forward), RunMode::kTrainingSteps);
  EXPECT_EQ(run_mode(request, ps), RunMode::kParameterServer);
  request.train = false;
  request.input = InputPipelineOptions{};
  EXPECT_EQ(run_mode(request, forward), RunMode::kInputStream);
}

TEST(RunPlan, ForwardStreamAndParameterServerRunTheirDriver) {
  RecordingExecutor executor;
  RunRequest request;
  request.options.warmup = 2;
  request.options.repeats = 5;
  run_plan(executor, Plan{}, request);
  request.train = true;
  request.ps.steps = 7;
  run_plan(executor, ps_plan(), request);
  request.train = false;
  request.input = InputPipelineOptions{};
  run_plan(executor, Plan{}, request);
  EXPECT_EQ(executor.log, "R2/5 P72/5 S2/5 ");
}

/// A backend with no runtime for the input stream or the parameter server
/// (as cuda has none for the latter): only forward runs.
class ForwardOnlyExecutor final : public Executor {
 public:
  std::string_view name() const override { return "plain"; }
  RunResult run(const Plan&, const RunOptions&) override {
    ++runs;
    return {};
  }
  int runs = 0;
};

TEST(RunPlan, ABackendWithoutAModesRuntimeIsRefusedNamingTheBackendsThatHaveOne) {
  ForwardOnlyExecutor executor;
  RunRequest request;
  request.train = true;
  try {
    run_plan(executor, ps_plan(), request);
    FAIL() << "a ps plan ran on a backend without a parameter-server runtime";
  } catch (const UnavailableError& error) {
    EXPECT_NE(std::string(error.what()).find("the plain backend has no parameter-server runtime"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("--backend cpu"), std::string::npos) << error.what();
  }
  request.train = false;
  request.input = InputPipelineOptions{};
  try {
    run_plan(executor, Plan{}, request);
    FAIL() << "an input stream ran on a backend without one";
  } catch (const UnavailableError& error) {
    EXPECT_NE(std::string(error.what()).find("the plain backend has no input pipeline"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(executor.runs, 0);
  request.input.reset();
  run_plan(executor, Plan{}, request);
  EXPECT_EQ(executor.runs, 1);
}

TEST(RunPlans, TrainingStepsAreTimedRepeatsWithoutWarmUp) {
  // The executor keeps nothing prepared, so each plan runs whole, one after the other.
  RecordingExecutor executor;
  const std::vector<std::shared_ptr<const Plan>> plans{std::make_shared<const Plan>(),
                                                       std::make_shared<const Plan>()};
  std::ostringstream out;
  Progress progress(out, false);
  RunRequest request;
  request.options.warmup = 1;
  request.options.repeats = 3;
  run_plans(executor, plans, request, progress);
  EXPECT_EQ(executor.log, "R1/3 R1/3 ");
  executor.log.clear();
  request.train = true;
  request.steps = 4;
  run_plans(executor, plans, request, progress);
  EXPECT_EQ(executor.log, "R0/4 R0/4 ");
  executor.log.clear();
  request.train = false;
  request.input = InputPipelineOptions{};
  run_plans(executor, plans, request, progress);
  EXPECT_EQ(executor.log, "S1/3 S1/3 ");
}

}  // namespace
}  // namespace run_layer_test
}  // namespace splitscope
