#include "exec/mpi/mpi_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>

#include "exec/mpi/mpi_check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr int kPingPongs = 16;
constexpr int kClockTag = 1;
constexpr int kHostNameBytes = 256;

}  // namespace

double steady_now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

MpiSession::MpiSession() {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) throw RunError("MPI is already initialised in this process; start one MPI session at a time");
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  // From here on, a call that fails returns its error to check_mpi() rather than ending the job unexplained.
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw UnavailableError(
        "--launcher mpi: this MPI library does not offer MPI_THREAD_MULTIPLE (every lane of a rank sends and waits "
        "on its own thread); use an MPI built with thread support, e.g. Debian's OpenMPI");
  }
  void* tag_ub = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
  if (found && tag_ub != nullptr) largest_tag_ = *static_cast<int*>(tag_ub);
  gather_hosts();
  measure_clock_offsets();
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; should it, the rank still ends
}

int MpiSession::ranks_on_this_host() const {
  return static_cast<int>(std::count(hosts_.begin(), hosts_.end(), hosts_.at(static_cast<size_t>(rank_))));
}

void MpiSession::gather_hosts() {
  std::array<char, kHostNameBytes> mine{};
  if (gethostname(mine.data(), mine.size() - 1) != 0) mine = {'?'};
  std::vector<char> all(static_cast<size_t>(size_) * kHostNameBytes);
  check_mpi(MPI_Allgather(mine.data(), kHostNameBytes, MPI_CHAR, all.data(), kHostNameBytes, MPI_CHAR, MPI_COMM_WORLD),
            "MPI_Allgather (host names)");
  hosts_.clear();
  for (int r = 0; r < size_; ++r) hosts_.emplace_back(all.data() + static_cast<size_t>(r) * kHostNameBytes);
}

// Cristian's algorithm against rank 0, one rank at a time: the exchange with
// the shortest round trip bounds the offset best (to half that trip).
void MpiSession::measure_clock_offsets() {
  std::array<double, 2> mine{0, 0};  // offset, half round trip
  if (rank_ == 0) {
    for (int peer = 1; peer < size_; ++peer) {
      double best_trip = std::numeric_limits<double>::infinity();
      std::array<double, 2> result{0, 0};
      for (int i = 0; i < kPingPongs; ++i) {
        const double sent = steady_now_us();
        double theirs = 0;
        check_mpi(MPI_Send(&sent, 1, MPI_DOUBLE, peer, kClockTag, MPI_COMM_WORLD), "MPI_Send (clock ping)");
        check_mpi(MPI_Recv(&theirs, 1, MPI_DOUBLE, peer, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv (clock pong)");
        const double back = steady_now_us();
        if (back - sent < best_trip) {
          best_trip = back - sent;
          result = {(sent + back) / 2 - theirs, best_trip / 2};
        }
      }
      check_mpi(MPI_Send(result.data(), 2, MPI_DOUBLE, peer, kClockTag, MPI_COMM_WORLD), "MPI_Send (clock offset)");
    }
  } else {
    for (int i = 0; i < kPingPongs; ++i) {
      double sent = 0;
      check_mpi(MPI_Recv(&sent, 1, MPI_DOUBLE, 0, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (clock ping)");
      const double now = steady_now_us();
      check_mpi(MPI_Send(&now, 1, MPI_DOUBLE, 0, kClockTag, MPI_COMM_WORLD), "MPI_Send (clock pong)");
    }
    check_mpi(MPI_Recv(mine.data(), 2, MPI_DOUBLE, 0, kClockTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv (clock offset)");
  }
  clock_offset_us_ = mine[0];
  check_mpi(MPI_Allreduce(&mine[1], &clock_residual_us_, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce (clock residual)");
}

}  // namespace splitscope
