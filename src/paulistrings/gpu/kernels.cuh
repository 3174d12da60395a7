#pragma once
// The GPU engine's kernels and the definitions of Launch<W, Cx>'s members (see kernels.h for the data
// layout and device_sum_layers.cc for the pipeline). Included only by kernels_instance.cu, which nvcc
// compiles once for each (width, coefficient type): ten translation units built in parallel instead of
// one, the longest edge of the build (docs/PERFORMANCE.md, "2026-12-02 — device build split; GPU general-table fusion A/B with repeats; key equality without memcmp", "Device build").
// Everything here but Launch's members is in an anonymous namespace, so each unit has its own copy.
//
// Compiled by nvcc for sm_90 (+ PTX) with -fmad=false, so every product and sum rounds exactly as the
// CPU engines' do (truncation decisions on a threshold then agree with the CPU reference).
//
// One layer kind per kernel family:
//  - rescale / permute: one thread per term, in place (a key-preserving layer rewrites only the
//    coefficient, a permutation rewrites the support bits of the key too; keys stay unique);
//  - join (general tables and rotations): a hash join on the orbit representative. insert puts
//    every term whose pattern can move into a slot keyed by its representative (terms that only
//    rescale are done in place there) and counts groups and members, which bound the new keys
//    (groups · orbit − members); write updates present members in place and appends the new keys
//    at a cursor (one atomic per warp). Orbits never share outputs, so no sort and no merge of
//    duplicate keys is needed. Only when the bound does not fit in memory does a count pass give the
//    exact number first.

#include <string>

#include "paulistrings/gpu/cuda_check.h"
#include "paulistrings/gpu/kernels.h"

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

// ---- key-preserving and permutation layers ----

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) rescale_kernel(LayerArgs<W> a, LocalTable t) {
  __shared__ double amp_re[16], amp_im[16];
  __shared__ int skip[16];
  if (threadIdx.x < 16) {
    amp_re[threadIdx.x] = t.amp_re[threadIdx.x][threadIdx.x];
    amp_im[threadIdx.x] = t.amp_im[threadIdx.x][threadIdx.x];
    skip[threadIdx.x] = t.join[threadIdx.x];  // orbit members were written by the join
  }
  __syncthreads();
  Tally tally;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    const C2 c = load_coef<Cx>(a.coef, i);
    if (is_zero<Cx>(c)) continue;
    const int s = pattern_at(a.keys, i, t.support_size, t.qubit[0], t.qubit[1]);
    if (skip[s]) continue;
    const int weight = a.program.uses_weight ? weight_of(a.keys[i]) : 0;
    settle<Cx>(tally, a.program, a.coef, i, true, mul<Cx>(c, amp_re[s], amp_im[s]), weight);
  }
  tally.flush(a.counters);
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) permute_kernel(LayerArgs<W> a, LocalTable t) {
  __shared__ double amp_re[16], amp_im[16];
  __shared__ int image[16];
  if (threadIdx.x < 16) {
    const int s = threadIdx.x, o = t.image[s];
    image[s] = o;
    amp_re[s] = o == 0xff ? 0.0 : t.amp_re[o][s];
    amp_im[s] = o == 0xff ? 0.0 : t.amp_im[o][s];
  }
  __syncthreads();
  Tally tally;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    Key<W> key = a.keys[i];
    const int s = pattern_of(key, t.support_size, t.qubit[0], t.qubit[1]);
    const int o = image[s];
    if (o != 0xff && o != s) {
      set_pattern(key, t.support_size, t.qubit[0], t.qubit[1], o);
      a.keys[i] = key;
    }
    const C2 c = load_coef<Cx>(a.coef, i);
    const bool was_live = !is_zero<Cx>(c);
    if (!was_live) continue;  // a hole moves with its key, so keys stay unique
    const int weight = a.program.uses_weight ? weight_of(key) : 0;
    settle<Cx>(tally, a.program, a.coef, i, true, mul<Cx>(c, amp_re[s], amp_im[s]), weight);
  }
  tally.flush(a.counters);
}

// ---- the hash join (general local tables) ----

struct SharedLocal {
  double amp_re[16][16];
  double amp_im[16][16];
  int join[16], rep[16], coord[16], combo[16];
};

__device__ void stage_local(SharedLocal& sh, const LocalTable& t) {
  for (int k = threadIdx.x; k < 256; k += blockDim.x) {
    sh.amp_re[k >> 4][k & 15] = t.amp_re[k >> 4][k & 15];
    sh.amp_im[k >> 4][k & 15] = t.amp_im[k >> 4][k & 15];
  }
  if (threadIdx.x < 16) {
    sh.join[threadIdx.x] = t.join[threadIdx.x];
    sh.rep[threadIdx.x] = t.rep[threadIdx.x];
    sh.coord[threadIdx.x] = t.coord[threadIdx.x];
    sh.combo[threadIdx.x] = t.combo[threadIdx.x];
  }
  __syncthreads();
}

/// Claims or finds the slot of representative `rep`; `rep_of(j)` gives term j's representative.
/// A claimed slot joins the group list (one atomic per warp of claimers).
__device__ __forceinline__ void list_group(const JoinTable& table, LayerCounters* counters, std::size_t h) {
  const unsigned mask = __activemask();
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int leader = __ffs(mask) - 1;
  unsigned long long base = 0;
  if (lane == leader) base = atomicAdd(&counters->groups, static_cast<unsigned long long>(__popc(mask)));
  base = __shfl_sync(mask, base, leader);
  table.groups[base + static_cast<unsigned long long>(__popc(mask & ((1u << lane) - 1)))] =
      static_cast<std::uint32_t>(h);
}

