#pragma once
// The scan every Pauli rotation starts with: which keys of an array anticommute with the generator g.
// Most keys commute with a gate of one or two qubits, so the scan lists the others' indices without a
// branch per key, and ORs the support (x | z) of every key it reads (the engines' light cone).
//
// anticommuting_scan picks the widest form the processor runs, at run time: AVX-512 with 64-bit popcounts
// (eight keys an iteration) for one-word keys, else the portable loop. Both give the same list, in
// ascending order, and the same support. Wider keys stay portable (docs/design.md §7.2 says why).

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "paulistrings/core/pauli_string.h"

namespace paulistrings {

namespace scan_detail {

/// kOffsets[m]: the positions of the set bits of the 4-bit mask m, ascending (the rest 0).
inline constexpr auto kOffsets = [] {
  std::array<std::array<std::uint32_t, 4>, 16> table{};
  for (unsigned m = 0; m < 16; ++m) {
    unsigned c = 0;
    for (unsigned k = 0; k < 4; ++k) {
      if ((m >> k) & 1) table[m][c++] = k;
    }
  }
  return table;
}();

/// The portable scan's loop, with odd(key) the key's parity against g (0 or 1). Four keys a step: their
/// parities form a 4-bit mask, and the positions of its set bits (kOffsets) are written as one block of
/// four indices at hits[count], then count advances by the mask's popcount — one store and one update
/// per four keys instead of four each. count ≤ i, so the block lies inside hits[0, i + 4) ⊆ hits[0, n);
/// the next block overwrites its unused entries.
template <int W, bool kSupport, class Odd>
std::size_t scan_keys(const PauliString<W>* keys, std::size_t n, std::uint32_t* hits,
                      std::array<std::uint64_t, W>& support, Odd odd) {
  std::array<std::uint64_t, W> seen = support;
  std::size_t count = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    unsigned mask = 0;
    for (unsigned k = 0; k < 4; ++k) {
      const PauliString<W>& key = keys[i + k];
      if constexpr (kSupport) {
        for (int w = 0; w < W; ++w) seen[w] |= key.x[w] | key.z[w];
      }
      mask |= odd(key) << k;
    }
    const std::array<std::uint32_t, 4>& offsets = kOffsets[mask];
    std::uint32_t block[4];
    for (unsigned k = 0; k < 4; ++k) block[k] = static_cast<std::uint32_t>(i) + offsets[k];
    std::memcpy(hits + count, block, sizeof block);
    count += static_cast<std::size_t>(std::popcount(mask));
  }
  for (; i < n; ++i) {
    const PauliString<W>& key = keys[i];
    if constexpr (kSupport) {
      for (int w = 0; w < W; ++w) seen[w] |= key.x[w] | key.z[w];
    }
    hits[count] = static_cast<std::uint32_t>(i);  // kept when the parity is odd
    count += odd(key);
  }
  support = seen;
  return count;
}

}  // namespace scan_detail

/// The portable scan: writes to hits[0, count) the indices i < n, ascending, of the keys that
/// anticommute with g, ORs x | z of keys[0, n) into `support`, and returns count. `hits` holds n
/// entries (what a scan writes past count is unspecified).
template <int W, bool kSupport = true>
std::size_t anticommuting_scan_portable(const PauliString<W>* keys, std::size_t n, const PauliString<W>& g,
                                        std::uint32_t* hits, std::array<std::uint64_t, W>& support) {
  // The parity functions capture by value: a reference would be reloaded after every store to hits.
  if constexpr (W > 1) {
    // A generator within one word of the key (a gate on nearby qubits, the common case): the parity reads
    // that word alone.
    int only = -1, words = 0;
    for (int w = 0; w < W; ++w) {
      if ((g.x[w] | g.z[w]) != 0) {
        only = w;
        ++words;
      }
    }
    if (words == 1) {
      const std::uint64_t gx = g.x[only], gz = g.z[only];
      return scan_detail::scan_keys<W, kSupport>(keys, n, hits, support, [=](const PauliString<W>& key) {
        return static_cast<unsigned>(std::popcount((key.x[only] & gz) ^ (key.z[only] & gx)) & 1);
      });
    }
  }
  const PauliString<W> generator = g;
  return scan_detail::scan_keys<W, kSupport>(keys, n, hits, support, [=](const PauliString<W>& key) {
    std::uint64_t parity = 0;
    for (int w = 0; w < W; ++w) parity ^= (key.x[w] & generator.z[w]) ^ (key.z[w] & generator.x[w]);
    return static_cast<unsigned>(std::popcount(parity) & 1);
  });
}

/// Calls f(i), ascending, for every i < n that hits[0, count) (a scan's list) does not hold: the keys that
/// commute with the generator.
template <class F>
void for_each_unlisted(const std::uint32_t* hits, std::size_t count, std::size_t n, F&& f) {
  std::size_t next = 0;  // the next listed index
  for (std::size_t i = 0; i < n; ++i) {
    if (next < count && hits[next] == i) {
      ++next;
      continue;
    }
    f(i);
  }
}

/// True when this processor runs the AVX-512 scan of one-word keys (AVX-512F, VL and VPOPCNTDQ).
bool anticommuting_scan_has_avx512();

/// anticommuting_scan_portable for one-word keys with AVX-512; call only when
/// anticommuting_scan_has_avx512().
std::size_t anticommuting_scan_avx512(const PauliString<1>* keys, std::size_t n, const PauliString<1>& g,
                                      std::uint32_t* hits, std::array<std::uint64_t, 1>& support);

/// anticommuting_scan_portable, in the fastest form this processor runs. kSupport = false: the caller
/// does not read `support` (the portable loop then skips it; the AVX-512 form computes it anyway).
template <int W, bool kSupport = true>
std::size_t anticommuting_scan(const PauliString<W>* keys, std::size_t n, const PauliString<W>& g,
                               std::uint32_t* hits, std::array<std::uint64_t, W>& support) {
  if constexpr (W == 1) {
    static const bool avx512 = anticommuting_scan_has_avx512();
    if (avx512) return anticommuting_scan_avx512(keys, n, g, hits, support);
  }
  return anticommuting_scan_portable<W, kSupport>(keys, n, g, hits, support);
}

}  // namespace paulistrings
