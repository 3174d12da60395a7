// Circuit construction, slicing, adjoint and fingerprint.

#include "paulistrings/circuit/circuit.h"

#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "paulistrings/core/bucket_hash.h"
#include "paulistrings/core/label.h"

namespace paulistrings {

Circuit::Circuit(std::size_t num_qubits) : num_qubits_(num_qubits) { check_num_qubits(num_qubits); }

const Channel& Circuit::at(std::ptrdiff_t index) const {
  const auto n = static_cast<std::ptrdiff_t>(channels_.size());
  const std::ptrdiff_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n) {
    throw std::out_of_range("circuit index " + std::to_string(index) + " out of range for " +
                            std::to_string(n) + " channels");
  }
  return channels_[static_cast<std::size_t>(i)];
}

Circuit& Circuit::append(Channel channel) {
  for (Qubit q : channel.qubits()) {
    if (q >= num_qubits_) {
      throw std::invalid_argument("gate " + std::to_string(channels_.size()) + " (" + channel.description() +
                                  "): qubit " + std::to_string(q) + " is out of range for a circuit on " +
                                  std::to_string(num_qubits_) + " qubits");
    }
  }
  channels_.push_back(std::move(channel));
  return *this;
}

Circuit& Circuit::extend(const Circuit& other) {
  if (other.num_qubits_ != num_qubits_) {
    throw std::invalid_argument("cannot join circuits on " + std::to_string(num_qubits_) + " and " +
                                std::to_string(other.num_qubits_) + " qubits");
  }
  const std::vector<Channel> copy = other.channels_;  // other may be *this
  channels_.insert(channels_.end(), copy.begin(), copy.end());
  return *this;
}

Circuit Circuit::slice(std::optional<std::ptrdiff_t> start, std::optional<std::ptrdiff_t> stop,
                       std::ptrdiff_t step) const {
  if (step == 0) throw std::invalid_argument("slice step cannot be zero");
  const auto n = static_cast<std::ptrdiff_t>(channels_.size());
  auto clamp = [&](std::optional<std::ptrdiff_t> v, std::ptrdiff_t fallback) {
    if (!v) return fallback;
    std::ptrdiff_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<std::ptrdiff_t>(i, 0, n);
    return std::clamp<std::ptrdiff_t>(i, -1, n - 1);
  };
  const std::ptrdiff_t first = clamp(start, step > 0 ? 0 : n - 1);
  const std::ptrdiff_t last = clamp(stop, step > 0 ? n : -1);
  // Count first, so that a huge step never overflows the running index.
  const std::ptrdiff_t span = step > 0 ? last - first : first - last;
  const std::ptrdiff_t stride = step > 0 ? step
                                         : (step == std::numeric_limits<std::ptrdiff_t>::min()
                                                ? std::numeric_limits<std::ptrdiff_t>::max()
                                                : -step);
  const std::ptrdiff_t count = span <= 0 ? 0 : 1 + (span - 1) / stride;
  Circuit result(num_qubits_);
  for (std::ptrdiff_t k = 0; k < count; ++k) {
    result.channels_.push_back(
        channels_[static_cast<std::size_t>(first + (step > 0 ? k * stride : -k * stride))]);
  }
  return result;
}

Circuit Circuit::adjoint() const {
  Circuit result(num_qubits_);
  for (std::size_t k = channels_.size(); k-- > 0;) {
    if (channels_[k].is_noise()) {
      const char* what = channels_[k].is_measurement() ? "a measurement"
                         : channels_[k].is_reset()     ? "a reset"
                                                       : "a noise channel";
      throw std::invalid_argument("adjoint(): gate " + std::to_string(k) + " (" + channels_[k].description() +
                                  ") is " + what + " and has no inverse");
    }
    result.channels_.push_back(channels_[k].adjoint());
  }
  return result;
}

std::uint64_t Circuit::fingerprint() const {
  std::uint64_t h = splitmix64(num_qubits_ ^ 0xc1c1c1c1ULL);
  auto mix = [&h](std::uint64_t v) { h = splitmix64(h ^ v); };
  auto mix_double = [&mix](double v) { mix(std::bit_cast<std::uint64_t>(v)); };
  for (const Channel& c : channels_) {
    // A rotation is its axis, qubits and angle: rzz(θ) and pauli_rotation("ZZ", θ) are one channel
    // (the task-JSON writer spells rxx/ryy/rzz the v1 way), so the name is not hashed for them.
    if (!c.is_rotation()) {
      for (char ch : c.name()) mix(static_cast<unsigned char>(ch));
    }
    mix(static_cast<std::uint64_t>(c.kind()));
    for (Qubit q : c.qubits()) mix(q);
    for (char ch : c.pauli()) mix(static_cast<unsigned char>(ch));
    mix_double(c.theta());
    for (double p : c.parameters()) mix_double(p);
    if (!c.uses_rotation_form()) {
      for (Direction d : {Direction::forward, Direction::heisenberg}) {
        for (const Complex& v : c.transfer(d).entries) {
          mix_double(v.real());
          mix_double(v.imag());
        }
      }
    }
  }
  return h;
}

}  // namespace paulistrings