template <int W, class RepOf>
__device__ __forceinline__ std::size_t find_slot(const JoinTable& table, LayerCounters* counters, const Key<W>& rep,
                                                 std::size_t i, RepOf&& rep_of) {
  const std::size_t mask = table.capacity - 1;
  std::size_t h = static_cast<std::size_t>(key_hash(rep)) & mask;
  const std::uint32_t me = static_cast<std::uint32_t>(i + 1);
  for (;;) {
    std::uint32_t owner = table.owner[h];
    if (owner == 0) {
      owner = atomicCAS(&table.owner[h], 0u, me);
      if (owner == 0) {
        list_group(table, counters, h);
        return h;
      }
    }
    if (keys_equal(rep_of(static_cast<std::size_t>(owner - 1)), rep)) return h;
    h = (h + 1) & mask;
  }
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) join_insert_local_kernel(LayerArgs<W> a, LocalTable t) {
  __shared__ SharedLocal sh;
  stage_local(sh, t);
  const int n_support = t.support_size, q0 = t.qubit[0], q1 = t.qubit[1];
  Tally tally;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    const int s = pattern_at(a.keys, i, n_support, q0, q1);
    if (!sh.join[s]) continue;  // rescaled in place after the join (a failed growth leaves the sum intact)
    ++tally.members;
    Key<W> rep = a.keys[i];
    set_pattern(rep, n_support, q0, q1, sh.rep[s]);
    const auto rep_of = [&](std::size_t j) {
      Key<W> other = a.keys[j];
      set_pattern(other, n_support, q0, q1, sh.rep[pattern_of(other, n_support, q0, q1)]);
      return other;
    };
    const std::size_t h = find_slot(a.table, a.counters, rep, i, rep_of);
    a.table.members[h * static_cast<std::size_t>(t.orbit_size) + sh.coord[s]] = static_cast<std::uint32_t>(i + 1);
  }
  tally.flush(a.counters);
}

/// The outputs of one orbit: out[k] = Σ_j A[p_k][p_j] c_j over present members j.
template <bool Cx, int Orbit>
__device__ __forceinline__ C2 orbit_output(const SharedLocal& sh, int rp, int k, const C2* in, std::uint32_t present) {
  const int pk = rp ^ sh.combo[k];
  C2 out{0.0, 0.0};
#pragma unroll
  for (int j = 0; j < Orbit; ++j) {
    if (!((present >> j) & 1)) continue;
    const int pj = rp ^ sh.combo[j];
    const double ar = sh.amp_re[pk][pj], ai = sh.amp_im[pk][pj];
    if (ar == 0.0 && ai == 0.0) continue;  // no output there: never emitted (signed zeros stay)
    out = add(out, mul<Cx>(in[j], ar, ai));
  }
  return out;
}

