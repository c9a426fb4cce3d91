#include "exec/mpi/mpi_executor.hpp"

#include <algorithm>
#include <chrono>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/mpi/mpi_check.hpp"
#include "exec/mpi/mpi_ps_run.hpp"
#include "exec/mpi/rank_setup.hpp"
#include "exec/mpi/rank_tasks.hpp"
#include "exec/mpi/rank_timeline.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

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
    into.info = mpi_run_info(plan_, *session_, threads_);
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
  check_rank_run_options(plan, options, *session_);
  use_single_threaded_blas();
  return std::make_unique<MpiPreparedRun>(session_, plan, options);
}

RunResult MpiExecutor::run(const Plan& plan, const RunOptions& options) { return run_prepared(*this, plan, options); }

RunResult MpiExecutor::run_parameter_server(const Plan& plan, const RunOptions& options,
                                            const ParameterServerOptions& ps) {
  require_supported(*this, plan);
  check_rank_run_options(plan, options, *session_);
  use_single_threaded_blas();
  return run_mpi_parameter_server(*session_, plan, options, ps);
}

}  // namespace splitscope
