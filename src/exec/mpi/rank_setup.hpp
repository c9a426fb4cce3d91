#pragma once
/// \file
/// What every kind of run of a rank of an MPI job sets up alike: the checks
/// of its options, its threads (the ranks on one host share its cores) and
/// what the report says it ran on.

#include "exec/cpu/thread_config.hpp"
#include "exec/executor.hpp"
#include "exec/mpi/mpi_session.hpp"

namespace splitscope {

/// InputError (exit 2) for options a rank cannot take (the cpu backend's,
/// --jitter), for a plan with more devices than the job has ranks, and for
/// one too large for this host's memory when every rank runs on it.
void check_rank_run_options(const Plan& plan, const RunOptions& options, const MpiSession& session);

/// A rank's threads: one inter-op thread (a rank is one device), intra-op
/// threads by default this host's hardware threads over the ranks on it.
ThreadConfig rank_threads(const RunOptions& options, const MpiSession& session);

/// The report's RunInfo of a run over the job's ranks: device_mode "mpi",
/// the rank -> host map, the MPI library, the clock alignment's residual.
RunInfo mpi_run_info(const Plan& plan, const MpiSession& session, const ThreadConfig& threads);

}  // namespace splitscope
