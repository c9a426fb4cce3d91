#pragma once
/// \file
/// Waiting on MPI without blocking inside MPI: a posted request is tested,
/// or the queue probed for a message, until it completes or the run's
/// deadline passes, so that a rank whose peer never sends fails with a
/// message naming what it waited for, instead of hanging in MPI_Wait
/// (docs/mpi.md: faults).

#include <mpi.h>

#include <chrono>
#include <optional>
#include <string>

namespace splitscope {

using MpiDeadline = std::optional<std::chrono::steady_clock::time_point>;

/// Returns once `request` has completed; throws RunError naming `what` when
/// MPI reports an error, or when `deadline` passes first (the caller then
/// ends the job: an outstanding request cannot be taken back).
void wait_for_request(MPI_Request& request, const MpiDeadline& deadline, const std::string& what);

/// Returns the envelope of the next message for this rank on `comm`, from
/// any rank with any tag, once one has arrived (it stays to be received);
/// throws RunError as wait_for_request() does.
MPI_Status wait_for_message(MPI_Comm comm, const MpiDeadline& deadline, const std::string& what);

}  // namespace splitscope
