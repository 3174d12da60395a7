#pragma once
// The device helpers every kernel family uses: thread indexing, complex arithmetic on coefficient
// arrays, key words, the truncation program's per-term settle and its tallies, grid sizes.
// Part of kernels.cuh, which includes it after kernels.h and cuda_check.h; not a header of its own.

namespace paulistrings::gpu::kernels {
namespace {

constexpr int kThreads = 256;

struct C2 {
  double re, im;
};

template <bool Cx>
__device__ __forceinline__ C2 load_coef(const void* p, std::size_t i) {
  if constexpr (Cx) {
    const double2 v = static_cast<const double2*>(p)[i];
    return {v.x, v.y};
  } else {
    return {static_cast<const double*>(p)[i], 0.0};
  }
}
template <bool Cx>
__device__ __forceinline__ void store_coef(void* p, std::size_t i, C2 c) {
  if constexpr (Cx) {
    static_cast<double2*>(p)[i] = make_double2(c.re, c.im);
  } else {
    static_cast<double*>(p)[i] = c.re;
  }
}
template <bool Cx>
__device__ __forceinline__ bool is_zero(C2 c) {
  if constexpr (Cx) return c.re == 0.0 && c.im == 0.0;
  return c.re == 0.0;
}
template <bool Cx>
__device__ __forceinline__ double norm2(C2 c) {
  if constexpr (Cx) return c.re * c.re + c.im * c.im;
  return c.re * c.re;
}
/// c · (ar + i·ai), as std::complex<double> multiplies (ac − bd, ad + bc).
template <bool Cx>
__device__ __forceinline__ C2 mul(C2 c, double ar, double ai) {
  if constexpr (Cx) return {c.re * ar - c.im * ai, c.re * ai + c.im * ar};
  return {c.re * ar, 0.0};
}
template <bool Cx>
__device__ __forceinline__ C2 scale(C2 c, double s) {
  if constexpr (Cx) return {c.re * s, c.im * s};
  return {c.re * s, 0.0};
}
__device__ __forceinline__ C2 add(C2 a, C2 b) { return {a.re + b.re, a.im + b.im}; }

template <int W>
__device__ __forceinline__ int code_of(const Key<W>& k, int q) {
  const int w = q >> 6, b = q & 63;
  return static_cast<int>(((k.x[w] >> b) & 1) | (((k.z[w] >> b) & 1) << 1));
}
template <int W>
__device__ __forceinline__ void set_code(Key<W>& k, int q, int code) {
  const int w = q >> 6;
  const std::uint64_t bit = std::uint64_t{1} << (q & 63);
  k.x[w] = (k.x[w] & ~bit) | ((code & 1) ? bit : 0);
  k.z[w] = (k.z[w] & ~bit) | ((code & 2) ? bit : 0);
}
/// Support pattern of term i, loading only the words that hold the support.
template <int W>
__device__ __forceinline__ int pattern_at(const Key<W>* keys, std::size_t i, int support_size, int q0, int q1) {
  const int w0 = q0 >> 6, b0 = q0 & 63;
  int p = static_cast<int>(((keys[i].x[w0] >> b0) & 1) | (((keys[i].z[w0] >> b0) & 1) << 1));
  if (support_size == 2) {
    const int w1 = q1 >> 6, b1 = q1 & 63;
    p |= static_cast<int>(((keys[i].x[w1] >> b1) & 1) | (((keys[i].z[w1] >> b1) & 1) << 1)) << 2;
  }
  return p;
}
template <int W>
__device__ __forceinline__ int pattern_of(const Key<W>& k, int support_size, int q0, int q1) {
  int p = code_of(k, q0);
  if (support_size == 2) p |= code_of(k, q1) << 2;
  return p;
}
template <int W>
__device__ __forceinline__ void set_pattern(Key<W>& k, int support_size, int q0, int q1, int p) {
  set_code(k, q0, p & 3);
  if (support_size == 2) set_code(k, q1, p >> 2);
}
__device__ __forceinline__ int pattern_weight(int p) { return ((p & 3) != 0) + ((p >> 2) != 0); }

template <int W>
__device__ __forceinline__ int weight_of(const Key<W>& k) {
  int w = 0;
#pragma unroll
  for (int i = 0; i < W; ++i) w += __popcll(k.x[i] | k.z[i]);
  return w;
}
template <int W>
__device__ __forceinline__ bool keys_equal(const Key<W>& a, const Key<W>& b) {
  std::uint64_t diff = 0;
#pragma unroll
  for (int i = 0; i < W; ++i) diff |= (a.x[i] ^ b.x[i]) | (a.z[i] ^ b.z[i]);
  return diff == 0;
}
template <int W>
__device__ __forceinline__ std::uint64_t key_hash(const Key<W>& k) {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
#pragma unroll
  for (int i = 0; i < W; ++i) {
    h ^= k.x[i];
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
    h ^= k.z[i];
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 29;
  }
  return h ^ (h >> 32);
}

/// Postfix evaluation with the stack as bits.
__device__ __forceinline__ bool keep_term(const TermProgram& p, double mag2, int weight) {
  if (p.length == 0) return true;
  std::uint32_t stack = 0;
  for (int k = 0; k < p.length; ++k) {
    switch (p.op[k]) {
      case TermProgram::coeff: {
        const double e2 = p.epsilon_squared[k];
        stack = (stack << 1) | static_cast<std::uint32_t>(e2 < 0.0 || mag2 > e2);
        break;
      }
      case TermProgram::weight:
        stack = (stack << 1) | static_cast<std::uint32_t>(weight <= static_cast<int>(p.max_weight[k]));
        break;
      case TermProgram::all_of: {
        const std::uint32_t b = stack & 1, a = (stack >> 1) & 1;
        stack = (stack >> 2 << 1) | (a & b);
        break;
      }
      case TermProgram::any_of: {
        const std::uint32_t b = stack & 1, a = (stack >> 1) & 1;
        stack = (stack >> 2 << 1) | (a | b);
        break;
      }
      default:
        stack = (stack << 1) | 1u;
    }
  }
  return stack & 1;
}

/// Per-thread tallies, summed per warp and added to the layer counters once per warp (every lane of
/// the warp must call flush).
struct Tally {
  long long hole_change = 0;
  unsigned long long dropped = 0;
  unsigned long long members = 0;
  double discarded = 0.0;

