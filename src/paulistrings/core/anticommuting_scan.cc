// The AVX-512 scan of one-word keys (anticommuting_scan.h), compiled for that instruction set in this
// function only and chosen at run time: the library itself is built for x86-64-v2 (CMakeLists.txt).

#include "paulistrings/core/anticommuting_scan.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PAULISTRINGS_SCAN_AVX512 1
#endif

namespace paulistrings {

#ifdef PAULISTRINGS_SCAN_AVX512

bool anticommuting_scan_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512vpopcntdq");
}

__attribute__((target("avx512f,avx512vl,avx512vpopcntdq"))) std::size_t anticommuting_scan_avx512(
    const PauliString<1>* keys, std::size_t n, const PauliString<1>& g, std::uint32_t* hits,
    std::array<std::uint64_t, 1>& support) {
  static_assert(sizeof(PauliString<1>) == 16, "a one-word key is x then z, 8 bytes each");
  // Eight keys are two vectors [x0 z0 x1 z1 x2 z2 x3 z3], [x4 z4 … x7 z7]: their x words and z words are
  // gathered into one vector each, and key i anticommutes when popcount((x & gz) ^ (z & gx)) is odd.
  const __m512i x_lanes = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i z_lanes = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  const __m512i gx = _mm512_set1_epi64(static_cast<long long>(g.x[0]));
  const __m512i gz = _mm512_set1_epi64(static_cast<long long>(g.z[0]));
  const __m512i one = _mm512_set1_epi64(1);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m512i seen = _mm512_setzero_si512();
  const auto* words = reinterpret_cast<const std::uint64_t*>(keys);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i low = _mm512_loadu_si512(words + 2 * i);
    const __m512i high = _mm512_loadu_si512(words + 2 * i + 8);
    seen = _mm512_or_si512(seen, _mm512_or_si512(low, high));
    const __m512i x = _mm512_permutex2var_epi64(low, x_lanes, high);
    const __m512i z = _mm512_permutex2var_epi64(low, z_lanes, high);
    const __m512i t = _mm512_xor_si512(_mm512_and_si512(x, gz), _mm512_and_si512(z, gx));
    const __mmask8 mask = _mm512_test_epi64_mask(_mm512_popcnt_epi64(t), one);
    // The indices of the set lanes, packed and stored whole: 8 entries from hits[count], count ≤ i, so
    // inside hits[0, i + 8) ⊆ hits[0, n); later stores overwrite the unused ones. No branch on the mask.
    // Compressing in a register, then storing, is fast on every AVX-512 core; a compressing store is
    // microcoded on some.
    const __m256i index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(i)), lane);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hits + count), _mm256_maskz_compress_epi32(mask, index));
    count += static_cast<std::size_t>(std::popcount(static_cast<unsigned>(mask)));
  }
  std::uint64_t seen_words[8];  // (GCC 12's _mm512_reduce_or_epi64 warns of an uninitialized operand)
  _mm512_storeu_si512(seen_words, seen);
  for (const std::uint64_t word : seen_words) support[0] |= word;
  // The last n mod 8 keys.
  std::array<std::uint64_t, 1> tail{};
  const std::size_t rest = anticommuting_scan_portable<1>(keys + i, n - i, g, hits + count, tail);
  for (std::size_t r = 0; r < rest; ++r) hits[count + r] += static_cast<std::uint32_t>(i);
  support[0] |= tail[0];
  return count + rest;
}

#else

bool anticommuting_scan_has_avx512() { return false; }

std::size_t anticommuting_scan_avx512(const PauliString<1>* keys, std::size_t n, const PauliString<1>& g,
                                      std::uint32_t* hits, std::array<std::uint64_t, 1>& support) {
  return anticommuting_scan_portable<1>(keys, n, g, hits, support);
}

#endif

}  // namespace paulistrings