/// One thread per group, the loop advancing a whole warp at a time (warp_reserve needs every lane).
/// Write = false adds the keys that would be appended to LayerCounters::fresh and changes nothing;
/// Write = true updates present members in place, appends the new keys at the cursor and empties
/// the slot. Route (a remote layer fused with its export, JoinExport): an output whose delta from the
/// orbit's reference member leaves goes to its export slot instead — counted into e.cursor[slot]
/// (Write = false) or written at it (Write = true), never appended; a stored member whose output leaves
/// becomes a hole. The reference is the first live stored member (every live term lies in this
/// partition; a hole may have another's key, so its output may leave), or with e.final_outputs the
/// orbit's representative (it lies here; the members may not), and then the leavers are tested first.
template <int W, bool Cx, bool Write, int Orbit, bool Route>
__global__ void __launch_bounds__(kThreads) join_local_kernel(LayerArgs<W> a, LocalTable t, JoinExport<W> e) {
  __shared__ SharedLocal sh;
  __shared__ std::uint8_t leave_slot[16];  // export slot by delta pattern (Route)
  if constexpr (Route) {
    if (threadIdx.x < 16) leave_slot[threadIdx.x] = e.slot[threadIdx.x];
  }
  stage_local(sh, t);  // synchronizes
  const int n_support = t.support_size, q0 = t.qubit[0], q1 = t.qubit[1];
  const std::size_t groups = static_cast<std::size_t>(a.counters->groups);
  const std::size_t lane = threadIdx.x & 31;
  Tally tally;
  for (std::size_t first = thread_index() - lane; first < groups; first += thread_stride()) {
    const std::size_t g = first + lane;
    const bool active = g < groups;
    std::size_t h = 0;
    Key<W> key{};
    int rp = 0, base_weight = 0;
    C2 in[Orbit];
    std::uint32_t index[Orbit];
    std::uint32_t present = 0, fresh_mask = 0, leave_mask = 0;
    int reference = 0;  // combo of the member the outputs' deltas are taken from (Route)
    if (active) {
      h = a.table.groups[g];
      key = a.keys[a.table.owner[h] - 1];
      const int s0 = pattern_of(key, n_support, q0, q1);
      rp = sh.rep[s0];
      base_weight = a.program.uses_weight ? weight_of(key) - pattern_weight(s0) : 0;
      const std::uint32_t* members = a.table.members + h * static_cast<std::size_t>(Orbit);
#pragma unroll
      for (int j = 0; j < Orbit; ++j) {
        index[j] = members[j];
        in[j] = index[j] ? load_coef<Cx>(a.coef, index[j] - 1) : C2{0.0, 0.0};
        present |= (index[j] ? 1u : 0u) << j;
      }
      if constexpr (Route) {
        if (!e.final_outputs) {
          std::uint32_t live = 0;
#pragma unroll
          for (int j = 0; j < Orbit; ++j) live |= (is_zero<Cx>(in[j]) ? 0u : 1u) << j;
          // No live member: every output is zero, nothing is written or leaves.
          reference = sh.combo[__ffs(static_cast<int>(live != 0 ? live : present)) - 1];
        }
      }
#pragma unroll
      for (int k = 0; k < Orbit; ++k) {
        const bool here = (present >> k) & 1;
        bool leaves = false;
        if constexpr (Route) leaves = leave_slot[sh.combo[k] ^ reference] < e.slots;
        if (!Write && here && !leaves) continue;  // counting: only new keys and leavers matter
        const C2 out = orbit_output<Cx, Orbit>(sh, rp, k, in, present);
        const int weight = base_weight + pattern_weight(rp ^ sh.combo[k]);
        if (here && !leaves) {  // a stored key that stays
          if constexpr (Write) settle<Cx>(tally, a.program, a.coef, index[k] - 1, !is_zero<Cx>(in[k]), out, weight);
          continue;
        }
        if (here && !is_zero<Cx>(in[k])) {  // a stored key whose output leaves: it becomes a hole
          if constexpr (Write) {
            store_coef<Cx>(a.coef, index[k] - 1, C2{0.0, 0.0});
            ++tally.hole_change;
          }
        }
        if (is_zero<Cx>(out)) continue;
        if (leaves) {
          if (!e.final_outputs || keep_term(a.program, norm2<Cx>(out), weight)) {
            leave_mask |= 1u << k;
          } else if constexpr (Write) {
            ++tally.dropped;
            tally.discarded += norm2<Cx>(out);
          }
          continue;
        }
        if (keep_term(a.program, norm2<Cx>(out), weight)) {
          fresh_mask |= 1u << k;
        } else if constexpr (Write) {
          ++tally.dropped;
          tally.discarded += norm2<Cx>(out);
        }
      }
    }
    if constexpr (Route) {
      // Slot by slot (every lane takes part in each reservation): count, or write the leaving rows.
      for (int slot = 0; slot < e.slots; ++slot) {
        unsigned n = 0;
#pragma unroll
        for (int k = 0; k < Orbit; ++k) {
          n += ((leave_mask >> k) & 1) && leave_slot[sh.combo[k] ^ reference] == slot ? 1u : 0u;
        }
        unsigned long long to = warp_reserve(&e.cursor[slot], n);
        if constexpr (Write) {
#pragma unroll
          for (int k = 0; k < Orbit; ++k) {
            if (!((leave_mask >> k) & 1) || leave_slot[sh.combo[k] ^ reference] != slot) continue;
            Key<W> out_key = key;
            set_pattern(out_key, n_support, q0, q1, rp ^ sh.combo[k]);
            e.out_keys[to] = out_key;
            store_coef<Cx>(e.out_coef, to, orbit_output<Cx, Orbit>(sh, rp, k, in, present));
            ++to;
          }
        }
      }
    }
    if constexpr (!Write) {
      warp_reserve(&a.counters->fresh, static_cast<unsigned>(__popc(fresh_mask)));
      continue;
    }
    std::size_t at = a.append_base + warp_reserve(&a.counters->appended, static_cast<unsigned>(__popc(fresh_mask)));
    if (!active) continue;
#pragma unroll
    for (int k = 0; k < Orbit; ++k) {
      if (!((fresh_mask >> k) & 1)) continue;
      const int pk = rp ^ sh.combo[k];
      Key<W> fresh_key = key;
      set_pattern(fresh_key, n_support, q0, q1, pk);
      a.keys[at] = fresh_key;
      store_coef<Cx>(a.coef, at, orbit_output<Cx, Orbit>(sh, rp, k, in, present));
      ++at;
    }
    a.table.owner[h] = 0;
    std::uint32_t* members = a.table.members + h * static_cast<std::size_t>(Orbit);
#pragma unroll
    for (int j = 0; j < Orbit; ++j) members[j] = 0;
  }
  if constexpr (Write) tally.flush(a.counters);
}

// ---- the hash join (Pauli rotations of any weight) ----

