#pragma once
/// \file
/// `--launcher mpi` for `run` and `compare` (docs/mpi.md): the command's
/// part in an MPI launch. Every rank runs the command alike (same plans, same
/// runs, the same merged results); rank 0 alone prints, reports progress and
/// writes files. A failure every rank meets alike (a bad option) ends each
/// rank with its exit code, rank 0 saying why; a failure of one rank's own
/// (a run past its deadline, a failing op) ends the whole job (MPI_Abort)
/// with that rank's message, so that no rank waits for it.
///
/// Without --launcher it is inert, and refuses a process that mpirun
/// started (each rank would run the whole plan and write the same files).

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "exec/executor.hpp"
#include "exec/mpi_launch.hpp"
#include "run/backend.hpp"

namespace splitscope::cli {

/// Registers `--launcher mpi` on `command`, into `launcher`.
void add_launcher_option(CLI::App& command, std::string& launcher);

/// The backend a measuring command runs: `chosen` (--backend) where given,
/// else cpu under `--launcher mpi` (the launcher's backend) or where no GPU
/// is present, else cuda.
Backend measuring_backend(const std::string& chosen, const std::string& launcher);

class LaunchScope {
 public:
  /// Joins the MPI launch where `launcher` is "mpi" (the backend must then be
  /// cpu: InputError for sim, UnavailableError for cuda and for a build
  /// without MPI); InputError where mpirun started this process without it.
  LaunchScope(const std::string& launcher, Backend backend);
  ~LaunchScope();
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;

  bool launched() const { return launch_ != nullptr; }
  /// Whether this process prints and writes files: rank 0, or no launch.
  bool writes() const { return launch_ == nullptr || launch_->rank() == 0; }
  /// The cpu backend over the ranks. Only when launched().
  std::unique_ptr<Executor> make_executor() const;
  /// Runs the command's `body` (its exit code) as the header says.
  int run(const std::function<int()>& body);

 private:
  std::shared_ptr<MpiLaunch> launch_;
  std::unique_ptr<std::streambuf> silence_;  ///< swallows std::cout on ranks other than 0
  std::streambuf* saved_cout_ = nullptr;     ///< std::cout's own buffer, put back at the end
};

}  // namespace splitscope::cli
