#pragma once
// Kernels of Pauli rotations of any weight: their hash join (insert, then write), blocks of 2 to 4
// rotations as one join, and the remote rotation of a partitioned run.
// Part of kernels.cuh, which includes it after kernels_device.cuh; not a header of its own.

namespace paulistrings::gpu::kernels {
namespace {

// ---- the hash join (Pauli rotations of any weight) ----

/// Parity of the symplectic product of a and g over the words where g has support (2W-word loop,
/// loads skipped where g is zero: a weight-2 rotation reads two words of a key in memory).
template <int W>
__device__ __forceinline__ bool odd_product(const Key<W>& a, const Key<W>& g) {
  std::uint64_t parity = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if ((g.x[w] | g.z[w]) == 0) continue;
    parity ^= (a.x[w] & g.z[w]) ^ (a.z[w] & g.x[w]);
  }
  return __popcll(parity) & 1;
}
/// odd_product of stored key i, read in place.
template <int W>
__device__ __forceinline__ bool anticommutes(const Key<W>* keys, std::size_t i, const Key<W>& g) {
  return odd_product(keys[i], g);
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
/// +1 when g·Q = −i (g ⊕ Q) (product phase 3), −1 when g·Q = +i (g ⊕ Q); Q anticommutes with g. Words
/// where g is the identity add nothing to the phase and are skipped.
template <int W>
__device__ __forceinline__ double rotation_sign(const Key<W>& g, const Key<W>& q) {
  int k = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if ((g.x[w] | g.z[w]) == 0) continue;
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

// ---- blocks of rotations (RotationBlock): one join for 2 to 4 rotations ----

/// Whether key i anticommutes with any of the block's generators (reading only the words they need).
template <int W>
__device__ __forceinline__ bool anticommutes_any(const Key<W>* keys, std::size_t i,
                                                 const RotationBlock<W>& t) {
  std::uint32_t odd = 0;  // bit r: parity of the symplectic product with g_r
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if (!t.need_x[w] && !t.need_z[w]) continue;
    const std::uint64_t x = t.need_x[w] ? keys[i].x[w] : 0, z = t.need_z[w] ? keys[i].z[w] : 0;
#pragma unroll
    for (int r = 0; r < RotationBlock<W>::kMaxRotations; ++r) {
      if (r >= t.rotations) break;
      odd ^= static_cast<std::uint32_t>(__popcll((x & t.generator[r].z[w]) ^ (z & t.generator[r].x[w])) & 1)
             << r;
    }
  }
  return odd != 0;
}
/// The key's orbit representative (pivot bits cleared by the basis) and its coordinate in generator terms.
template <int W>
__device__ __forceinline__ Key<W> block_rep(Key<W> key, const RotationBlock<W>& t, int& coord) {
  int echelon = 0;
#pragma unroll
  for (int j = 0; j < RotationBlock<W>::kMaxRotations; ++j) {
    if (j >= t.rotations) break;
    if (pivot_set(key, t.pivot_word[j], t.pivot_bit[j])) {
      key = xor_key(key, t.basis[j]);
      echelon |= 1 << j;
    }
  }
  coord = t.coord_of[echelon];
  return key;
}
/// The member at coordinate c: rep ⊕ the generators c names.
template <int W, int Rotations>
__device__ __forceinline__ Key<W> block_member(Key<W> key, const RotationBlock<W>& t, int c) {
#pragma unroll
  for (int r = 0; r < Rotations; ++r) {
    if ((c >> r) & 1) key = xor_key(key, t.generator[r]);
  }
  return key;
}
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) join_insert_block_kernel(LayerArgs<W> a, RotationBlock<W> t) {
  Tally tally;
  const std::size_t orbit = std::size_t{1} << t.rotations;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    // A term that commutes with every generator is left alone by each rotation and is no rotation's
    // output (an output anticommutes with the generator that made it): it stays out of the join.
    if (!anticommutes_any(a.keys, i, t)) continue;
    ++tally.members;
    int coord = 0;
    const Key<W> rep = block_rep(a.keys[i], t, coord);
    const auto rep_of = [&](std::size_t j) {
      int unused = 0;
      return block_rep(a.keys[j], t, unused);
    };
    const std::size_t h = find_slot(a.table, a.counters, rep, i, rep_of);
    a.table.members[h * orbit + coord] = static_cast<std::uint32_t>(i + 1);
  }
  tally.flush(a.counters);
}