/// Parity of the symplectic product of key and g over the words where g has support (2W-word loop,
/// loads skipped where g is zero: a weight-2 rotation reads two words of each key).
template <int W>
__device__ __forceinline__ bool anticommutes(const Key<W>* keys, std::size_t i, const Key<W>& g) {
  std::uint64_t parity = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if ((g.x[w] | g.z[w]) == 0) continue;
    parity ^= (keys[i].x[w] & g.z[w]) ^ (keys[i].z[w] & g.x[w]);
  }
  return __popcll(parity) & 1;
}
template <int W>
__device__ __forceinline__ bool pivot_set(const Key<W>& k, int pivot_word, std::uint64_t pivot_bit) {
  const std::uint64_t word = pivot_word < W ? k.x[pivot_word] : k.z[pivot_word - W];
  return (word & pivot_bit) != 0;
}
template <int W>
__device__ __forceinline__ Key<W> xor_key(Key<W> a, const Key<W>& b) {
#pragma unroll
  for (int w = 0; w < W; ++w) {
    a.x[w] ^= b.x[w];
    a.z[w] ^= b.z[w];
  }
  return a;
}
/// +1 when g·Q = −i (g ⊕ Q) (product phase 3), −1 when g·Q = +i (g ⊕ Q); Q anticommutes with g.
template <int W>
__device__ __forceinline__ double rotation_sign(const Key<W>& g, const Key<W>& q) {
  int k = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const std::uint64_t x3 = g.x[w] ^ q.x[w], z3 = g.z[w] ^ q.z[w];
    k += __popcll(g.x[w] & g.z[w]) + __popcll(q.x[w] & q.z[w]) - __popcll(x3 & z3) + 2 * __popcll(g.z[w] & q.x[w]);
  }
  return (k & 3) == 3 ? 1.0 : -1.0;
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) join_insert_rotation_kernel(LayerArgs<W> a, RotationTable<W> t) {
  Tally tally;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    // Commuting terms are unchanged (a policy new to them is tested after the write pass); the insert
    // writes only the table, so a layer that then fails to grow leaves the sum as it was.
    if (!anticommutes(a.keys, i, t.generator)) continue;
    ++tally.members;
    const Key<W> key = a.keys[i];
    const bool coord = pivot_set(key, t.pivot_word, t.pivot_bit);
    const Key<W> rep = coord ? xor_key(key, t.generator) : key;
    const auto rep_of = [&](std::size_t j) {
      const Key<W> other = a.keys[j];
      return pivot_set(other, t.pivot_word, t.pivot_bit) ? xor_key(other, t.generator) : other;
    };
    const std::size_t h = find_slot(a.table, a.counters, rep, i, rep_of);
    a.table.members[2 * h + coord] = static_cast<std::uint32_t>(i + 1);
  }
  tally.flush(a.counters);
}

/// As join_local_kernel, for the orbits {rep, rep ⊕ g} of a rotation.
template <int W, bool Cx, bool Write>
__global__ void __launch_bounds__(kThreads) join_rotation_kernel(LayerArgs<W> a, RotationTable<W> t) {
  Tally tally;
  const double cos_theta = t.cos_theta, sin_signed = t.sin_signed;
  const std::size_t groups = static_cast<std::size_t>(a.counters->groups);
  const std::size_t lane = threadIdx.x & 31;
  for (std::size_t first = thread_index() - lane; first < groups; first += thread_stride()) {
    const std::size_t g = first + lane;
    const bool active = g < groups;
    std::size_t h = 0;
    bool fresh = false;
    Key<W> fresh_key{};
    C2 partner{0.0, 0.0};
    if (active) {
      h = a.table.groups[g];
      const Key<W> key = a.keys[a.table.owner[h] - 1];
      const Key<W> rep = pivot_set(key, t.pivot_word, t.pivot_bit) ? xor_key(key, t.generator) : key;
      const double sign0 = rotation_sign(t.generator, rep);  // s(rep); s(rep ⊕ g) = −s(rep)
      const std::uint32_t m0 = a.table.members[2 * h], m1 = a.table.members[2 * h + 1];
      int weight0 = 0, weight1 = 0;
      if (a.program.uses_weight) {
        weight0 = weight_of(rep);
        weight1 = weight_of(xor_key(rep, t.generator));
      }
      if (m0 && m1) {
        if constexpr (Write) {
          const C2 c0 = load_coef<Cx>(a.coef, m0 - 1), c1 = load_coef<Cx>(a.coef, m1 - 1);
          const C2 out0 = add(scale<Cx>(c0, cos_theta), scale<Cx>(c1, -sign0 * sin_signed));
          const C2 out1 = add(scale<Cx>(c1, cos_theta), scale<Cx>(c0, sign0 * sin_signed));
          settle<Cx>(tally, a.program, a.coef, m0 - 1, !is_zero<Cx>(c0), out0, weight0);
          settle<Cx>(tally, a.program, a.coef, m1 - 1, !is_zero<Cx>(c1), out1, weight1);
        }
      } else {
        const bool second = m1 != 0;  // the present member is coordinate 1 (rep ⊕ g)
        const std::uint32_t m = second ? m1 : m0;
        const C2 c = load_coef<Cx>(a.coef, m - 1);
        const double sign = second ? -sign0 : sign0;
        partner = scale<Cx>(c, sign * sin_signed);
        const int partner_weight = second ? weight0 : weight1;
        fresh = !is_zero<Cx>(partner) && keep_term(a.program, norm2<Cx>(partner), partner_weight);
        if constexpr (Write) {
          settle<Cx>(tally, a.program, a.coef, m - 1, !is_zero<Cx>(c), scale<Cx>(c, cos_theta),
                     second ? weight1 : weight0);
          if (fresh) {
            fresh_key = second ? rep : xor_key(rep, t.generator);
          } else if (!is_zero<Cx>(partner)) {
            ++tally.dropped;
            tally.discarded += norm2<Cx>(partner);
          }
        }
      }
    }
    if constexpr (!Write) {
      warp_reserve(&a.counters->fresh, fresh ? 1u : 0u);
      continue;
    }
    const std::size_t at = a.append_base + warp_reserve(&a.counters->appended, fresh ? 1u : 0u);
    if (!active) continue;
    if (fresh) {
      a.keys[at] = fresh_key;
      store_coef<Cx>(a.coef, at, partner);
    }
    a.table.owner[h] = 0;
    a.table.members[2 * h] = 0;
    a.table.members[2 * h + 1] = 0;
  }
  if constexpr (Write) tally.flush(a.counters);
}

