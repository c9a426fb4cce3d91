// The MPI launcher where splitscope was built without MPI (meson option
// `mpi`, on by default where Meson finds an MPI library).

#include "exec/mpi_launch.hpp"
#include "util/errors.hpp"

namespace splitscope {

bool mpi_available() { return false; }

std::shared_ptr<MpiLaunch> start_mpi_launch() {
  throw UnavailableError(
      "--launcher mpi: this splitscope was built without MPI; install OpenMPI (scripts/setup installs "
      "libopenmpi-dev) and rebuild (scripts/build), or run the devices as threads of one process (no --launcher)");
}

}  // namespace splitscope
