#include "cli/launch_scope.hpp"

#include <fmt/format.h>

#include <iostream>
#include <new>
#include <ostream>

#include "exec/cuda_backend.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

/// Swallows what ranks other than 0 would print.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int character) override { return traits_type::not_eof(character); }
  std::streamsize xsputn(const char*, std::streamsize count) override { return count; }
};

}  // namespace

void add_launcher_option(CLI::App& command, std::string& launcher) {
  command
      .add_option("--launcher", launcher,
                  "mpi: run as one rank per device under mpirun -np N (docs/mpi.md); rank 0 prints and writes files")
      ->check(CLI::IsMember({"mpi"}));
}

Backend measuring_backend(const std::string& chosen, const std::string& launcher) {
  if (!chosen.empty()) return parse_backend(chosen);
  return !launcher.empty() || !cuda_gpu_available() ? Backend::kCpu : Backend::kCuda;
}

LaunchScope::LaunchScope(const std::string& launcher, Backend backend) {
  if (launcher.empty()) {
    if (const int ranks = mpi_launch_size_from_environment(); ranks > 1) {
      throw InputError("--launcher", "",
                       fmt::format("this process is one of {} that an MPI launcher started, but --launcher mpi was "
                                   "not given: each would run every device's part and write the same files; add "
                                   "--launcher mpi (docs/mpi.md)",
                                   ranks));
    }
    return;
  }
  if (backend == Backend::kSim) {
    throw InputError("--launcher", "",
                     "mpi runs a plan's devices as processes and measures them; the simulator predicts in one "
                     "process: drop --launcher or use --backend cpu");
  }
  if (backend != Backend::kCpu) {
    const std::string name(to_string(backend));
    throw UnavailableError("--launcher mpi runs the cpu backend (MPI messages between ranks); --backend " + name +
                           " with NCCL between ranks is not built yet: use --backend cpu, or --backend " + name +
                           " in one process");
  }
  launch_ = start_mpi_launch();
  if (!writes()) {
    silence_ = std::make_unique<NullBuffer>();
    saved_cout_ = std::cout.rdbuf(silence_.get());
  }
}

LaunchScope::~LaunchScope() {
  if (saved_cout_ != nullptr) std::cout.rdbuf(saved_cout_);
}

std::unique_ptr<Executor> LaunchScope::make_executor() const { return launch_->make_cpu_executor(); }

int LaunchScope::run(const std::function<int()>& body) {
  if (!launched()) return body();
  const int rank = launch_->rank();
  try {
    return body();
  } catch (const InputError&) {
    // Met alike by every rank (the same command line, files and plans): rank
    // 0 says it and exits with its code, which mpirun returns. The others end
    // quietly: mpirun kills every rank once one exits non-zero, and a rank 1
    // that did so first once killed rank 0 before it had said why.
    if (writes()) throw;
    return kExitOk;
  } catch (const UnavailableError&) {
    if (writes()) throw;
    return kExitOk;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: rank {}: out of memory; use a smaller --batch or network\n", rank);
    launch_->abort(kExitFailure);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: rank {}: {}\n", rank, e.what());
    launch_->abort(kExitFailure);
  }
  return kExitFailure;  // not reached: abort() ends the process
}

}  // namespace splitscope::cli
