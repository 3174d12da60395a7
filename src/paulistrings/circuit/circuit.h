#pragma once
// Circuit: an ordered list of channels on a fixed number of qubits. Appending checks every qubit
// against num_qubits; slicing follows Python's rules; adjoint() reverses and daggers each gate.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "paulistrings/channels/channel.h"

namespace paulistrings {

class Circuit {
 public:
  /// Throws std::invalid_argument above 1024 qubits.
  explicit Circuit(std::size_t num_qubits);

  std::size_t num_qubits() const { return num_qubits_; }
  std::size_t size() const { return channels_.size(); }
  bool empty() const { return channels_.empty(); }
  const Channel& operator[](std::size_t index) const { return channels_[index]; }
  /// Python-style index (negative counts from the end); throws std::out_of_range.
  const Channel& at(std::ptrdiff_t index) const;
  auto begin() const { return channels_.begin(); }
  auto end() const { return channels_.end(); }

  /// Appends one channel; throws std::invalid_argument naming the gate index and qubit when a
  /// qubit is ≥ num_qubits.
  Circuit& append(Channel channel);
  /// Appends every channel of `other` (same qubit count required; `c.extend(c)` is allowed).
  Circuit& extend(const Circuit& other);
  friend Circuit operator+(Circuit a, const Circuit& b) { return a.extend(b); }

  /// Python slice semantics: missing bounds default by the sign of step; step ≠ 0; a negative
  /// step reverses the order (it does not take the adjoint).
  Circuit slice(std::optional<std::ptrdiff_t> start, std::optional<std::ptrdiff_t> stop,
                std::ptrdiff_t step = 1) const;
  /// The inverse circuit: reversed order, each gate replaced by its adjoint. Throws
  /// std::invalid_argument naming the first noise channel.
  Circuit adjoint() const;

  /// 64-bit fingerprint of the whole circuit (qubit count, names, qubits, parameters, tables).
  std::uint64_t fingerprint() const;

 private:
  std::size_t num_qubits_;
  std::vector<Channel> channels_;
};

}  // namespace paulistrings
