#include "run/run_target.hpp"

#include "util/check.hpp"

namespace splitscope {

NamedMachine::NamedMachine(std::string name, Reader read)
    : name_(std::move(name)), reading_(std::make_shared<Reading>(Reading{std::move(read), nullptr})) {}

const Machine& NamedMachine::machine() const {
  SPLITSCOPE_CHECK(reading_ != nullptr, "NamedMachine::machine() without a reader");
  if (reading_->machine == nullptr) reading_->machine = std::make_unique<const Machine>(reading_->read(name_));
  return *reading_->machine;
}

}  // namespace splitscope
