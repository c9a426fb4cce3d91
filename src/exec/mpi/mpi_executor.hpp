#pragma once
/// \file
/// The cpu backend as one rank of an MPI job (mpi_launch.hpp): runs rank r's
/// tasks (rank_tasks.hpp) of a plan, and after each run merges every rank's
/// span times into one Timeline on rank 0's clock (rank_timeline.hpp), the
/// same on every rank. Reads RunOptions as the CpuExecutor does; intra-op
/// threads default to this host's hardware threads over the ranks on it.

#include <memory>

#include "exec/executor.hpp"
#include "exec/mode_runtimes.hpp"
#include "exec/mpi/mpi_session.hpp"

namespace splitscope {

class MpiExecutor final : public Executor, public ParameterServerRuntime {
 public:
  explicit MpiExecutor(std::shared_ptr<MpiSession> session) : session_(std::move(session)) {}

  std::string_view name() const override { return "cpu"; }
  std::string unsupported(const Plan& plan, const PlanOp& op) const override;
  /// InputError where the plan has more devices than the job has ranks.
  RunResult run(const Plan& plan, const RunOptions& options) override;
  std::unique_ptr<PreparedRun> prepare(const Plan& plan, const RunOptions& options) override;
  /// Workers and shards as ranks (mpi_ps_run.hpp).
  RunResult run_parameter_server(const Plan& plan, const RunOptions& options,
                                 const ParameterServerOptions& ps) override;

 private:
  std::shared_ptr<MpiSession> session_;
};

}  // namespace splitscope
