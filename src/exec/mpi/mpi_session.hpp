#pragma once
/// \file
/// This process's part in an MPI launch (`mpirun -np N splitscope ...
/// --launcher mpi`): MPI set up for threads (every lane of the cpu scheduler
/// may send or wait), which host each rank runs on, and how this rank's
/// steady clock stands against rank 0's, measured once by ping-pong.

#include <mpi.h>

#include <string>
#include <vector>

namespace splitscope {

class MpiSession {
 public:
  /// MPI_Init_thread with MPI_THREAD_MULTIPLE; throws UnavailableError where
  /// the MPI library offers less, RunError where a call fails.
  MpiSession();
  /// MPI_Finalize, unless the job was aborted.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  /// The host name of every rank, by rank.
  const std::vector<std::string>& hosts() const { return hosts_; }
  /// Ranks on this rank's host (they share its cores).
  int ranks_on_this_host() const;
  /// Microseconds to add to this rank's steady clock to read rank 0's.
  double clock_offset_us() const { return clock_offset_us_; }
  /// The largest half round trip of the ping-pongs that set the offsets:
  /// how far any rank's times may be off rank 0's.
  double clock_residual_us() const { return clock_residual_us_; }
  /// The largest tag a message may carry (MPI_TAG_UB).
  int largest_tag() const { return largest_tag_; }

  /// Ends every rank of the job with `exit_code` (MPI_Abort): what a rank
  /// that fails does, so that no other rank waits on it for ever.
  [[noreturn]] void abort(int exit_code);

 private:
  void gather_hosts();
  void measure_clock_offsets();

  int rank_ = 0;
  int size_ = 1;
  int largest_tag_ = 32767;
  std::vector<std::string> hosts_;
  double clock_offset_us_ = 0;
  double clock_residual_us_ = 0;
};

/// Steady-clock microseconds since its epoch (the clock the scheduler times with).
double steady_now_us();

}  // namespace splitscope
