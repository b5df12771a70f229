// Device memory for the GPU harnesses: inputs copied up, outputs poisoned with NaN and fenced
// by guard bands that must stay untouched, and 16-bit element encoding both ways.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "dtype_rounding.h"
#include "spec.h"

namespace kgen::sm90a {

constexpr std::size_t kGuardBytes = 64 * 1024;  // before and after every output buffer
constexpr unsigned char kGuardByte = 0xA5;
constexpr unsigned char kPoisonByte = 0xFF;  // 0xFFFF is NaN in bf16 and f16, 0xFFFFFFFF in f32

// A failed CUDA call, reported by the harness as a failure.
struct CudaError {
  std::string what;
};

inline void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw CudaError{std::string(what) + ": " + cudaGetErrorString(error)};
}

// A device allocation with guard bands; `data` is the usable middle.
struct GuardedBuffer {
  unsigned char* base = nullptr;
  std::size_t bytes = 0;
  void* data() const { return base + kGuardBytes; }

  explicit GuardedBuffer(std::size_t size) : bytes(size) {
    check(cudaMalloc(reinterpret_cast<void**>(&base), bytes + 2 * kGuardBytes), "cudaMalloc");
    check(cudaMemset(base, kGuardByte, bytes + 2 * kGuardBytes), "cudaMemset (guards)");
    check(cudaMemset(data(), kPoisonByte, bytes), "cudaMemset (poison)");
  }
  ~GuardedBuffer() { cudaFree(base); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  // Bytes outside `data` that the kernel changed.
  std::size_t guard_damage() const {
    std::vector<unsigned char> host(bytes + 2 * kGuardBytes);
    check(cudaMemcpy(host.data(), base, host.size(), cudaMemcpyDeviceToHost), "cudaMemcpy (guards)");
    std::size_t damaged = 0;
    for (std::size_t k = 0; k < kGuardBytes; ++k) damaged += host[k] != kGuardByte;
    for (std::size_t k = kGuardBytes + bytes; k < host.size(); ++k) damaged += host[k] != kGuardByte;
    return damaged;
  }
  template <typename T>
  std::vector<T> read() const {
    std::vector<T> host(bytes / sizeof(T));
    check(cudaMemcpy(host.data(), data(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (output)");
    return host;
  }
};

struct DeviceInput {
  void* data = nullptr;
  template <typename T>
  explicit DeviceInput(const std::vector<T>& host) {
    check(cudaMalloc(&data, std::max<std::size_t>(1, host.size() * sizeof(T))), "cudaMalloc");
    check(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (input)");
  }
  ~DeviceInput() { cudaFree(data); }
  DeviceInput(const DeviceInput&) = delete;
  DeviceInput& operator=(const DeviceInput&) = delete;
};

inline std::vector<uint16_t> encode(const std::vector<double>& values, DType dtype) {
  std::vector<uint16_t> bits(values.size());
  for (std::size_t k = 0; k < values.size(); ++k)
    bits[k] = dtype == DType::kFloat16 ? float16_bits(values[k]) : bfloat16_bits(values[k]);
  return bits;
}

inline std::vector<double> decode(const std::vector<uint16_t>& bits, DType dtype) {
  std::vector<double> values(bits.size());
  for (std::size_t k = 0; k < bits.size(); ++k)
    values[k] = dtype == DType::kFloat16 ? from_float16_bits(bits[k]) : from_bfloat16_bits(bits[k]);
  return values;
}

}  // namespace kgen::sm90a