/// A rotation whose generator crosses partitions: no orbit {Q, Q ⊕ g} has both members in this
/// partition, so there is nothing to join. Each live anticommuting term keeps cos θ·c in place and
/// its partner sin_signed·s(Q)·c (key Q ⊕ g, another partition's) goes to out_keys/out_coef at
/// *cursor (count pass: only the cursor advances). s(Q) as in join_rotation_kernel.
template <int W, bool Cx, bool Write>
__global__ void __launch_bounds__(kThreads) remote_rotation_kernel(LayerArgs<W> a, RotationTable<W> t,
                                                                    unsigned long long* cursor, Key<W>* out_keys,
                                                                    void* out_coef) {
  Tally tally;
  const std::size_t lane = threadIdx.x & 31;
  for (std::size_t first = thread_index() - lane; first < a.size; first += thread_stride()) {
    const std::size_t i = first + lane;
    bool emit = false;
    C2 partner{0.0, 0.0};
    if (i < a.size && anticommutes(a.keys, i, t.generator)) {
      const C2 c = load_coef<Cx>(a.coef, i);
      if (!is_zero<Cx>(c)) {
        const Key<W> key = a.keys[i];
        partner = scale<Cx>(c, rotation_sign(t.generator, key) * t.sin_signed);
        emit = !is_zero<Cx>(partner);
        if constexpr (Write) {
          const int weight = a.program.uses_weight ? weight_of(key) : 0;
          settle<Cx>(tally, a.program, a.coef, i, true, scale<Cx>(c, t.cos_theta), weight);
        }
      }
    }
    const unsigned long long at = warp_reserve(cursor, emit ? 1u : 0u);
    if constexpr (Write) {
      if (emit) {
        out_keys[at] = xor_key(a.keys[i], t.generator);
        store_coef<Cx>(out_coef, at, partner);
      }
    }
  }
  if constexpr (Write) tally.flush(a.counters);
}

// ---- layer passes and compaction ----

template <bool Cx>
__global__ void __launch_bounds__(kThreads) exponent_histogram_kernel(const void* coef, std::size_t n,
                                                                       unsigned long long* histogram) {
  __shared__ unsigned int local[2048];
  for (int k = threadIdx.x; k < 2048; k += blockDim.x) local[k] = 0;
  __syncthreads();
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const std::uint64_t bits = static_cast<std::uint64_t>(__double_as_longlong(norm2<Cx>(c)));
    atomicAdd(&local[(bits >> 52) & 0x7ff], 1u);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < 2048; k += blockDim.x) {
    if (local[k]) atomicAdd(&histogram[k], static_cast<unsigned long long>(local[k]));
  }
}

template <bool Cx>
__global__ void __launch_bounds__(kThreads) digit_histogram_kernel(const void* coef, std::size_t n,
                                                                    std::uint64_t prefix, std::uint64_t mask,
                                                                    int shift, unsigned long long* histogram) {
  __shared__ unsigned int local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const double m = norm2<Cx>(c);
    if (m != m) continue;  // NaN is never kept and never counted
    const std::uint64_t bits = static_cast<std::uint64_t>(__double_as_longlong(m));
    if ((bits & mask) == prefix) atomicAdd(&local[(bits >> shift) & 0xff], 1u);
  }
  __syncthreads();
  if (local[threadIdx.x]) atomicAdd(&histogram[threadIdx.x], static_cast<unsigned long long>(local[threadIdx.x]));
}

template <bool Cx>
__global__ void __launch_bounds__(kThreads) cut_kernel(void* coef, std::size_t n, int mode, int bin, double value,
                                                        LayerCounters* counters) {
  Tally tally;
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const double m = norm2<Cx>(c);
    bool keep;
    switch (mode) {
      case 0:
        keep = static_cast<int>((static_cast<std::uint64_t>(__double_as_longlong(m)) >> 52) & 0x7ff) >= bin;
        break;
      case 1:
        keep = m >= value;
        break;
      case 2:
        keep = m > value;
        break;
      default:
        keep = false;
    }
    if (keep) continue;
    ++tally.dropped;
    tally.discarded += m;
    ++tally.hole_change;
    store_coef<Cx>(coef, i, C2{0.0, 0.0});
  }
  tally.flush(counters);
}

template <bool Cx>
__global__ void __launch_bounds__(kThreads) live_flags_kernel(const void* coef, std::size_t n, std::uint32_t* flags) {
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    flags[i] = is_zero<Cx>(load_coef<Cx>(coef, i)) ? 0u : 1u;
  }
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) compact_kernel(const Key<W>* keys, const void* coef, std::size_t n,
                                                            const std::uint32_t* positions, Key<W>* out_keys,
                                                            void* out_coef) {
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const std::size_t at = positions[i];
    out_keys[at] = keys[i];
    store_coef<Cx>(out_coef, at, c);
  }
}

/// In-place compaction, step 1: flags[i] = 1 for the holes among the first `live` terms and for the
/// live terms after them (there are as many of one as of the other).
template <bool Cx>
__global__ void __launch_bounds__(kThreads) misplaced_flags_kernel(const void* coef, std::size_t live, std::size_t n,
                                                                    std::uint32_t* flags) {
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const bool zero = is_zero<Cx>(load_coef<Cx>(coef, i));
    flags[i] = (i < live ? zero : !zero) ? 1u : 0u;
  }
}

/// Step 2 (after an exclusive scan of the flags into ranks): holes[rank] = index of each hole below `live`.
template <bool Cx>
__global__ void __launch_bounds__(kThreads) hole_list_kernel(const void* coef, std::size_t live,
                                                              const std::uint32_t* ranks, std::uint32_t* holes) {
  for (std::size_t i = thread_index(); i < live; i += thread_stride()) {
    if (is_zero<Cx>(load_coef<Cx>(coef, i))) holes[ranks[i]] = static_cast<std::uint32_t>(i);
  }
}

