// The GPU engine's device queries (device_sum.h): whether the build has CUDA, the devices present,
// their description, and the measured copy bandwidth between two of them.

#include "paulistrings/gpu/device_sum_impl.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace paulistrings::gpu {

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

bool built_with_cuda() { return true; }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device: ").append(cudaGetErrorString(status));
  }
  if (count == 0) return "no CUDA device on this machine";
  return "";
}

std::string describe_device(int device) {
  const int count = device_count();
  if (device < 0 || device >= count) {
    std::string message("CUDA device ");
    message.append(std::to_string(device)).append(" does not exist (");
    message.append(count == 0 ? unavailable_reason() : std::to_string(count) + " device(s)").append(")");
    throw GpuUnavailable(message);
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return std::string(prop.name)
      .append(" (sm_")
      .append(std::to_string(prop.major * 10 + prop.minor))
      .append(", ")
      .append(gib(prop.totalGlobalMem))
      .append(", ")
      .append(std::to_string(prop.multiProcessorCount))
      .append(" SMs)");
}

PeerBandwidth measure_peer_bandwidth(int from, int to, std::size_t bytes, int repeats, bool bidirectional) {
  describe_device(from);  // GpuUnavailable for a bad ordinal
  describe_device(to);
  if (bytes == 0 || repeats <= 0) throw std::invalid_argument("measure_peer_bandwidth: bytes and repeats must be > 0");
  PeerBandwidth result;
  int can = 0;
  if (from != to && cudaDeviceCanAccessPeer(&can, to, from) == cudaSuccess && can) result.peer_access = true;
  cudaGetLastError();
  const auto enable = [](int device, int peer) {
    check(cudaSetDevice(device), "cudaSetDevice");
    const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status != cudaSuccess && status != cudaErrorPeerAccessAlreadyEnabled) check(status, "cudaDeviceEnablePeerAccess");
    cudaGetLastError();
  };
  if (result.peer_access) {
    enable(to, from);
    enable(from, to);
  }
  void* a = nullptr;
  void* b = nullptr;
  void* a_back = nullptr;
  void* b_back = nullptr;
  cudaStream_t forward = nullptr, backward = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  struct Free {
    void** p;
    int device;
    ~Free() {
      if (*p) {
        cudaSetDevice(device);
        cudaFree(*p);
      }
    }
  } free_a{&a, from}, free_b{&b, to}, free_a_back{&a_back, from}, free_b_back{&b_back, to};
  cudaEvent_t backward_done = nullptr;
  // Streams and events are destroyed on every way out, a failed CUDA call (an exception) included.
  struct Release {
    cudaStream_t* streams[2];
    cudaEvent_t* events[3];
    ~Release() {
      for (cudaEvent_t* e : events)
        if (*e) cudaEventDestroy(*e);
      for (cudaStream_t* s : streams)
        if (*s) cudaStreamDestroy(*s);
    }
  } release{{&forward, &backward}, {&start, &stop, &backward_done}};
  check(cudaSetDevice(from), "cudaSetDevice");
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  if (bidirectional) check(cudaMalloc(&a_back, bytes), "cudaMalloc");
  check(cudaStreamCreateWithFlags(&forward, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaSetDevice(to), "cudaSetDevice");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  if (bidirectional) {
    check(cudaMalloc(&b_back, bytes), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&backward, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  check(cudaSetDevice(from), "cudaSetDevice");
  const auto round = [&](int copies) {
    for (int k = 0; k < copies; ++k) {
      check(cudaMemcpyPeerAsync(b, to, a, from, bytes, forward), "cudaMemcpyPeerAsync");
      if (bidirectional) check(cudaMemcpyPeerAsync(a_back, from, b_back, to, bytes, backward), "cudaMemcpyPeerAsync");
    }
  };
  round(1);  // warm-up
  check(cudaStreamSynchronize(forward), "cudaStreamSynchronize");
  if (backward) check(cudaStreamSynchronize(backward), "cudaStreamSynchronize");
  if (backward) check(cudaEventCreate(&backward_done), "cudaEventCreate");
  check(cudaEventRecord(start, forward), "cudaEventRecord");
  if (backward) check(cudaStreamWaitEvent(backward, start, 0), "cudaStreamWaitEvent");
  round(repeats);
  if (backward) {
    check(cudaEventRecord(backward_done, backward), "cudaEventRecord");
    check(cudaStreamWaitEvent(forward, backward_done, 0), "cudaStreamWaitEvent");
  }
  check(cudaEventRecord(stop, forward), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0.0f;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  const double moved = static_cast<double>(bytes) * repeats * (bidirectional ? 2 : 1);
  result.bytes_per_second = moved / (static_cast<double>(ms) * 1e-3);
  return result;
}

}  // namespace paulistrings::gpu
