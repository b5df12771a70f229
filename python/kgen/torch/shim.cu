// kgen.torch's extern "C" face of one spec's generated sm90a launchers, which Python calls
// through ctypes (python/kgen/torch/native.py). build.py compiles it once per kernel folder:
// with nvcc for CUDA tensors, with nvcc-emu (ptxemu's drop-in nvcc) for CPU tensors; the
// source is the same.
//
// The launcher headers come in by -include; KGEN_FORWARD (and KGEN_BACKWARD when the spec has
// a backward) name their namespaces. A launcher's Arguments hold an optional operand (lse,
// segment ids, sinks, dsinks) only when the spec has it, so each is set where the field
// exists (C++20 requires-expressions, in templates: outside one a missing member is an error
// even in a discarded branch) and refused when given for a kernel without it.
//
// Every function returns a launcher Status (0 success, 1 invalid argument, 2 unsupported
// device, 3 CUDA error) and leaves a static message and the CUDA error code in its last two
// arguments; nothing is printed.
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include <cuda_runtime_api.h>

// A [batch][heads][rows][features] tensor: its data and strides in elements (features
// contiguous, which Python has checked). native.py mirrors it as a ctypes Structure.
struct kgen_tensor {
  void* data;
  int64_t batch;
  int64_t head;
  int64_t row;
};

namespace {

namespace forward = KGEN_FORWARD;

template <class Strides>
Strides strides(const kgen_tensor& t) {
  return Strides{t.batch, t.head, t.row};
}

constexpr int kInvalidArgument = 1;
constexpr int kCudaError = 3;

struct Optional {
  const int32_t* q_segment_ids;
  const int32_t* kv_segment_ids;
  const float* sinks;
};

// Sets the optional inputs the kernel has; a message when one is given that it lacks.
template <class Arguments>
const char* set_optional(Arguments& a, const Optional& o) {
  if constexpr (requires { a.q_segment_ids; }) {
    a.q_segment_ids = o.q_segment_ids;
    a.kv_segment_ids = o.kv_segment_ids;
  } else if (o.q_segment_ids != nullptr || o.kv_segment_ids != nullptr) {
    return "segment ids given to a kernel whose spec has no segment_ids";
  }
  if constexpr (requires { a.sinks; }) {
    a.sinks = o.sinks;
  } else if (o.sinks != nullptr) {
    return "sinks given to a kernel whose spec has no sinks";
  }
  return nullptr;
}

template <class Arguments>
const char* set_lse(Arguments& a, float* lse) {
  if constexpr (requires { a.lse; }) {
    a.lse = lse;
  } else if (lse != nullptr) {
    return "lse given to a kernel whose spec has no outputs.lse";
  }
  return nullptr;
}

// The forward's workspace (kgen_forward_workspace_bytes of it), where the kernel has one.
template <class Arguments>
const char* set_document_tiles(Arguments& a, void* workspace) {
  if constexpr (requires { a.document_tiles; }) {
    a.document_tiles = static_cast<int32_t*>(workspace);
  } else if (workspace != nullptr) {
    return "a forward workspace given to a kernel without segment ids";
  }
  return nullptr;
}

template <class Arguments>
const char* set_dsinks(Arguments& a, float* dsinks) {
  if constexpr (requires { a.dsinks; }) {
    a.dsinks = dsinks;
  } else if (dsinks != nullptr) {
    return "dsinks given to a kernel whose spec has no sinks";
  }
  return nullptr;
}

// Bits: 1 lse, 2 segment ids, 4 sinks.
template <class Arguments>
int operand_bits(const Arguments& a) {
  int bits = 0;
  if constexpr (requires { a.lse; }) bits |= 1;
  if constexpr (requires { a.q_segment_ids; }) bits |= 2;
  if constexpr (requires { a.sinks; }) bits |= 4;
  return bits;
}

// The device the launch goes to: the tensors' (CUDA), 0 on ptxemu; a negative one keeps the
// current device (then the launcher's argument checks come before any CUDA call).
int select_device(int device, const char** message, int* cuda_error) {
  if (device < 0) return 0;
  const cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) return 0;
  *message = "cudaSetDevice failed";
  *cuda_error = e;
  return kCudaError;
}

template <class Result>
int report(const Result& r, const char** message, int* cuda_error) {
  *message = r.message;
  *cuda_error = static_cast<int>(r.cuda_error);
  return static_cast<int>(r.status);
}

}  // namespace