/// Step 3: the k-th live term past `live` moves into the k-th hole below it (ranks[live] = holes below).
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) fill_holes_kernel(Key<W>* keys, void* coef, std::size_t live,
                                                               std::size_t n, const std::uint32_t* ranks,
                                                               const std::uint32_t* holes) {
  const std::uint32_t below = ranks[live];
  for (std::size_t j = live + thread_index(); j < n; j += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, j);
    if (is_zero<Cx>(c)) continue;
    const std::size_t to = holes[ranks[j] - below];
    keys[to] = keys[j];
    store_coef<Cx>(coef, to, c);
  }
}

// ---- partitioned runs: export of other partitions' terms, merge of received rows ----

template <int W>
__device__ __forceinline__ std::uint32_t part_of(const Key<W>& k, const Key<W>* rows, int bits) {
  std::uint32_t p = 0;
  for (int j = 0; j < bits; ++j) {
    std::uint64_t acc = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) acc ^= (rows[j].x[w] & k.x[w]) ^ (rows[j].z[w] & k.z[w]);
    p |= static_cast<std::uint32_t>(__popcll(acc) & 1) << j;
  }
  return p;
}

/// Export slot of term i (-1: stays; `split.slots`: a stray of no listed offset).
template <int W, bool Cx>
__device__ __forceinline__ int slot_of(const LayerArgs<W>& a, const PartitionSplit<W>& split, std::size_t i) {
  if (is_zero<Cx>(load_coef<Cx>(a.coef, i))) return -1;
  if (split.by_pattern) return split.pattern_slot[pattern_at(a.keys, i, split.support_size, split.qubit[0], split.qubit[1])];
  const std::uint32_t offset = part_of(a.keys[i], split.rows, split.bits) ^ split.self;
  if (offset == 0) return -1;
  for (int k = 0; k < split.slots; ++k) {
    if (split.offsets[k] == offset) return k;
  }
  return split.slots;
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) export_count_kernel(LayerArgs<W> a, PartitionSplit<W> split) {
  __shared__ unsigned int count[kMaxExportSlots + 1];
  if (threadIdx.x <= kMaxExportSlots) count[threadIdx.x] = 0;
  __syncthreads();
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    const int slot = slot_of<W, Cx>(a, split, i);
    if (slot >= 0) atomicAdd(&count[slot], 1u);
  }
  __syncthreads();
  if (threadIdx.x <= static_cast<unsigned>(split.slots) && count[threadIdx.x]) {
    atomicAdd(&split.cursor[threadIdx.x], static_cast<unsigned long long>(count[threadIdx.x]));
  }
}

// Every thread of a block walks the same number of tiles (the block synchronizes per tile).
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) export_write_kernel(LayerArgs<W> a, PartitionSplit<W> split,
                                                                Key<W>* out_keys, void* out_coef) {
  __shared__ unsigned int count[kMaxExportSlots + 1];
  __shared__ unsigned long long base[kMaxExportSlots + 1];
  Tally tally;
  for (std::size_t tile = static_cast<std::size_t>(blockIdx.x) * blockDim.x; tile < a.size;
       tile += thread_stride()) {
    if (threadIdx.x <= kMaxExportSlots) count[threadIdx.x] = 0;
    __syncthreads();
    const std::size_t i = tile + threadIdx.x;
    const int slot = i < a.size ? slot_of<W, Cx>(a, split, i) : -1;
    const unsigned at = slot >= 0 && slot < split.slots ? atomicAdd(&count[slot], 1u) : 0u;
    __syncthreads();
    if (threadIdx.x < static_cast<unsigned>(split.slots) && count[threadIdx.x]) {
      base[threadIdx.x] = atomicAdd(&split.cursor[threadIdx.x], static_cast<unsigned long long>(count[threadIdx.x]));
    }
    __syncthreads();
    if (slot >= 0 && slot < split.slots) {
      const std::size_t to = base[slot] + at;
      out_keys[to] = a.keys[i];
      store_coef<Cx>(out_coef, to, load_coef<Cx>(a.coef, i));
      store_coef<Cx>(a.coef, i, C2{0.0, 0.0});
      ++tally.hole_change;
    }
    __syncthreads();
  }
  tally.flush(a.counters);
}

template <int W>
__global__ void __launch_bounds__(kThreads) key_index_kernel(LayerArgs<W> a) {
  const std::size_t mask = a.table.capacity - 1;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    std::size_t h = static_cast<std::size_t>(key_hash(a.keys[i])) & mask;
    while (atomicCAS(&a.table.owner[h], 0u, static_cast<std::uint32_t>(i + 1)) != 0u) h = (h + 1) & mask;
  }
}