/// One thread per orbit, a warp at a time (as join_rotation_kernel): the members' coefficients in
/// registers (absent ones zero), then rotation r = 0, 1, … pairs each member c that anticommutes with
/// g_r with c ^ 2^r — both outputs computed as join_rotation_kernel computes them and tested (a dropped
/// or zero output is absent from then on) — then stored members are written in place and the live
/// new ones appended. (No count pass: the host declines a block it cannot make room for.)
template <int W, bool Cx, int Rotations>
__global__ void __launch_bounds__(kThreads) join_block_kernel(LayerArgs<W> a, RotationBlock<W> t) {
  constexpr int Orbit = 1 << Rotations;
  Tally tally;
  long long change[Rotations] = {};
  double lost[Rotations] = {};
  const std::size_t groups = static_cast<std::size_t>(a.counters->groups);
  const std::size_t lane = threadIdx.x & 31;
  for (std::size_t first = thread_index() - lane; first < groups; first += thread_stride()) {
    const std::size_t g = first + lane;
    const bool active = g < groups;
    std::size_t h = 0;
    Key<W> rep{};
    C2 v[Orbit];
    std::uint32_t index[Orbit];
    std::uint32_t fresh_mask = 0;
    if (active) {
      h = a.table.groups[g];
      int unused = 0;
      rep = block_rep(a.keys[a.table.owner[h] - 1], t, unused);
      const std::uint32_t* members = a.table.members + h * static_cast<std::size_t>(Orbit);
      std::uint32_t live_in = 0;
#pragma unroll
      for (int c = 0; c < Orbit; ++c) {
        index[c] = members[c];
        v[c] = index[c] ? load_coef<Cx>(a.coef, index[c] - 1) : C2{0.0, 0.0};
        live_in |= (is_zero<Cx>(v[c]) ? 0u : 1u) << c;
      }
#pragma unroll
      for (int r = 0; r < Rotations; ++r) {
        const bool rep_odd = odd_product(rep, t.generator[r]);
        const double cos_theta = t.cos_theta[r], sin_signed = t.sin_signed[r];
#pragma unroll
        for (int c = 0; c < Orbit; ++c) {
          if ((c >> r) & 1) continue;  // each pair {c, c ^ 2^r} once, from its member without g_r
          const int c2 = c | (1 << r);
          if (!(rep_odd ^ (__popc(static_cast<unsigned>(c) & t.odd[r]) & 1))) continue;
          if (is_zero<Cx>(v[c]) && is_zero<Cx>(v[c2])) continue;
          const Key<W> member = block_member<W, Rotations>(rep, t, c);
          const double sign = rotation_sign(t.generator[r], member);  // s(c); s(c2) = −s(c)
          const C2 out0 = add(scale<Cx>(v[c], cos_theta), scale<Cx>(v[c2], -sign * sin_signed));
          const C2 out1 = add(scale<Cx>(v[c2], cos_theta), scale<Cx>(v[c], sign * sin_signed));
          int weight0 = 0, weight1 = 0;
          if (a.program.uses_weight) {
            weight0 = weight_of(member);
            weight1 = weight_of(xor_key(member, t.generator[r]));
          }
          // The per-term test on both outputs, as settle applies it.
          const auto tested = [&](C2 out, bool was_live, int weight) {
            bool live = !is_zero<Cx>(out);
            if (live && !keep_term(a.program, norm2<Cx>(out), weight)) {
              lost[r] += norm2<Cx>(out);
              ++tally.dropped;
              tally.discarded += norm2<Cx>(out);
              live = false;
            }
            change[r] += static_cast<long long>(live) - static_cast<long long>(was_live);
            return live ? out : C2{0.0, 0.0};
          };
          const bool live0 = !is_zero<Cx>(v[c]), live1 = !is_zero<Cx>(v[c2]);
          v[c] = tested(out0, live0, weight0);
          v[c2] = tested(out1, live1, weight1);
        }
      }
#pragma unroll
      for (int c = 0; c < Orbit; ++c) {
        const bool live = !is_zero<Cx>(v[c]);
        if (index[c]) {
          if (live || ((live_in >> c) & 1)) store_coef<Cx>(a.coef, index[c] - 1, v[c]);
          tally.hole_change += static_cast<long long>(((live_in >> c) & 1) && !live) -
                               static_cast<long long>(!((live_in >> c) & 1) && live);
        } else if (live) {
          fresh_mask |= 1u << c;
        }
      }
    }
    std::size_t at =
        a.append_base + warp_reserve(&a.counters->appended, static_cast<unsigned>(__popc(fresh_mask)));
    if (!active) continue;
#pragma unroll
    for (int c = 0; c < Orbit; ++c) {
      if (!((fresh_mask >> c) & 1)) continue;
      a.keys[at] = block_member<W, Rotations>(rep, t, c);
      store_coef<Cx>(a.coef, at, v[c]);
      ++at;
    }
    a.table.owner[h] = 0;
    std::uint32_t* members = a.table.members + h * static_cast<std::size_t>(Orbit);
#pragma unroll
    for (int c = 0; c < Orbit; ++c) members[c] = 0;
  }
  tally.flush(a.counters);
  // Per rotation: the change in live terms and the weight dropped, one atomic per warp each.
#pragma unroll
  for (int r = 0; r < Rotations; ++r) {
    long long n = change[r];
    double d = lost[r];
    for (int offset = 16; offset > 0; offset >>= 1) {
      n += __shfl_down_sync(0xffffffffu, n, offset);
      d += __shfl_down_sync(0xffffffffu, d, offset);
    }
    if (lane == 0) {
      if (n) atomicAdd(&t.per_layer[r], static_cast<unsigned long long>(n));
      if (d != 0.0 || d != d)
        atomicAdd(reinterpret_cast<double*>(&t.per_layer[RotationBlock<W>::kMaxRotations + r]), d);
    }
  }
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

}  // namespace
}  // namespace paulistrings::gpu::kernels
