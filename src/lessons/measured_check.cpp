#include "lessons/measured_check.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "exec/cpu/cpu_executor.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "util/json_text.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "report/makespan_stats.hpp"

namespace splitscope {
namespace {

Plan measured_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices) {
  PartitionOptions options;
  options.devices = devices;
  Plan plan = make_plan(*make_partitioner(strategy), graph, options);
  check(plan);
  return plan;
}

}  // namespace

MeasuredPair measure_on_cpu(const std::shared_ptr<const Graph>& graph, const std::string& baseline,
                            const std::string& compared, int devices) {
  const Plan one = measured_plan(graph, baseline, 1);
  const Plan split = measured_plan(graph, compared, devices);
  RunOptions run;
  run.warmup = 1;
  run.repeats = 1;
  run.seed = 1;
  run.want_output = false;
  CpuExecutor executor;
  const std::unique_ptr<PreparedRun> first = executor.prepare(one, run);
  const std::unique_ptr<PreparedRun> second = executor.prepare(split, run);
  RunResult first_runs, second_runs;
  first->run(1, 0, first_runs);
  second->run(1, 0, second_runs);
  for (int i = 0; i < kMeasuredRepeats; ++i) {
    first->run(0, 1, first_runs);
    second->run(0, 1, second_runs);
  }
  MeasuredPair pair;
  pair.baseline_ms = makespan_stats(first_runs.timelines).median_ms;
  pair.compared_ms = makespan_stats(second_runs.timelines).median_ms;
  pair.repeats = kMeasuredRepeats;
  return pair;
}

std::shared_ptr<const Graph> measured_graph(const std::string& network, int64_t from, int64_t to, int64_t batch,
                                            bool train) {
  nlohmann::json doc = nlohmann::json::parse(read_input_file(resolve_zoo_file(ZooShelf::kNetworks, network)));
  const auto cut = [&](nlohmann::json& value) {
    if (value.is_number_integer() && value.get<int64_t>() == from) value = to;
  };
  for (auto& extent : doc["input"]) cut(extent);
  for (auto& layer : doc["layers"]) {
    for (const char* key : {"units", "hidden"}) {
      if (layer.contains(key)) cut(layer[key]);
    }
  }
  doc["batch"] = batch;
  auto forward = std::make_shared<const Graph>(lower(parse_model_text(doc.dump(), network + " (measured)")));
  if (!train) return forward;
  return std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
}

MeasuredLesson measured_lesson(const std::string& network, const std::shared_ptr<const Graph>& graph,
                               const std::string& baseline, const std::string& compared, int devices,
                               const std::function<LessonVerdict(const MeasuredPair&)>& verdict_of) {
  const MeasuredPair pair = measure_on_cpu(graph, baseline, compared, devices);
  MeasuredLesson lesson;
  lesson.setup = fmt::format("{}, {} on {} devices (threads) against {} on one, on this machine's cpu backend, "
                             "medians of {} runs in turns",
                             network, compared, devices, baseline, pair.repeats);
  lesson.verdict = verdict_of(pair);
  lesson.why = fmt::format("{} runs at {:.2f}x {} ({:.3f} ms against {:.3f} ms)", compared, pair.speedup(), baseline,
                           pair.compared_ms, pair.baseline_ms);
  lesson.numbers = {{"network", network},
                    {"devices", devices},
                    {"baseline_ms", pair.baseline_ms},
                    {"compared_ms", pair.compared_ms},
                    {"speedup", pair.speedup()},
                    {"repeats", pair.repeats}};
  return lesson;
}

}  // namespace splitscope
