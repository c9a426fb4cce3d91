#pragma once
/// \file
/// Parameter-server training (`--strategy ps`, exec/parameter_server.hpp)
/// as an MPI job: rank w < N is worker w (cpu/ps_worker.hpp), rank N + k
/// shard k (cpu/parameter_shard.hpp); `mpirun -np N+K`. The protocol of the
/// one-process run (cpu/ps_training.hpp), as messages:
/// - a worker asks each shard for its weights, giving the version it last
///   pulled; the shard answers once its ledger lets that worker pull (sync:
///   once the update the worker waits for is applied) with its version and
///   its weights, or with "finished";
/// - the worker runs its part of the plan, then pushes each shard the
///   gradient of that shard's weights (with the version it pulled and its
///   rows) and waits for the shard's acknowledgement: a push returns once
///   the shard has dealt with it, as in one process, so one async worker is
///   sync;
/// - when it stops, it says so to each shard; a shard serves until every
///   worker has.
/// Every wait ends at --timeout-ms after it began (a dead peer fails the
/// run, naming what was awaited). At the end every rank gathers what each
/// recorded (spans on rank 0's clock, step losses, shard tallies, the
/// workers' output rows) and makes the same RunResult.

#include "exec/executor.hpp"
#include "exec/parameter_server.hpp"
#include "exec/mpi/mpi_session.hpp"

namespace splitscope {

RunResult run_mpi_parameter_server(const MpiSession& session, const Plan& plan, const RunOptions& options,
                                   const ParameterServerOptions& ps);

}  // namespace splitscope