extern "C" {

// The facts Python read from the headers, as the compiler sees them: shape[7] = batch,
// q_heads, kv_heads, q_len, kv_len, head_dim, head_dim_v.
void kgen_shape(int64_t* shape) {
  const int64_t values[] = {forward::kBatch, forward::kQHeads, forward::kKvHeads, forward::kQLen,
                            forward::kKvLen, forward::kHeadDim, forward::kHeadDimV};
  for (int i = 0; i < 7; ++i) shape[i] = values[i];
}

const char* kgen_dtype() { return forward::kDType; }

// Bits: 1 lse, 2 segment ids, 4 sinks, 8 a backward.
int kgen_operands() {
#ifdef KGEN_BACKWARD
  return operand_bits(forward::Arguments{}) | 8;
#else
  return operand_bits(forward::Arguments{});
#endif
}

// The forward's workspace: the document pre-pass's lists, 0 without segment ids.
uint64_t kgen_forward_workspace_bytes() { return sizeof(int32_t) * uint64_t(forward::kDocumentTilesInts); }

uint64_t kgen_workspace_bytes() {
#ifdef KGEN_BACKWARD
  return KGEN_BACKWARD::kWorkspaceBytes;
#else
  return 0;
#endif
}

int kgen_forward(const kgen_tensor* q, const kgen_tensor* k, const kgen_tensor* v, const kgen_tensor* out, float* lse,
                 const int32_t* q_segment_ids, const int32_t* kv_segment_ids, const float* sinks,
                 void* workspace, int device, void* stream, const char** message, int* cuda_error) {
  *message = "";
  *cuda_error = 0;
  forward::Arguments a;
  a.q = q->data;
  a.q_strides = strides<forward::Strides>(*q);
  a.k = k->data;
  a.k_strides = strides<forward::Strides>(*k);
  a.v = v->data;
  a.v_strides = strides<forward::Strides>(*v);
  a.out = out->data;
  a.out_strides = strides<forward::Strides>(*out);
  for (const char* m : {set_lse(a, lse), set_optional(a, Optional{q_segment_ids, kv_segment_ids, sinks}),
                        set_document_tiles(a, workspace)}) {
    if (m != nullptr) {
      *message = m;
      return kInvalidArgument;
    }
  }
  if (const int status = select_device(device, message, cuda_error)) return status;
  return report(forward::launch(a, static_cast<cudaStream_t>(stream)), message, cuda_error);
}

int kgen_backward(const kgen_tensor* q, const kgen_tensor* k, const kgen_tensor* v, const kgen_tensor* out, const kgen_tensor* dout,
                  const float* lse, const kgen_tensor* dq, const kgen_tensor* dk, const kgen_tensor* dv, void* workspace,
                  const int32_t* q_segment_ids, const int32_t* kv_segment_ids, const float* sinks,
                  float* dsinks, int device, void* stream, const char** message, int* cuda_error) {
  *message = "";
  *cuda_error = 0;
#ifdef KGEN_BACKWARD
  namespace backward = KGEN_BACKWARD;
  backward::Arguments a;
  a.q = q->data;
  a.q_strides = strides<backward::Strides>(*q);
  a.k = k->data;
  a.k_strides = strides<backward::Strides>(*k);
  a.v = v->data;
  a.v_strides = strides<backward::Strides>(*v);
  a.out = out->data;
  a.out_strides = strides<backward::Strides>(*out);
  a.dout = dout->data;
  a.dout_strides = strides<backward::Strides>(*dout);
  a.lse = lse;
  a.dq = dq->data;
  a.dq_strides = strides<backward::Strides>(*dq);
  a.dk = dk->data;
  a.dk_strides = strides<backward::Strides>(*dk);
  a.dv = dv->data;
  a.dv_strides = strides<backward::Strides>(*dv);
  a.workspace = workspace;
  for (const char* m : {set_optional(a, Optional{q_segment_ids, kv_segment_ids, sinks}), set_dsinks(a, dsinks)}) {
    if (m != nullptr) {
      *message = m;
      return kInvalidArgument;
    }
  }
  if (const int status = select_device(device, message, cuda_error)) return status;
  return report(backward::launch(a, static_cast<cudaStream_t>(stream)), message, cuda_error);
#else
  (void)q, (void)k, (void)v, (void)out, (void)dout, (void)lse, (void)dq, (void)dk, (void)dv, (void)workspace;
  (void)q_segment_ids, (void)kv_segment_ids, (void)sinks, (void)dsinks, (void)device, (void)stream;
  *message = "the spec has no backward";
  return kInvalidArgument;
#endif
}

// Device memory of the CUDA runtime this library links: on ptxemu, the stand-in's, which CPU
// tensors are copied into and out of (emulated.py). Unused with CUDA tensors.
void* kgen_device_alloc(uint64_t bytes) {
  void* p = nullptr;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}

int kgen_device_free(void* p) { return static_cast<int>(cudaFree(p)); }

int kgen_copy_to_device(void* device, const void* host, uint64_t bytes) {
  return static_cast<int>(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}

int kgen_copy_to_host(void* host, const void* device, uint64_t bytes) {
  return static_cast<int>(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}

// Waits for every launch; the first error of any, sticky ones included.
int kgen_synchronize() {
  const cudaError_t e = cudaDeviceSynchronize();
  return static_cast<int>(e != cudaSuccess ? e : cudaGetLastError());
}

const char* kgen_error_string(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

}  // extern "C"
