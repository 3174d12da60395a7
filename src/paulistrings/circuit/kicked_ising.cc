// The embedded heavy-hex coupling map and the kicked-Ising circuit builder.

#include "paulistrings/circuit/kicked_ising.h"

#include <cctype>
#include <stdexcept>
#include <string_view>

namespace paulistrings {
namespace {

constexpr std::string_view kHeavyHexJson =
#include "paulistrings/circuit/heavy_hex_127_json.inc"
    ;

/// Reads the [a, b] pairs of the "layers" object; the file is ours, so a small scanner suffices.
std::vector<std::pair<Qubit, Qubit>> parse_edges(std::string_view json) {
  std::vector<std::pair<Qubit, Qubit>> edges;
  std::size_t pos = json.find("\"layers\"");
  if (pos == std::string_view::npos) throw std::logic_error("embedded heavy-hex map has no layers");
  auto read_number = [&](std::size_t& at) {
    while (at < json.size() && !std::isdigit(static_cast<unsigned char>(json[at]))) ++at;
    Qubit value = 0;
    while (at < json.size() && std::isdigit(static_cast<unsigned char>(json[at])))
      value = value * 10 + (json[at++] - '0');
    return value;
  };
  while ((pos = json.find('[', pos)) != std::string_view::npos) {
    std::size_t probe = pos + 1;
    while (probe < json.size() && std::isspace(static_cast<unsigned char>(json[probe]))) ++probe;
    if (probe < json.size() && std::isdigit(static_cast<unsigned char>(json[probe]))) {
      const Qubit a = read_number(probe);
      const Qubit b = read_number(probe);
      edges.emplace_back(a, b);
      pos = probe;
    } else {
      pos = probe;
    }
  }
  return edges;
}

}  // namespace

const std::vector<std::pair<Qubit, Qubit>>& heavy_hex_127_edges() {
  static const std::vector<std::pair<Qubit, Qubit>> edges = parse_edges(kHeavyHexJson);
  return edges;
}

Circuit kicked_ising_circuit(std::size_t steps, double theta_h, double theta_zz) {
  Circuit circuit(kHeavyHexQubits);
  for (std::size_t step = 0; step < steps; ++step) {
    for (Qubit q = 0; q < kHeavyHexQubits; ++q) circuit.append(Channel::rx(theta_h, q));
    for (const auto& [a, b] : heavy_hex_127_edges()) circuit.append(Channel::rzz(theta_zz, a, b));
  }
  return circuit;
}

}  // namespace paulistrings
