#pragma once
// PauliString<W>: one Pauli string on up to 64·W qubits, stored as symplectic bit arrays (x, z).
// Conventions (docs/design.md §2.1–2.2): I=(0,0) X=(1,0) Z=(0,1) Y=(1,1); qubit q is bit q%64 of word q/64; the
// string is the Hermitian Pauli itself (Y carries no hidden phase); keys never store a phase.

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "paulistrings/core/label.h"

namespace paulistrings {

template <int W>
struct PauliString {
  static_assert(W == 1 || W == 2 || W == 4 || W == 8 || W == 16, "width must be 1, 2, 4, 8 or 16 words");
  static constexpr int kWords = W;
  static constexpr std::size_t kMaxQubits = 64 * static_cast<std::size_t>(W);

  std::array<std::uint64_t, W> x{};
  std::array<std::uint64_t, W> z{};

  /// Parses a dense label ("IXYZ", char i = qubit i) or a sparse one ("X0 Y5 Z62") on num_qubits qubits.
  static PauliString from_label(std::string_view label, std::size_t num_qubits);
  /// The single-qubit Pauli `pauli` ('I','X','Y','Z') on qubit q.
  static PauliString single(char pauli, std::size_t qubit);

  /// Dense label of length num_qubits.
  std::string to_label(std::size_t num_qubits) const;
  /// Sparse label "X0 Y5 Z62" ("I" for the identity).
  std::string to_sparse_label() const;

  /// 0=I 1=X 2=Z 3=Y, i.e. x | z<<1 (the packed single-qubit code used by prepared tables).
  int code(std::size_t qubit) const {
    return static_cast<int>(((x[qubit >> 6] >> (qubit & 63)) & 1) |
                            (((z[qubit >> 6] >> (qubit & 63)) & 1) << 1));
  }
  void set_code(std::size_t qubit, int code) {
    const std::uint64_t bit = std::uint64_t{1} << (qubit & 63);
    x[qubit >> 6] = (x[qubit >> 6] & ~bit) | ((code & 1) ? bit : 0);
    z[qubit >> 6] = (z[qubit >> 6] & ~bit) | ((code & 2) ? bit : 0);
  }
  char letter(std::size_t qubit) const { return "IXZY"[code(qubit)]; }

  /// Number of non-identity factors: popcount(x | z).
  int weight() const {
    int w = 0;
    for (int i = 0; i < W; ++i) w += std::popcount(x[i] | z[i]);
    return w;
  }
  bool is_identity() const {
    std::uint64_t any = 0;
    for (int i = 0; i < W; ++i) any |= x[i] | z[i];
    return any == 0;
  }
  /// Index one past the highest qubit with a non-identity factor (0 for the identity).
  std::size_t span() const;

  bool commutes_with(const PauliString& other) const {
    int parity = 0;
    for (int i = 0; i < W; ++i) parity ^= std::popcount((x[i] & other.z[i]) ^ (z[i] & other.x[i])) & 1;
    return parity == 0;
  }

  /// Key XOR (the product up to phase).
  PauliString& operator^=(const PauliString& other) {
    for (int i = 0; i < W; ++i) {
      x[i] ^= other.x[i];
      z[i] ^= other.z[i];
    }
    return *this;
  }
  friend PauliString operator^(PauliString a, const PauliString& b) { return a ^= b; }

