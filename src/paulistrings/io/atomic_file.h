#pragma once
// Atomic file replacement: every output, trace and checkpoint file is written to a temporary file
// in the same directory, flushed to disk, then renamed over the target, so a crash or a kill at any
// moment leaves either the previous file or the complete new one, never a half-written one.

#include <filesystem>
#include <string>
#include <string_view>

namespace paulistrings::io {

/// Writes `bytes` to `path` atomically. Throws std::runtime_error (naming the path and the system
/// error) when the directory is not writable or the disk is full; the target is then untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Reads a whole file. Throws std::runtime_error naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace paulistrings::io
