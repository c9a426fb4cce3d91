#include "exec/cpu/held_back.hpp"

#include <chrono>
#include <thread>
#include <utility>

namespace splitscope {

TaskFunction held_back(TaskFunction work, double ms) {
  const auto delay = std::chrono::duration<double, std::milli>(ms);
  return [work = std::move(work), delay](TaskContext& context) {
    std::this_thread::sleep_for(delay);
    work(context);
  };
}

}  // namespace splitscope