/// ORs this warp's cone words (x | z of the rows its threads read) into support[W]: one atomic a word
/// and warp. Every lane of the warp must call it.
template <int W>
__device__ __forceinline__ void flush_cone(std::uint64_t (&cone)[W], unsigned long long* support) {
#pragma unroll
  for (int w = 0; w < W; ++w) {
    for (int offset = 16; offset > 0; offset >>= 1) cone[w] |= __shfl_down_sync(0xffffffffu, cone[w], offset);
    if ((threadIdx.x & 31) == 0 && cone[w]) atomicOr(&support[w], static_cast<unsigned long long>(cone[w]));
  }
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) merge_rows_kernel(LayerArgs<W> a, const Key<W>* row_keys,
                                                              const void* row_coef, std::size_t rows,
                                                              unsigned long long* support) {
  const std::size_t mask = a.table.capacity - 1;
  Tally tally;
  std::uint64_t cone[W] = {};
  for (std::size_t r = thread_index(); r < rows; r += thread_stride()) {
    const Key<W> key = row_keys[r];
#pragma unroll
    for (int w = 0; w < W; ++w) cone[w] |= key.x[w] | key.z[w];
    const C2 c = load_coef<Cx>(row_coef, r);
    std::size_t h = static_cast<std::size_t>(key_hash(key)) & mask;
    std::size_t placed = ~std::size_t{0};  // this row's index once reserved
    while (true) {
      const std::uint32_t owner = *reinterpret_cast<volatile std::uint32_t*>(&a.table.owner[h]);
      if (owner == 0u) {
        // Absent: the row becomes a new term. Its key and value are written before the slot names it,
        // so a thread that reads the slot finds them (no other row of this batch has the same key).
        if (placed == ~std::size_t{0}) {
          placed = a.append_base + atomicAdd(&a.counters->appended, 1ull);
          a.keys[placed] = key;
          store_coef<Cx>(a.coef, placed, c);
          tally.hole_change += is_zero<Cx>(c) ? 1 : 0;
          __threadfence();
        }
        if (atomicCAS(&a.table.owner[h], 0u, static_cast<std::uint32_t>(placed + 1)) == 0u) break;
        continue;  // another new key took the slot: look at it again
      }
      const std::size_t i = owner - 1;
      if (keys_equal(a.keys[i], key)) {
        const C2 old = load_coef<Cx>(a.coef, i);
        const C2 sum = add(old, c);
        store_coef<Cx>(a.coef, i, sum);
        tally.hole_change += static_cast<long long>(is_zero<Cx>(sum)) - static_cast<long long>(is_zero<Cx>(old));
        break;
      }
      h = (h + 1) & mask;
    }
  }
  tally.flush(a.counters);
  flush_cone<W>(cone, support);
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) appended_rows_kernel(LayerArgs<W> a, std::size_t first, std::size_t rows,
                                                                 unsigned long long* support) {
  Tally tally;
  std::uint64_t cone[W] = {};
  for (std::size_t r = thread_index(); r < rows; r += thread_stride()) {
    const Key<W>& key = a.keys[first + r];
#pragma unroll
    for (int w = 0; w < W; ++w) cone[w] |= key.x[w] | key.z[w];
    tally.hole_change += is_zero<Cx>(load_coef<Cx>(a.coef, first + r)) ? 1 : 0;
  }
  tally.flush(a.counters);
  flush_cone<W>(cone, support);
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) term_test_kernel(LayerArgs<W> a) {
  Tally tally;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    const C2 c = load_coef<Cx>(a.coef, i);
    if (is_zero<Cx>(c)) continue;
    const int weight = a.program.uses_weight ? weight_of(a.keys[i]) : 0;
    settle<Cx>(tally, a.program, a.coef, i, true, c, weight);
  }
  tally.flush(a.counters);
}

/// After a launch: a launch that failed (bad configuration, no device, an earlier sticky error) throws
/// GpuError, as a failed CUDA call does (cuda_check.h).
void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) check(status, std::string("the launch of ").append(what).c_str());
}

}  // namespace

