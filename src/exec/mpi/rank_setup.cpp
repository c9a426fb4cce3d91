#include "exec/mpi/rank_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/mpi/mpi_check.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  std::string version(text, static_cast<size_t>(std::max(0, length)));
  if (const size_t line = version.find_first_of("\n,"); line != std::string::npos) version.resize(line);
  return version;
}

/// "0 host-a, 1 host-a, 2 host-b"
std::string rank_hosts(const std::vector<std::string>& hosts) {
  std::string text;
  for (size_t rank = 0; rank < hosts.size(); ++rank) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", rank, hosts[rank]);
  }
  return text;
}

}  // namespace

void check_rank_run_options(const Plan& plan, const RunOptions& options, const MpiSession& session) {
  if (options.jitter_sigma != 0) {
    throw InputError("--jitter", "",
                     "draws noise on simulated op times; under --launcher mpi hold a rank back with --straggler D:MS");
  }
  check_cpu_run_options(plan, options);
  if (plan.precision != Precision::kFp32) {
    // The ranks' messages and weights are float32; only the one-process cpu backend rounds to other precisions.
    throw UnavailableError(fmt::format("--precision {}: --launcher mpi runs fp32 only; run it without --launcher "
                                       "(the cpu backend in one process), or predict it with --backend sim",
                                       to_string(plan.precision)));
  }
  if (plan.devices > session.size()) {
    throw InputError("--devices", "",
                     fmt::format("the {} plan has {} but this MPI job has {} (one device each); "
                                 "start it with mpirun -np {}",
                                 plan.strategy, counted(plan.devices, "device"), counted(session.size(), "rank"),
                                 plan.devices));
  }
  if (std::set<std::string>(session.hosts().begin(), session.hosts().end()).size() == 1) {
    check_fits_in_host_memory(plan);  // every rank on this host: the whole plan shares its memory
  }
}

ThreadConfig rank_threads(const RunOptions& options, const MpiSession& session) {
  // The ranks on one host share its cores as the devices of a one-process run share them.
  ThreadConfig config = resolve_threads(options, session.ranks_on_this_host(), read_host_info().hardware_threads);
  config.inter_op = 1;
  return config;
}

RunInfo mpi_run_info(const Plan& plan, const MpiSession& session, const ThreadConfig& threads) {
  const HostInfo host = read_host_info();
  RunInfo info;
  info.backend = "cpu";
  info.measured = true;
  info.device_mode = "mpi";
  const std::set<std::string> machines(session.hosts().begin(), session.hosts().end());
  for (const std::string& machine : machines) info.machine_name += (info.machine_name.empty() ? "" : ", ") + machine;
  info.device_name = host.cpu_model;
  if (host.memory_bytes > 0) {
    info.device_memory_bytes.assign(static_cast<size_t>(plan.devices),
                                    host.memory_bytes / std::max(1, session.ranks_on_this_host()));
  }
  info.facts = {
      {"ranks", rank_hosts(session.hosts())},
      {"mpi", mpi_library_version()},
      {"clock alignment", fmt::format("rank 0's steady clock, within {:.1f} us (half the best ping-pong)",
                                      session.clock_residual_us())},
      {"intra-op threads", fmt::format("{} a rank", threads.intra_op)},
      {"hardware threads", std::to_string(threads.hardware_threads)},
      {"blas", blas_description()},
      {"dtype", "fp32"},
  };
  return info;
}

}  // namespace splitscope
