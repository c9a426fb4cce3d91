#pragma once
/// \file
/// Every MPI call is checked: a failing one throws RunError naming the call
/// and MPI's own description of the error. (MPI_COMM_WORLD's handler is set
/// to MPI_ERRORS_RETURN at start, so that calls return their errors here
/// instead of aborting the job unexplained.)

#include <mpi.h>

#include <string>
#include <string_view>

#include "util/errors.hpp"

namespace splitscope {

inline void check_mpi(int code, std::string_view call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw RunError(std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length)));
}

}  // namespace splitscope
