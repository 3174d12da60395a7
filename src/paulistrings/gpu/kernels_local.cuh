#pragma once
// Kernels of local tables: key-preserving layers (rescale) and permutations in place, one thread
// per term, and the hash join of general tables on the orbit representative (insert, then write).
// Part of kernels.cuh, which includes it after kernels_device.cuh; not a header of its own.

namespace paulistrings::gpu::kernels {
namespace {

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

}  // namespace
}  // namespace paulistrings::gpu::kernels