  /// Word by word, without branches: GCC turns the defaulted comparison of the word arrays into a call
  /// to memcmp, which the engines' hash probes and orbit lookups then paid on every comparison
  /// (docs/PERFORMANCE.md, "Key equality without memcmp").
  friend bool operator==(const PauliString& a, const PauliString& b) {
    std::uint64_t differ = 0;
    for (int i = 0; i < W; ++i) differ |= (a.x[i] ^ b.x[i]) | (a.z[i] ^ b.z[i]);
    return differ == 0;
  }
  /// Lexicographic on (x words 0..W-1, z words 0..W-1): the canonical order inside a bucket.
  friend std::strong_ordering operator<=>(const PauliString&, const PauliString&) = default;
};

/// The partition bits of a key under GF(2) rows (partition/PartitionRows): bit j = parity of
/// (rows[j].x AND key.x) ⊕ (rows[j].z AND key.z), over the key's W words (rows may be wider: their
/// first W words are read). Linear: part(a ⊕ b) = part(a) ⊕ part(b).
template <int W, class Rows>
std::uint32_t row_parities(const Rows& rows, const PauliString<W>& key) {
  std::uint32_t p = 0;
  std::uint32_t bit = 1;
  for (const auto& row : rows) {
    std::uint64_t acc = 0;
    for (int w = 0; w < W; ++w) acc ^= (row.x[w] & key.x[w]) ^ (row.z[w] & key.z[w]);
    p |= static_cast<std::uint32_t>(std::popcount(acc) & 1) * bit;
    bit <<= 1;
  }
  return p;
}

/// Phase exponent k (mod 4) such that a·b = i^k · (a ⊕ b) as Hermitian Pauli operators.
// Always inlined: the engines call it once per anticommuting term of a rotation.
template <int W>
[[gnu::always_inline]] inline int product_phase(const PauliString<W>& a, const PauliString<W>& b) {
  // Per qubit P(x,z) = i^{xz} X^x Z^z, so a·b = i^{x1z1 + x2z2 - x3z3} (-1)^{z1 x2} X^{x3} Z^{z3}.
  int k = 0;
  for (int i = 0; i < W; ++i) {
    const std::uint64_t x3 = a.x[i] ^ b.x[i], z3 = a.z[i] ^ b.z[i];
    k += std::popcount(a.x[i] & a.z[i]) + std::popcount(b.x[i] & b.z[i]) - std::popcount(x3 & z3) +
         2 * std::popcount(a.z[i] & b.x[i]);
  }
  return k & 3;
}

template <int W>
struct PauliProduct {
  int phase;  ///< k in i^k
  PauliString<W> string;
};

/// a·b = i^phase · string.
template <int W>
PauliProduct<W> multiply(const PauliString<W>& a, const PauliString<W>& b) {
  return {product_phase(a, b), a ^ b};
}

/// Calls f(q) for every set bit q of a W-word qubit mask, in ascending order.
template <int W, class F>
void for_each_qubit(const std::array<std::uint64_t, W>& mask, F&& f) {
  for (int i = 0; i < W; ++i) {
    for (std::uint64_t word = mask[i]; word != 0; word &= word - 1) {
      f(64 * static_cast<std::size_t>(i) + static_cast<std::size_t>(std::countr_zero(word)));
    }
  }
}

/// Calls f(q) for every qubit q where `key` is not the identity, in ascending order.
template <int W, class F>
void for_each_factor(const PauliString<W>& key, F&& f) {
  std::array<std::uint64_t, W> used;
  for (int i = 0; i < W; ++i) used[i] = key.x[i] | key.z[i];
  for_each_qubit<W>(used, f);
}

/// Smallest instantiated width (1, 2, 4, 8 or 16 words) holding num_qubits; throws
/// std::invalid_argument above 1024 qubits.
int width_for_qubits(std::size_t num_qubits);

// ---- implementation of the out-of-line members ----

template <int W>
PauliString<W> PauliString<W>::from_label(std::string_view label, std::size_t num_qubits) {
  if (num_qubits > kMaxQubits) throw_too_many_qubits_for_width(num_qubits, W);
  PauliString result;
  for (const LabelFactor& factor : parse_label(label, num_qubits)) {
    result.set_code(factor.qubit, pauli_code(factor.pauli));
  }
  return result;
}

template <int W>
PauliString<W> PauliString<W>::single(char pauli, std::size_t qubit) {
  if (qubit >= kMaxQubits) throw_qubit_out_of_range(qubit, kMaxQubits);
  PauliString result;
  result.set_code(qubit, pauli_code(pauli));
  return result;
}

template <int W>
std::string PauliString<W>::to_label(std::size_t num_qubits) const {
  std::string label(num_qubits, 'I');
  for (std::size_t q = 0; q < num_qubits && q < kMaxQubits; ++q) label[q] = letter(q);
  return label;
}

template <int W>
std::string PauliString<W>::to_sparse_label() const {
  std::string label;
  for_each_factor<W>(*this, [&](std::size_t q) {
    if (!label.empty()) label += ' ';
    label += letter(q);
    label += std::to_string(q);
  });
  return label.empty() ? std::string("I") : label;
}

template <int W>
std::size_t PauliString<W>::span() const {
  for (int i = W - 1; i >= 0; --i) {
    const std::uint64_t bits = x[i] | z[i];
    if (bits != 0) return 64 * static_cast<std::size_t>(i) + 64 - std::countl_zero(bits);
  }
  return 0;
}

}  // namespace paulistrings

template <int W>
struct std::hash<paulistrings::PauliString<W>> {
  std::size_t operator()(const paulistrings::PauliString<W>& p) const noexcept {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < W; ++i) {
      h = (h ^ p.x[i]) * 0xff51afd7ed558ccdULL;
      h = (h ^ (h >> 29) ^ p.z[i]) * 0xc4ceb9fe1a85ec53ULL;
      h ^= h >> 32;
    }
    return static_cast<std::size_t>(h);
  }
};
