#include <cuda_runtime_api.h>

#include <chrono>
#include <mutex>
#include <set>

#include "runtime_state.h"
#include "streams.h"

namespace kgen::emu {
namespace {

struct StreamObject {
  unsigned flags = 0;
  int priority = 0;
};

struct EventObject {
  unsigned flags = 0;
  bool recorded = false;
  std::chrono::steady_clock::time_point when;
};

struct Handles {
  std::mutex mutex;
  std::set<const void*> streams;
  std::set<const void*> events;
};

Handles& handles() {
  static Handles* live = new Handles;  // never destroyed: handles may be released from static destructors
  return *live;
}

EventObject* live_event(cudaEvent_t event) {
  Handles& live = handles();
  std::lock_guard lock(live.mutex);
  return live.events.count(event) ? reinterpret_cast<EventObject*>(event) : nullptr;
}

cudaError_t create_stream(cudaStream_t* stream, unsigned flags, int priority) {
  if (stream == nullptr) return note_error(cudaErrorInvalidValue);
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  auto* object = new StreamObject{flags, priority};
  Handles& live = handles();
  std::lock_guard lock(live.mutex);
  live.streams.insert(object);
  *stream = reinterpret_cast<cudaStream_t>(object);
  return cudaSuccess;
}

cudaError_t create_event(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return note_error(cudaErrorInvalidValue);
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  auto* object = new EventObject{flags, false, {}};
  Handles& live = handles();
  std::lock_guard lock(live.mutex);
  live.events.insert(object);
  *event = reinterpret_cast<cudaEvent_t>(object);
  return cudaSuccess;
}

}  // namespace

bool valid_stream(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
  Handles& live = handles();
  std::lock_guard lock(live.mutex);
  return live.streams.count(stream) != 0;
}

}  // namespace kgen::emu

using namespace kgen::emu;

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return create_stream(stream, cudaStreamDefault, 0); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  return create_stream(stream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  return create_stream(stream, flags, priority);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Handles& live = handles();
  std::lock_guard lock(live.mutex);
  if (stream == nullptr || live.streams.erase(stream) == 0) return note_error(cudaErrorInvalidResourceHandle);
  delete reinterpret_cast<StreamObject*>(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!valid_stream(stream)) return note_error(cudaErrorInvalidResourceHandle);
  return note_error(sticky_error());
}

cudaError_t cudaStreamQuery(cudaStream_t stream) { return cudaStreamSynchronize(stream); }

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  if (!valid_stream(stream) || live_event(event) == nullptr) return note_error(cudaErrorInvalidResourceHandle);
  return note_error(sticky_error());
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  if (priority == nullptr) return note_error(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return note_error(cudaErrorInvalidResourceHandle);
  bool default_stream = stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
  *priority = default_stream ? 0 : reinterpret_cast<StreamObject*>(stream)->priority;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  // Hopper and Blackwell report 0 (least) to -5 (greatest).
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return note_error(sticky_error()); }

cudaError_t cudaEventCreate(cudaEvent_t* event) { return create_event(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) { return create_event(event, flags); }

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  EventObject* object = live_event(event);
  if (object == nullptr || !valid_stream(stream)) return note_error(cudaErrorInvalidResourceHandle);
  object->recorded = true;
  object->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int) {
  return cudaEventRecord(event, stream);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (live_event(event) == nullptr) return note_error(cudaErrorInvalidResourceHandle);
  return note_error(sticky_error());
}

cudaError_t cudaEventQuery(cudaEvent_t event) { return cudaEventSynchronize(event); }

cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end) {
  if (milliseconds == nullptr) return note_error(cudaErrorInvalidValue);
  if (cudaError_t stuck = sticky_error()) return note_error(stuck);
  EventObject* first = live_event(start);
  EventObject* second = live_event(end);
  if (first == nullptr || second == nullptr) return note_error(cudaErrorInvalidResourceHandle);
  if ((first->flags | second->flags) & cudaEventDisableTiming) return note_error(cudaErrorInvalidResourceHandle);
  if (!first->recorded || !second->recorded) return note_error(cudaErrorInvalidResourceHandle);
  *milliseconds = std::chrono::duration<float, std::milli>(second->when - first->when).count();
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Handles& live = handles();
  std::lock_guard lock(live.mutex);
  if (event == nullptr || live.events.erase(event) == 0) return note_error(cudaErrorInvalidResourceHandle);
  delete reinterpret_cast<EventObject*>(event);
  return cudaSuccess;
}

}  // extern "C"
