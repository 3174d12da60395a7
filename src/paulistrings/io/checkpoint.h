#pragma once
// Checkpoints (DESIGN §4.5): a versioned little-endian binary file holding a propagation in
// progress — magic "PSCKPT01", format version, word width W, coefficient type (real/complex),
// bucket count (restored on load, so a resumed run is bitwise the uninterrupted one), qubit count, circuit
// fingerprint, task fingerprint (what else must match to resume: direction, truncation, observable), the
// number of layers already applied, term count, then the columns (x words, z words, coefficients) and an
// FNV-1a 64 checksum of everything before it. Written with write_file_atomically; read back with every field
// validated, so a truncated, corrupted or foreign file is refused with a message saying which check failed.

#include <cstdint>
#include <filesystem>
#include <string>

#include "paulistrings/core/any_pauli_sum.h"

namespace paulistrings::io {

struct Checkpoint {
  std::uint64_t circuit_fingerprint = 0;
  std::uint64_t task_fingerprint = 0;
  std::uint64_t layers_done = 0;
  AnyPauliSum sum;
};

/// Serializes to bytes (the exact file content).
std::string encode_checkpoint(const Checkpoint& checkpoint);
/// Parses bytes; throws std::invalid_argument("checkpoint <name>: <which check failed>").
Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name = "<checkpoint>");

/// encode + write_file_atomically.
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
/// read_file + decode.
Checkpoint load_checkpoint(const std::filesystem::path& path);

}  // namespace paulistrings::io
