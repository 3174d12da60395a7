#pragma once
// Byte helpers of the checkpoint tests (io/checkpoint.test.cc, io/checkpoint_columns.test.cc), written
// independently of the implementation: the header offsets, FNV-1a 64, little-endian reads and writes, and
// resealing a file whose bytes a test changed so that the checks after the checksum see the change.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace paulistrings::io::test_bytes {

// Header offsets (the layout documented in checkpoint.cc; version 2 adds its fields after kHeader's 64).
constexpr std::size_t kVersion = 8, kWidth = 12, kType = 16, kReserved = 20, kQubits = 24, kCircuit = 32,
                      kTask = 40, kLayers = 48, kCount = 56, kHeader = 64;

inline std::uint64_t Fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

inline std::uint64_t GetU64(const std::string& bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}
inline std::uint32_t GetU32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}
inline void PutU64(std::string& bytes, std::size_t at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>(value >> (8 * i));
}
inline void PutU32(std::string& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(value >> (8 * i));
}

// Rewrites the trailing checksum so a deliberate corruption reaches the checks after it.
inline void Reseal(std::string& bytes) {
  PutU64(bytes, bytes.size() - 8, Fnv1a64(std::string_view(bytes).substr(0, bytes.size() - 8)));
}

}  // namespace paulistrings::io::test_bytes
