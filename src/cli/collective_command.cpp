// `splitscope collective all-reduce|all-gather|reduce-scatter|broadcast|send-recv --devices N --bytes
// LIST [--json]` (and run's execution options): nccl-tests' table (size,
// time, algbw, busbw) for one collective over a range of sizes, measured on
// cpu or cuda or predicted on a simulated machine. Each size is a plan of
// its own (partitioners/collective_plan.hpp) run by the same executors and
// simulator as any plan, so the figures are the ones model-parallel plans pay.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/byte_sizes.hpp"
#include "cli/command.hpp"
#include "cli/execution_options.hpp"
#include "cli/host_machine.hpp"
#include "cli/launch_scope.hpp"
#include "exec/cuda_backend.hpp"
#include "partitioners/collective_plan.hpp"
#include "report/makespan_stats.hpp"
#include "report/noise_warning.hpp"
#include "run/run_driver.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/network/nccl_protocol.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

struct CollectiveOptions {
  std::string op;
  int devices = 2;
  std::vector<std::string> bytes{"1K:64M"};
  bool json = false;
  ExecutionOptions execution;
  std::string launcher;
};

struct Row {
  int64_t bytes = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string nccl;  ///< sim: NCCL's algorithm/protocol for this size; empty for plain sends
};

/// Which algorithm runs `test`, and why, for the table's heading.
std::string algorithm_of(CollectiveTest test, bool simulated) {
  switch (test) {
    case CollectiveTest::kAllReduce:
      return simulated ? "NCCL's ring (reduce-scatter then all-gather, 2(N-1) steps) or tree (a chain in each node, "
                         "a binary tree across nodes), whichever NCCL's tuning model predicts faster at each size "
                         "(column nccl: algorithm/protocol); a tree runs as the ring's sends paced to the tree's time"
                       : "ring (reduce-scatter then all-gather, 2(N-1) steps; these backends run no tree)";
    case CollectiveTest::kAllGather: return "ring (N-1 steps)";
    case CollectiveTest::kReduceScatter: return "ring (N-1 steps, each adding the receiver's chunk)";
    case CollectiveTest::kBroadcast:
      return "ring from device 0, pipelined in chunks of 512 KiB (NCCL's ring step), N-2 + chunks steps";
    case CollectiveTest::kSendRecv: return "every device copies to the next, all at once";
  }
  return "";
}

/// Under --launcher mpi each collective is the MPI library's own.
std::string mpi_algorithm_of(CollectiveTest test) {
  switch (test) {
    case CollectiveTest::kAllReduce: return "MPI_Iallreduce over the ranks (the MPI library picks the algorithm)";
    case CollectiveTest::kAllGather: return "MPI_Iallgatherv over the ranks (the MPI library picks the algorithm)";
    case CollectiveTest::kReduceScatter:
      return "MPI_Ireduce_scatter over the ranks (the MPI library picks the algorithm)";
    case CollectiveTest::kBroadcast: return "MPI_Ibcast from rank 0 (the MPI library picks the algorithm)";
    case CollectiveTest::kSendRecv: return "every rank sends to the next with MPI_Isend, all at once";
  }
  return "";
}

