#include "exec/mpi/mpi_wait.hpp"

#include <thread>

#include "exec/mpi/mpi_check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

// A short spin first (a message usually lands within microseconds of being
// awaited on one host), then yield the core: ranks share cores with their
// own compute threads, and on a small machine with other ranks too.
constexpr int kSpins = 200;
constexpr auto kNap = std::chrono::microseconds(20);

/// Calls `done()` until it says yes, or throws past `deadline`.
template <typename Test>
void poll(Test done, const MpiDeadline& deadline, const std::string& what) {
  for (int polls = 0;; ++polls) {
    if (done()) return;
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      // Cancelling a send is deprecated and a collective cannot be: leave the
      // request to MPI_Abort, which ends the job next (mpi_launch).
      throw RunError("waited past the deadline (--timeout-ms) for " + what);
    }
    if (polls < kSpins) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kNap);
    }
  }
}

}  // namespace

void wait_for_request(MPI_Request& request, const MpiDeadline& deadline, const std::string& what) {
  poll(
      [&] {
        int done = 0;
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test (" + what + ")");
        return done != 0;
      },
      deadline, what);
}

MPI_Status wait_for_message(MPI_Comm comm, const MpiDeadline& deadline, const std::string& what) {
  MPI_Status status{};
  poll(
      [&] {
        int arrived = 0;
        check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &arrived, &status), "MPI_Iprobe (" + what + ")");
        return arrived != 0;
      },
      deadline, what);
  return status;
}

}  // namespace splitscope
