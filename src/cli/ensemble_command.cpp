// `splitscope ensemble NET1 NET2 ... [--devices N] [--deadline-ms T]
// [--straggler K:MS] [--report FILE]` (and run's execution options): the
// members answer one input batch, each on its own device (member k on device
// k mod N), and an aggregator averages their outputs, dropping members that
// miss the deadline or fail (exec/ensemble_run.hpp). The report sets the
// ensemble's latency against the members run one after another on one device.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/host_machine.hpp"
#include "cli/network_loading.hpp"
#include "cli/precision_option.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/ensemble_run.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/errors.hpp"
#include "util/output_batch.hpp"

namespace splitscope::cli {
namespace {

struct EnsembleOptions {
  std::vector<std::string> networks;
  std::optional<int> devices;  ///< default: one per member
  std::optional<double> deadline_ms;
  std::vector<std::string> stragglers;
  std::string report;
  ExecutionOptions execution;
};

/// "K:MS" -> (member K, MS milliseconds), checked against the member count.
std::pair<size_t, double> parse_straggler(const std::string& text, size_t members) {
  const auto colon = text.find(':');
  size_t member = 0;
  double delay = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    size_t used = 0;
    member = std::stoul(text.substr(0, colon), &used);
    if (used != colon || text.front() == '-') throw std::invalid_argument("member");
    const std::string ms = text.substr(colon + 1);
    delay = std::stod(ms, &used);
    if (used != ms.size()) throw std::invalid_argument("delay");
  } catch (const std::exception&) {
    throw InputError("--straggler", "", "'" + text + "' is not K:MS (member K, counted from 0, delayed by MS ms), e.g. 1:50");
  }
  if (member >= members) {
    throw InputError("--straggler", "", fmt::format("member {} does not exist: the ensemble has {} members, 0 to {}",
                                                    member, members, members - 1));
  }
  if (!(delay >= 0) || delay > 3.6e6) {
    throw InputError("--straggler", "", fmt::format("the delay must be 0 to 3600000 ms, got {}", text.substr(colon + 1)));
  }
  return {member, delay};
}

nlohmann::ordered_json report_json(const EnsembleResult& result, Backend backend, const EnsembleOptions& options,
                                   int devices) {
  nlohmann::ordered_json document;
  document["schema"] = "splitscope.ensemble/1";
  document["backend"] = std::string(to_string(backend));
  if (backend == Backend::kSim) document["machine"] = options.execution.machine;
  document["precision"] = to_string(precision_option(options.execution.precision));
  document["measured"] = result.measured;
  document["devices"] = devices;
  document["deadline_ms"] = options.deadline_ms ? nlohmann::ordered_json(*options.deadline_ms) : nullptr;
  document["members"] = nlohmann::ordered_json::array();
  for (const MemberOutcome& member : result.members) {
    nlohmann::ordered_json entry{{"network", member.network},     {"device", member.device},
                                 {"latency_ms", member.latency_ms}, {"used", member.used},
                                 {"alone_ms", member.alone_ms}};
    if (!member.dropped.empty()) entry["dropped"] = member.dropped;
    document["members"].push_back(entry);
  }
  document["ensemble_latency_ms"] = result.ensemble_latency_ms;
  document["sequential_ms"] = result.sequential_ms;
  document["speedup"] = result.speedup();
  return document;
}

void print_table(const EnsembleResult& result, Backend backend, const EnsembleOptions& options, int devices) {
  // The default precision reads as it always did; another says so, as run's first line does.
  const Precision precision = precision_option(options.execution.precision);
  const std::string at = precision == Precision::kFp32 ? "" : fmt::format(", precision {}", to_string(precision));
  std::cout << fmt::format("ensemble of {} on {} device{}{}, {}{}{}\n\n", result.members.size(), devices,
                           devices == 1 ? "" : "s", at, result.measured ? "measured on " : "predicted on ",
                           backend == Backend::kSim ? options.execution.machine : std::string(to_string(backend)),
                           options.deadline_ms ? fmt::format(", deadline {:.4g} ms", *options.deadline_ms) : "");
  std::cout << fmt::format("{:<3} {:<20} {:>6} {:>12} {:>12}  {}\n", "#", "member", "device", "latency", "alone",
                           "answer");
  for (size_t m = 0; m < result.members.size(); ++m) {
    const MemberOutcome& member = result.members[m];
    std::cout << fmt::format("{:<3} {:<20} {:>6} {:>9.3f} ms {:>9.3f} ms  {}\n", m, member.network, member.device,
                             member.latency_ms, member.alone_ms, member.used ? "used" : "dropped: " + member.dropped);
  }
  std::cout << fmt::format("\nensemble answered at {:.3f} ms; the members one after another on one device: {:.3f} ms "
                           "({:.2f}x)\n",
                           result.ensemble_latency_ms, result.sequential_ms, result.speedup());
  std::cout << "latency: from the request to the member's output (its run's makespan, after any --straggler "
               "delay and the members before it on its device); alone: its run with the device to itself, the "
               "median of the timed repeats\n";
}

int ensemble_command(const EnsembleOptions& options) {
  const ExecutionOptions& execution = options.execution;
  const Backend backend = chosen_backend(execution, Backend::kCpu);
  if (options.networks.size() < 2) {
    throw InputError("ensemble", "", "an ensemble needs two or more networks, e.g. splitscope ensemble mlp-small mlp-small");
  }
  const int devices = options.devices.value_or(static_cast<int>(options.networks.size()));
  if (devices < 1 || devices > static_cast<int>(options.networks.size())) {
    throw InputError("--devices", "", fmt::format("must be 1 to {} (one device per member at most), got {}",
                                                  options.networks.size(), devices));
  }
  // From a microsecond to an hour: a deadline outside is a typo, and its speedup a number of 300 digits.
  if (options.deadline_ms && !(*options.deadline_ms >= 1e-3 && *options.deadline_ms <= 3.6e6)) {
    throw InputError("--deadline-ms", "",
                     fmt::format("must be from 0.001 to 3600000 ms, got {}", *options.deadline_ms));
  }
  std::vector<std::string> inputs;
  for (const std::string& network : options.networks) inputs.push_back(input_file(ZooShelf::kNetworks, network));
  inputs.push_back(input_file(ZooShelf::kMachines, execution.machine));
  check_command_outputs({{"--report", options.report}}, inputs);

  const RunTarget target = resolve_target(execution, backend);
  std::vector<EnsembleMember> members;
  std::shared_ptr<const Graph> first;
  for (size_t m = 0; m < options.networks.size(); ++m) {
    const auto graph = load_network(options.networks[m], execution.batch);
    if (first) {
      // One request for all: the same named inputs, batch and output to average.
      const auto inputs = [](const Graph& g) {
        std::string text;
        for (const NetworkInput& input : g.model().inputs) text += (text.empty() ? "" : ", ") + input.name + " " + to_string(input.shape);
        return text;
      };
      if (graph->batch() != first->batch() || graph->model().output_shape() != first->model().output_shape() ||
          inputs(*graph) != inputs(*first)) {
        throw InputError(options.networks[m], "",
                         fmt::format("member {} takes {} at batch {} and answers {}, but member 0 ({}) takes {} at "
                                     "batch {} and answers {}; members must share their inputs, batch and output "
                                     "shape (--batch sets one batch for all)",
                                     m, inputs(*graph), graph->batch(), to_string(graph->model().output_shape()),
                                     first->name(), inputs(*first), first->batch(),
                                     to_string(first->model().output_shape())));
      }
    } else {
      first = graph;
    }
    EnsembleMember member;
    member.network = graph->name();
    member.device = static_cast<int>(m) % devices;
    member.plan = make_plan(*make_partitioner("single"), graph, partition_options(execution, target, 1, 1));
    members.push_back(std::move(member));
  }
  for (const std::string& text : options.stragglers) {
    const auto [member, delay] = parse_straggler(text, members.size());
    members[member].delay_ms += delay;
  }

  // Device 0's executor, made now: making it refuses what the backend cannot run before anything runs.
  std::unique_ptr<Executor> device_0 = make_executor(execution, target, devices, 0);
  if (backend == Backend::kCuda && !execution.virtual_devices && devices > cuda_gpu_count()) {
    throw InputError("--devices", "",
                     fmt::format("{} devices are {} GPUs (one per device), and this machine has {}; add --virtual to "
                                 "carve {} devices out of one GPU, or give --devices {}",
                                 devices, devices, cuda_gpu_count(), devices, cuda_gpu_count()));
  }
  if (backend == Backend::kSim) {
    const int machine_devices = target.machine.machine().devices;
    if (devices > machine_devices) {
      throw InputError("--devices", "", fmt::format("{} has {} devices, so it cannot give {} members one each; use "
                                                    "--devices {} (members then share devices in turn)",
                                                    execution.machine, machine_devices, devices, machine_devices));
    }
  }
  RunOptions run = run_options(execution);
  if (backend == Backend::kCpu && run.intra_op_threads == 0) {
    // Every device's members run at once: share the cores as a plan over `devices` devices would.
    run.intra_op_threads = std::max(1, read_host_info().hardware_threads / devices);
  }
  // A member is a one-device plan. On cuda, device d's members run on GPU d,
  // or (--virtual) on partition d of the GPU carved into `devices`.
  const ExecutorFactory member_executor = [&](int device) {
    if (device == 0 && device_0 != nullptr) return std::move(device_0);
    return make_executor(execution, target, devices, device);
  };
  const EnsembleResult result = run_ensemble(members, devices, member_executor, run, options.deadline_ms);

  OutputBatch files;
  files.add("--report", options.report, report_json(result, backend, options, devices).dump(2) + "\n");
  publish_outputs(files, options.execution.quiet);
  print_table(result, backend, options, devices);
  if (std::none_of(result.members.begin(), result.members.end(), [](const MemberOutcome& m) { return m.used; })) {
    std::cerr << "error: no member answered in time, so the ensemble has no answer\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Command add_ensemble_command(CLI::App& app) {
  auto options = std::make_shared<EnsembleOptions>();
  CLI::App* sub = app.add_subcommand(
      "ensemble", "Several networks answer one batch, each on its own device; an aggregator averages them");
  sub->add_option("NETWORKS", options->networks, "two or more network files or zoo names")->required();
  sub->add_option("--devices,-n", options->devices, "devices (default: one per member; member k runs on k mod N)");
  sub->add_option("--deadline-ms", options->deadline_ms,
                  "answer with the members done by then; the others are dropped");
  sub->add_option("--straggler", options->stragglers, "K:MS holds member K (from 0) back by MS ms; repeatable")
      ->delimiter(',');
  sub->add_option("--report", options->report,
                  "write the JSON report: members [{network, device, latency_ms, used}], ensemble_latency_ms");
  add_execution_options(*sub, options->execution, "cpu");
  add_precision_option(*sub, options->execution);
  return {sub, [options](const std::vector<std::string>&) { return ensemble_command(*options); }};
}

}  // namespace splitscope::cli
