#include "exec/mpi_launch.hpp"

#include "exec/mpi/mpi_executor.hpp"
#include "exec/mpi/mpi_session.hpp"

namespace splitscope {
namespace {

class MpiSessionLaunch final : public MpiLaunch {
 public:
  MpiSessionLaunch() : session_(std::make_shared<MpiSession>()) {}
  int rank() const override { return session_->rank(); }
  int ranks() const override { return session_->size(); }
  std::unique_ptr<Executor> make_cpu_executor() override { return std::make_unique<MpiExecutor>(session_); }
  [[noreturn]] void abort(int exit_code) override { session_->abort(exit_code); }

 private:
  std::shared_ptr<MpiSession> session_;
};

}  // namespace

bool mpi_available() { return true; }

std::shared_ptr<MpiLaunch> start_mpi_launch() { return std::make_shared<MpiSessionLaunch>(); }

}  // namespace splitscope