template <int W, bool Cx>
void Launch<W, Cx>::rescale(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  rescale_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("rescale");
}
template <int W, bool Cx>
void Launch<W, Cx>::permute(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  permute_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("permute");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_insert_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  join_insert_local_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_insert_local");
}
template <int W, bool Cx, bool Write, bool Route>
void launch_join_local(const LayerArgs<W>& args, const LocalTable& table, const JoinExport<W>& e,
                       cudaStream_t stream) {
  // One launch bound for every group count the insert can have made (the kernel reads the count).
  const unsigned grid = grid_for(args.size);
  switch (table.orbit_size) {
    case 1:
      join_local_kernel<W, Cx, Write, 1, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    case 2:
      join_local_kernel<W, Cx, Write, 2, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    case 4:
      join_local_kernel<W, Cx, Write, 4, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    case 8:
      join_local_kernel<W, Cx, Write, 8, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    default:
      join_local_kernel<W, Cx, Write, 16, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
  }
  check_launch(Write ? (Route ? "join_write_local (export)" : "join_write_local")
                     : (Route ? "join_count_local (export)" : "join_count_local"));
}
template <int W, bool Cx>
void Launch<W, Cx>::join_count_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, false, false>(args, table, JoinExport<W>{}, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, true, false>(args, table, JoinExport<W>{}, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_count_local_export(const LayerArgs<W>& args, const LocalTable& table,
                                            const JoinExport<W>& e, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, false, true>(args, table, e, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_local_export(const LayerArgs<W>& args, const LocalTable& table,
                                            const JoinExport<W>& e, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, true, true>(args, table, e, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_insert_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                         cudaStream_t stream) {
  if (args.size == 0) return;
  join_insert_rotation_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_insert_rotation");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_count_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                        cudaStream_t stream) {
  if (args.size == 0) return;
  join_rotation_kernel<W, Cx, false><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_count_rotation");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                        cudaStream_t stream) {
  if (args.size == 0) return;
  join_rotation_kernel<W, Cx, true><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_write_rotation");
}
template <int W, bool Cx>
void Launch<W, Cx>::export_count(const LayerArgs<W>& args, const PartitionSplit<W>& split, cudaStream_t stream) {
  if (args.size == 0) return;
  export_count_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, split);
  check_launch("export_count");
}
template <int W, bool Cx>
void Launch<W, Cx>::export_write(const LayerArgs<W>& args, const PartitionSplit<W>& split, Key<W>* out_keys,
                                 void* out_coef, cudaStream_t stream) {
  if (args.size == 0) return;
  export_write_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, split, out_keys, out_coef);
  check_launch("export_write");
}
template <int W, bool Cx>
void Launch<W, Cx>::key_index(const LayerArgs<W>& args, cudaStream_t stream) {
  if (args.size == 0) return;
  key_index_kernel<W><<<grid_for(args.size), kThreads, 0, stream>>>(args);
  check_launch("key_index");
}
template <int W, bool Cx>
void Launch<W, Cx>::appended_rows(const LayerArgs<W>& args, std::size_t first, std::size_t rows,
                                  unsigned long long* support, cudaStream_t stream) {
  if (rows == 0) return;
  appended_rows_kernel<W, Cx><<<grid_for(rows), kThreads, 0, stream>>>(args, first, rows, support);
  check_launch("appended_rows");
}

template <int W, bool Cx>
void Launch<W, Cx>::merge_rows(const LayerArgs<W>& args, const Key<W>* row_keys, const void* row_coef,
                               std::size_t rows, unsigned long long* support, cudaStream_t stream) {
  if (rows == 0) return;
  merge_rows_kernel<W, Cx><<<grid_for(rows), kThreads, 0, stream>>>(args, row_keys, row_coef, rows, support);
  check_launch("merge_rows");
}
template <int W, bool Cx>
void Launch<W, Cx>::term_test(const LayerArgs<W>& args, cudaStream_t stream) {
  if (args.size == 0) return;
  term_test_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args);
  check_launch("term_test");
}
template <int W, bool Cx>
void Launch<W, Cx>::exponent_histogram(const void* coef, std::size_t size, unsigned long long* histogram,
                                       cudaStream_t stream) {
  check(cudaMemsetAsync(histogram, 0, 2048 * sizeof(unsigned long long), stream), "memset histogram");
  if (size == 0) return;
  exponent_histogram_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, histogram);
  check_launch("exponent_histogram");
}
template <int W, bool Cx>
void Launch<W, Cx>::digit_histogram(const void* coef, std::size_t size, std::uint64_t prefix,
                                    std::uint64_t prefix_mask, int shift, unsigned long long* histogram,
                                    cudaStream_t stream) {
  check(cudaMemsetAsync(histogram, 0, 256 * sizeof(unsigned long long), stream), "memset histogram");
  if (size == 0) return;
  digit_histogram_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, prefix, prefix_mask, shift,
                                                                     histogram);
  check_launch("digit_histogram");
}
template <int W, bool Cx>
void Launch<W, Cx>::cut(void* coef, std::size_t size, int mode, int bin, double value,
                        LayerCounters* counters, cudaStream_t stream) {
  if (size == 0) return;
  cut_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, mode, bin, value, counters);
  check_launch("cut");
}
template <int W, bool Cx>
void Launch<W, Cx>::live_flags(const void* coef, std::size_t size, std::uint32_t* flags, cudaStream_t stream) {
  if (size == 0) return;
  live_flags_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, flags);
  check_launch("live_flags");
}
template <int W, bool Cx>
void Launch<W, Cx>::compact(const Key<W>* keys, const void* coef, std::size_t size, const std::uint32_t* positions,
                            Key<W>* out_keys, void* out_coef, cudaStream_t stream) {
  if (size == 0) return;
  compact_kernel<W, Cx><<<grid_for(size), kThreads, 0, stream>>>(keys, coef, size, positions, out_keys, out_coef);
  check_launch("compact");
}
template <int W, bool Cx>
void Launch<W, Cx>::misplaced_flags(const void* coef, std::size_t live, std::size_t size, std::uint32_t* flags,
                                    cudaStream_t stream) {
  if (size == 0) return;
  misplaced_flags_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, live, size, flags);
  check_launch("misplaced_flags");
}
template <int W, bool Cx>
void Launch<W, Cx>::fill_holes(Key<W>* keys, void* coef, std::size_t live, std::size_t size,
                               const std::uint32_t* ranks, std::uint32_t* holes, cudaStream_t stream) {
  if (live >= size) return;
  if (live > 0) hole_list_kernel<Cx><<<grid_for(live), kThreads, 0, stream>>>(coef, live, ranks, holes);
  fill_holes_kernel<W, Cx><<<grid_for(size - live), kThreads, 0, stream>>>(keys, coef, live, size, ranks, holes);
  check_launch("fill_holes");
}
template <int W, bool Cx>
void Launch<W, Cx>::remote_rotation_count(const LayerArgs<W>& args, const RotationTable<W>& table,
                                          unsigned long long* cursor, cudaStream_t stream) {
  if (args.size == 0) return;
  remote_rotation_kernel<W, Cx, false><<<grid_for(args.size), kThreads, 0, stream>>>(args, table, cursor, nullptr,
                                                                                      nullptr);
  check_launch("remote_rotation_count");
}
template <int W, bool Cx>
void Launch<W, Cx>::remote_rotation_write(const LayerArgs<W>& args, const RotationTable<W>& table,
                                          unsigned long long* cursor, Key<W>* out_keys, void* out_coef,
                                          cudaStream_t stream) {
  if (args.size == 0) return;
  remote_rotation_kernel<W, Cx, true><<<grid_for(args.size), kThreads, 0, stream>>>(args, table, cursor, out_keys,
                                                                                     out_coef);
  check_launch("remote_rotation_write");
}
}  // namespace paulistrings::gpu::kernels