int collective_command(const CollectiveOptions& options, Backend backend, const LaunchScope& launch) {
  const CollectiveTest test = parse_collective_test(options.op, "collective");
  const ExecutionOptions& execution = options.execution;
  if (options.devices < 2) {
    throw InputError("--devices", "", fmt::format("a collective needs 2 or more devices, got {}", options.devices));
  }
  const std::vector<int64_t> requested = parse_byte_sizes(options.bytes, "--bytes");
  const RunTarget target = resolve_target(execution, backend);
  check_backend_options(execution, backend, options.devices);
  const std::unique_ptr<Executor> executor =
      launch.launched() ? launch.make_executor() : make_executor(execution, target, options.devices);
  const bool simulated = target.simulated();
  const std::string algorithm = launch.launched() ? mpi_algorithm_of(test) : algorithm_of(test, simulated);
  // The simulator's NCCL choice per size (sim/network/nccl_protocol.hpp), said beside its time.
  const Machine* machine = simulated ? &target.machine.machine() : nullptr;
  RunRequest run;
  run.options = run_options(execution);
  run.options.want_output = false;

  std::vector<Row> rows;
  std::vector<int64_t> skipped;
  std::vector<RepeatTimes> measured_times;
  for (const int64_t request : requested) {
    const int64_t bytes = collective_bytes(test, options.devices, request);
    if (bytes == 0) {
      skipped.push_back(request);
      continue;
    }
    const Plan plan = collective_plan(test, options.devices, bytes);
    const RunResult result = run_plan(*executor, plan, run);
    Row row;
    row.bytes = bytes;
    const MakespanStats times = makespan_stats(result.timelines);
    row.time_us = times.median_ms * 1e3;
    if (result.info.measured) measured_times.push_back({fmt::format("{} B", bytes), times.repeat_ms});
    row.algbw_gbps = row.time_us > 0 ? static_cast<double>(bytes) / (row.time_us * 1e-6) / 1e9 : 0;
    row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(test, options.devices);
    if (machine) {
      for (const PlanOp& op : plan.ops) {
        if (op.role != OpRole::kCollective) continue;
        if (const auto choice = nccl_choice_on(plan, op, *machine)) {
          row.nccl = fmt::format("{}/{}", to_string(choice->algorithm), to_string(choice->protocol));
        }
      }
    }
    rows.push_back(row);
  }
  if (rows.empty()) {
    throw InputError("--bytes", "",
                     fmt::format("every size is below one float32 per device ({} bytes)", 4 * options.devices));
  }

  if (launch.writes()) {
    if (const auto warning = noise_warning(measured_times, "the times may be the load's, not the collective's; close "
                                                           "other programs, or raise --repeat")) {
      fmt::print(stderr, "{}\n", *warning);
    }
  }
  if (options.json) {
    nlohmann::ordered_json document;
    document["backend"] = std::string(to_string(backend));
    if (simulated) document["machine"] = execution.machine;
    document["algorithm"] = algorithm;
    document["rows"] = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      nlohmann::ordered_json json_row{{"op", to_string(test)}, {"devices", options.devices}, {"bytes", row.bytes},
                                      {"time_us", row.time_us}, {"algbw_GBps", row.algbw_gbps},
                                      {"busbw_GBps", row.busbw_gbps}};
      if (!row.nccl.empty()) json_row["nccl"] = row.nccl;
      document["rows"].push_back(std::move(json_row));
    }
    std::cout << document.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{} on {}, {}{}: {}\n", to_string(test), counted(options.devices, "device"),
                           simulated ? "simulated on " : "measured on ",
                           simulated ? execution.machine
                                     : std::string(to_string(backend)) + (launch.launched() ? " (mpi)" : ""),
                           algorithm);
  const bool nccl_column = std::any_of(rows.begin(), rows.end(), [](const Row& row) { return !row.nccl.empty(); });
  std::cout << fmt::format("{:>14} {:>12} {:>12} {:>12}{}\n", "size (B)", "time (us)", "algbw (GB/s)",
                           "busbw (GB/s)", nccl_column ? fmt::format(" {:>12}", "nccl") : "");
  for (const Row& row : rows) {
    std::cout << fmt::format("{:>14} {:>12.2f} {:>12.2f} {:>12.2f}{}\n", row.bytes, row.time_us, row.algbw_gbps,
                             row.busbw_gbps, nccl_column ? fmt::format(" {:>12}", row.nccl) : "");
  }
  for (const int64_t request : skipped) {
    std::cout << fmt::format("skipped: {} B is less than one float32 per device\n", request);
  }
  std::cout << fmt::format("busbw = algbw x {:.4g} (nccl-tests' factor for {} over {}); time: the median of {} run{}\n",
                           bus_bandwidth_factor(test, options.devices), to_string(test), options.devices,
                           simulated ? 1 : execution.repeats, simulated || execution.repeats == 1 ? "" : "s");
  return 0;
}

int collective_command(const CollectiveOptions& options) {
  const Backend backend = measuring_backend(options.execution.backend, options.launcher);
  LaunchScope launch(options.launcher, backend);
  return launch.run([&] { return collective_command(options, backend, launch); });
}

}  // namespace

Command add_collective_command(CLI::App& app) {
  auto options = std::make_shared<CollectiveOptions>();
  CLI::App* sub = app.add_subcommand(
      "collective", "Time one collective over a range of sizes, as nccl-tests does (size, time, algbw, busbw)");
  sub->add_option("op", options->op, "all-reduce | all-gather | reduce-scatter | broadcast | send-recv")->required();
  sub->add_option("--devices,-n", options->devices, "devices taking part")->capture_default_str();
  sub->add_option("--bytes", options->bytes,
                  "sizes: one (64M), a comma list (1K,1M), or a range MIN:MAX of doublings; K, M, G are 1024^1..3")
      ->delimiter(',')
      ->capture_default_str();
  add_launcher_option(*sub, options->launcher);
  sub->add_flag("--json", options->json, "print {\"rows\": [{op, devices, bytes, time_us, algbw_GBps, busbw_GBps, nccl (sim)}]}");
  add_execution_options(*sub, options->execution, "cuda if a GPU is present, else cpu");
  // The shared texts speak of plans and compare; a collective has sizes, not a batch.
  sub->get_option("--repeat")->description("timed runs of each size (the median is reported)");
  sub->remove_option(sub->get_option("--batch"));
  return {sub, [options](const std::vector<std::string>&) { return collective_command(*options); }};
}

}  // namespace splitscope::cli
