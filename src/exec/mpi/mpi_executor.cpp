#include "exec/mpi/mpi_executor.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <set>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/mpi/mpi_check.hpp"
#include "exec/mpi/rank_tasks.hpp"
#include "exec/mpi/rank_timeline.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

void check_options(const Plan& plan, const RunOptions& options, const MpiSession& session) {
  if (options.jitter_sigma != 0) {
    throw InputError("--jitter", "",
                     "draws noise on simulated op times; under --launcher mpi hold a rank back with --straggler D:MS");
  }
  check_cpu_run_options(plan, options);
  if (plan.devices > session.size()) {
    throw InputError("--devices", "",
                     fmt::format("the {} plan has {} devices but this MPI job has {} ranks (one device each); "
                                 "start it with mpirun -np {}",
                                 plan.strategy, plan.devices, session.size(), plan.devices));
  }
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  std::string version(text, static_cast<size_t>(std::max(0, length)));
  if (const size_t line = version.find_first_of("\n,"); line != std::string::npos) version.resize(line);
  return version;
}

/// "0 host-a, 1 host-a, 2 host-b"
std::string rank_hosts(const std::vector<std::string>& hosts) {
  std::string text;
  for (size_t rank = 0; rank < hosts.size(); ++rank) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", rank, hosts[rank]);
  }
  return text;
}

class MpiPreparedRun final : public PreparedRun {
 public:
  MpiPreparedRun(std::shared_ptr<MpiSession> session, const Plan& plan, const RunOptions& options)
      : session_(std::move(session)),
        plan_(plan),
        options_(options),
        threads_(rank_threads(options, *session_)),
        setup_threads_(threads_.intra_op),
        buffers_(plan, [&plan, rank = session_->rank()](const Value& value) { return rank_holds(plan, value, rank); }),
        weights_(*plan.graph, options.seed, setup_threads_),
        tasks_(plan, *session_, buffers_, weights_, options.straggler),
        scheduler_(scheduler_config(threads_)),
        deadline_(run_deadline(options)) {
    fill_network_inputs(plan, options.seed, buffers_);
  }

  void run(int warmup, int repeats, RunResult& into) override {
    for (int index = -warmup; index < repeats; ++index) {
      if (options_.on_repeat) options_.on_repeat(index, repeats);
      Timeline timeline = run_once();
      if (index >= 0) into.timelines.push_back(std::move(timeline));
    }
    into.info = run_info();
  }

  /// Rank 0 gathers the output's parts from their ranks and assembles it;
  /// then every rank gets it, so that each goes on alike.
  HostTensor output() override {
    const int rank = session_->rank();
    const int tag = session_->largest_tag();
    for (int id : plan_.outputs) {
      const Value& value = plan_.value(id);
      if (value.device == 0) continue;
      const ChannelBlock block = buffers_.block(id);
      const int count = static_cast<int>(value_layout(plan_, value).floats());
      if (rank == value.device) {
        check_mpi(MPI_Send(block.data, count, MPI_FLOAT, 0, tag, session_->world()), "MPI_Send (output part)");
      } else if (rank == 0) {
        check_mpi(MPI_Recv(block.data, count, MPI_FLOAT, value.device, tag, session_->world(), MPI_STATUS_IGNORE),
                  "MPI_Recv (output part)");
      }
    }
    HostTensor output;
    if (rank == 0) output = assemble_output(plan_, buffers_);
    int64_t floats = static_cast<int64_t>(output.data.size());
    int64_t dims = static_cast<int64_t>(output.shape.size());
    check_mpi(MPI_Bcast(&floats, 1, MPI_INT64_T, 0, session_->world()), "MPI_Bcast (output size)");
    check_mpi(MPI_Bcast(&dims, 1, MPI_INT64_T, 0, session_->world()), "MPI_Bcast (output rank)");
    output.shape.resize(static_cast<size_t>(dims));
    output.data.resize(static_cast<size_t>(floats));
    check_mpi(MPI_Bcast(output.shape.data(), static_cast<int>(dims), MPI_INT64_T, 0, session_->world()),
              "MPI_Bcast (output shape)");
    check_mpi(MPI_Bcast(output.data.data(), static_cast<int>(floats), MPI_FLOAT, 0, session_->world()),
              "MPI_Bcast (output)");
    return output;
  }

 private:
  static ThreadConfig rank_threads(const RunOptions& options, const MpiSession& session) {
    // The ranks on one host share its cores as the devices of a one-process run share them.
    ThreadConfig config = resolve_threads(options, session.ranks_on_this_host(), read_host_info().hardware_threads);
    config.inter_op = 1;
    return config;
  }

