#include "exec/cuda/pinned_input_staging.hpp"

#include "exec/cuda/cuda_check.hpp"
#include "util/check.hpp"

namespace splitscope::gpu {

PinnedInputStaging::PinnedInputStaging(const std::vector<InputCopy>& targets, const std::vector<int>& ordinals,
                                       size_t slots, int64_t batch_bytes) {
  SPLITSCOPE_CHECK(targets.size() == ordinals.size(), "a GPU for every input target");
  for (size_t slot = 0; slot < slots; ++slot) host_.emplace_back(static_cast<size_t>(batch_bytes));
  for (size_t t = 0; t < targets.size(); ++t) {
    const DeviceGuard guard(ordinals[t]);
    targets_.push_back({ordinals[t], DeviceBuffer(static_cast<size_t>(targets[t].bytes)), Stream::create()});
  }
}

void PinnedInputStaging::copy(size_t slot, size_t target, int64_t bytes) {
  Target& to = targets_.at(target);
  SPLITSCOPE_CHECK(bytes >= 0 && static_cast<size_t>(bytes) <= to.buffer.bytes() &&
                       static_cast<size_t>(bytes) <= host_.at(slot).bytes(),
                   "an input copy larger than its buffers");
  const DeviceGuard guard(to.ordinal);
  SPLITSCOPE_CUDA_CHECK(cudaMemcpyAsync(to.buffer.get(), host_.at(slot).get(), static_cast<size_t>(bytes),
                                        cudaMemcpyHostToDevice, to.stream.get()));
  SPLITSCOPE_CUDA_CHECK(cudaStreamSynchronize(to.stream.get()));
}

}  // namespace splitscope::gpu
