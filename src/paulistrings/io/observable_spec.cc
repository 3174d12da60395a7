// Register-and-index names of qubits in observable labels.

#include "paulistrings/io/observable_spec.h"

#include <stdexcept>

namespace paulistrings::io {

std::size_t register_qubit(std::span<const QubitRegister> registers, std::string_view register_name,
                           std::size_t index) {
  for (const QubitRegister& reg : registers) {
    if (reg.name != register_name) continue;
    if (index >= reg.size) {
      throw std::invalid_argument("qubit " + std::string(register_name) + "[" + std::to_string(index) +
                                  "] is out of range: register '" + std::string(register_name) + "' has " +
                                  std::to_string(reg.size) + (reg.size == 1 ? " qubit" : " qubits"));
    }
    return reg.offset + index;
  }
  std::string known;
  for (const QubitRegister& reg : registers) known += (known.empty() ? "" : ", ") + reg.name;
  throw std::invalid_argument("no qubit register named '" + std::string(register_name) + "'" +
                              (known.empty() ? std::string(" (the circuit has no named registers)")
                                             : " (its registers: " + known + ")"));
}

std::string resolve_register_label(std::string_view label, std::span<const QubitRegister> registers) {
  if (label.find('[') == std::string_view::npos) return std::string(label);
  std::string out;
  std::size_t pos = 0;
  while (pos < label.size()) {
    if (label[pos] == ' ' || label[pos] == ',' || label[pos] == '\t') {
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < label.size() && label[end] != ' ' && label[end] != ',' && label[end] != '\t') ++end;
    const std::string_view factor = label.substr(pos, end - pos);
    pos = end;
    if (!out.empty()) out += ' ';
    const std::size_t open = factor.find('[');
    if (open == std::string_view::npos) {
      out += factor;  // a global index ("Z3"): the label parser checks it
      continue;
    }
    const auto bad = [&](const std::string& why) {
      throw std::invalid_argument("invalid Pauli label '" + std::string(label) + "': factor '" +
                                  std::string(factor) + "' " + why);
    };
    const char letter = factor[0];
    if (letter != 'X' && letter != 'Y' && letter != 'Z') bad("does not start with X, Y or Z");
    if (open < 2 || factor.back() != ']') bad("is not LETTER + register[index], e.g. Zq[3]");
    const std::string_view name = factor.substr(1, open - 1);
    const std::string_view digits = factor.substr(open + 1, factor.size() - open - 2);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      bad("has no integer index in brackets");
    }
    const std::size_t index = std::stoul(std::string(digits));
    try {
      out += letter;
      out += std::to_string(register_qubit(registers, name, index));
    } catch (const std::invalid_argument& e) {
      bad(std::string("names ") + e.what());
    }
  }
  return out;
}

ObservableTerms resolve_register_labels(ObservableTerms terms, std::span<const QubitRegister> registers) {
  for (auto& [label, coefficient] : terms) label = resolve_register_label(label, registers);
  return terms;
}

}  // namespace paulistrings::io
