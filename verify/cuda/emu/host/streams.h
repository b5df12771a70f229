// Streams and events. The emulator runs every piece of work when it is enqueued, so a stream
// is only a handle to validate and an event only a host time stamp (cudaEventElapsedTime
// reports the host wall time between two records, which is what timing code around an
// emulated kernel can meaningfully see).
#pragma once

#include <driver_types.h>

namespace kgen::emu {

// True for the default streams (0, cudaStreamLegacy, cudaStreamPerThread) and every stream
// cudaStreamCreate* returned that is not destroyed.
bool valid_stream(cudaStream_t stream);

}  // namespace kgen::emu
