#pragma once
/// \file
/// The cuda backend's input staging (exec/input_stream.hpp): batches wait in
/// page-locked host buffers, one per batch in flight, and each is copied to
/// a buffer on every GPU that reads network inputs with cudaMemcpyAsync on a
/// stream of the staging's own, beside the plan's streams, so that with
/// --prefetch the copy of the next batch overlaps the current step's compute
/// (a copy from pageable memory would be staged by the driver and not
/// overlap). A copy returns once its stream has finished it.

#include <cstdint>
#include <vector>

#include "exec/cuda/cuda_resources.hpp"
#include "exec/input_stream.hpp"

namespace splitscope::gpu {

class PinnedInputStaging final : public InputStaging {
 public:
  /// `ordinals`: the GPU of each target, in the order of `targets`.
  PinnedInputStaging(const std::vector<InputCopy>& targets, const std::vector<int>& ordinals, size_t slots,
                     int64_t batch_bytes);

  float* host_batch(size_t slot) override { return host_.at(slot).floats(); }
  void copy(size_t slot, size_t target, int64_t bytes) override;

 private:
  struct Target {
    int ordinal = 0;
    DeviceBuffer buffer;
    Stream stream;
  };

  std::vector<PinnedBuffer> host_;
  std::vector<Target> targets_;
};

}  // namespace splitscope::gpu