  __device__ void flush(LayerCounters* counters) {
    for (int offset = 16; offset > 0; offset >>= 1) {
      hole_change += __shfl_down_sync(0xffffffffu, hole_change, offset);
      dropped += __shfl_down_sync(0xffffffffu, dropped, offset);
      members += __shfl_down_sync(0xffffffffu, members, offset);
      discarded += __shfl_down_sync(0xffffffffu, discarded, offset);
    }
    if ((threadIdx.x & 31) == 0) {
      if (hole_change) atomicAdd(reinterpret_cast<unsigned long long*>(&counters->hole_change),
                                 static_cast<unsigned long long>(hole_change));
      if (dropped) atomicAdd(&counters->dropped, dropped);
      if (members) atomicAdd(&counters->members, members);
      if (discarded != 0.0 || discarded != discarded) atomicAdd(&counters->discarded, discarded);
    }
  }
};

/// Reserves n consecutive places at *cursor for this lane, one atomic per warp: every lane of the
/// warp must call it (n = 0 for lanes with nothing to place). Returns the first place of this lane.
__device__ __forceinline__ unsigned long long warp_reserve(unsigned long long* cursor, unsigned n) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  unsigned inclusive = n;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned v = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += v;
  }
  unsigned long long base = 0;
  if (lane == 31 && inclusive != 0) base = atomicAdd(cursor, static_cast<unsigned long long>(inclusive));
  base = __shfl_sync(0xffffffffu, base, 31);
  return base + inclusive - n;
}

/// Final coefficient of a term written in place: drops exact zeros and what the test rejects.
template <bool Cx>
__device__ __forceinline__ void settle(Tally& tally, const TermProgram& program, void* coef, std::size_t i,
                                       bool was_live, C2 value, int weight) {
  bool live = !is_zero<Cx>(value);
  if (live && !keep_term(program, norm2<Cx>(value), weight)) {
    ++tally.dropped;
    tally.discarded += norm2<Cx>(value);
    live = false;
  }
  if (!live) value = {0.0, 0.0};
  store_coef<Cx>(coef, i, value);
  tally.hole_change += static_cast<long long>(was_live && !live) - static_cast<long long>(!was_live && live);
}

__device__ __forceinline__ std::size_t thread_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t thread_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  const std::size_t cap = static_cast<std::size_t>(multiprocessors()) * 16;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks < cap ? blocks : cap));
}

}  // namespace
}  // namespace paulistrings::gpu::kernels