  static SchedulerConfig scheduler_config(const ThreadConfig& threads) {
    SchedulerConfig config;
    config.devices = 1;
    config.compute_workers = 1;
    config.intra_op_threads = threads.intra_op;
    config.copy_lanes = {Lane::kCopyIn, Lane::kCopyOut, Lane::kHost};
    return config;
  }

  Timeline run_once() {
    check_mpi(MPI_Barrier(session_->world()), "MPI_Barrier (run start)");
    MpiDeadline wait_deadline;
    if (deadline_) wait_deadline = std::chrono::steady_clock::now() + *deadline_;
    tasks_.post_receives(wait_deadline);
    const std::vector<TaskTiming> timings = scheduler_.run(tasks_.graph(), deadline_);
    tasks_.finish_sends();
    // Each rank's clock starts when its workers are awake; on rank 0's clock,
    // the run starts at the earliest of them.
    const double start = std::chrono::duration<double, std::micro>(scheduler_.last_run_start().time_since_epoch()).count() +
                         session_->clock_offset_us();
    double zero = start;
    check_mpi(MPI_Allreduce(&start, &zero, 1, MPI_DOUBLE, MPI_MIN, session_->world()), "MPI_Allreduce (run start)");
    const std::vector<double> mine = rank_span_times(tasks_.spans().size(), tasks_.task_spans(), timings, start - zero);
    std::vector<double> all(mine.size() * static_cast<size_t>(session_->size()));
    check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                            static_cast<int>(mine.size()), MPI_DOUBLE, session_->world()),
              "MPI_Allgather (span times)");
    return merge_rank_span_times(tasks_.spans(), all);
  }

  RunInfo run_info() const {
    const HostInfo host = read_host_info();
    RunInfo info;
    info.backend = "cpu";
    info.measured = true;
    info.device_mode = "mpi";
    const std::set<std::string> machines(session_->hosts().begin(), session_->hosts().end());
    for (const std::string& machine : machines) info.machine_name += (info.machine_name.empty() ? "" : ", ") + machine;
    info.device_name = host.cpu_model;
    if (host.memory_bytes > 0) {
      info.device_memory_bytes.assign(static_cast<size_t>(plan_.devices),
                                      host.memory_bytes / std::max(1, session_->ranks_on_this_host()));
    }
    info.facts = {
        {"ranks", rank_hosts(session_->hosts())},
        {"mpi", mpi_library_version()},
        {"clock alignment", fmt::format("rank 0's steady clock, within {:.1f} us (half the best ping-pong)",
                                        session_->clock_residual_us())},
        {"intra-op threads", fmt::format("{} a rank", threads_.intra_op)},
        {"hardware threads", std::to_string(threads_.hardware_threads)},
        {"blas", blas_description()},
        {"dtype", "fp32"},
    };
    return info;
  }

  std::shared_ptr<MpiSession> session_;
  const Plan& plan_;
  RunOptions options_;
  ThreadConfig threads_;
  IntraOpPool setup_threads_;
  ValueBuffers buffers_;
  WeightStore weights_;
  RankTasks tasks_;
  Scheduler scheduler_;
  std::optional<std::chrono::microseconds> deadline_;
};

}  // namespace

std::string MpiExecutor::unsupported(const Plan& plan, const PlanOp& op) const {
  return CpuExecutor().unsupported(plan, op);
}

std::unique_ptr<PreparedRun> MpiExecutor::prepare(const Plan& plan, const RunOptions& options) {
  require_supported(*this, plan);
  check_options(plan, options, *session_);
  if (std::set<std::string>(session_->hosts().begin(), session_->hosts().end()).size() == 1) {
    check_fits_in_host_memory(plan);  // every rank on this host: the whole plan shares its memory
  }
  use_single_threaded_blas();
  return std::make_unique<MpiPreparedRun>(session_, plan, options);
}

RunResult MpiExecutor::run(const Plan& plan, const RunOptions& options) { return run_prepared(*this, plan, options); }

RunResult MpiExecutor::run_parameter_server(const Plan& plan, const RunOptions& options,
                                            const ParameterServerOptions& ps) {
  (void)plan;
  (void)options;
  (void)ps;
  throw UnavailableError(
      "--strategy ps under --launcher mpi: its workers and shards are threads of one process, not MPI ranks, yet; "
      "run it without mpirun (--backend cpu), or predict it (--backend sim)");
}

}  // namespace splitscope
