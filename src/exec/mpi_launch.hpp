#pragma once
/// \file
/// `--launcher mpi`: this process as one rank of `mpirun -np N splitscope
/// run|compare ... --launcher mpi` (docs/mpi.md). Rank r runs device r's
/// part of every plan, the cpu backend's kernels on its own values; data
/// crosses ranks as MPI messages and MPI collectives. Every rank runs the
/// command the same way and ends with the same RunResults (timelines merged
/// over the ranks, the output gathered and broadcast), so that the commands
/// need only know which rank prints and writes files: rank 0.
///
/// No MPI header here: the commands build without MPI; where splitscope was
/// built without it (meson option `mpi`), start_mpi_launch() refuses.

#include <memory>

#include "exec/executor.hpp"

namespace splitscope {

class MpiLaunch {
 public:
  virtual ~MpiLaunch() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// The cpu backend over this launch's ranks (a plan may use fewer devices
  /// than there are ranks: the others take part in its runs idle).
  virtual std::unique_ptr<Executor> make_cpu_executor() = 0;
  /// Ends every rank with `exit_code` (MPI_Abort) after a failure only this
  /// rank may have seen, so that none waits for it for ever.
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

/// Joins the MPI launch (MPI_Init_thread). UnavailableError (exit 3) where
/// this build has no MPI.
std::shared_ptr<MpiLaunch> start_mpi_launch();

/// Whether this build can join an MPI launch.
bool mpi_available();

/// How many ranks the MPI launcher that started this process says the job
/// has (OpenMPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_SIZE); 0 when no
/// launcher started it. Read before MPI is started, to refuse a run
/// started by mpirun without --launcher mpi.
int mpi_launch_size_from_environment();

}  // namespace splitscope
