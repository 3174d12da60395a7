#pragma once
// Atomic file replacement: every output, trace and checkpoint file is written to a temporary file
// in the same directory, flushed to disk, then renamed over the target, so a crash or a kill at any
// moment leaves either the previous file or the complete new one, never a half-written one.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>

namespace paulistrings::io {

/// Writes `bytes` to `path` atomically. Throws std::runtime_error (naming the path and the system
/// error) when the directory is not writable or the disk is full; the target is then untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Takes the bytes of a file in pieces, in order.
using ByteSink = std::function<void(std::string_view)>;
/// The same, for content too large to hold twice: `write` passes the file's bytes to the sink it is
/// given, piece by piece. If `write` throws, the temporary file is removed, the target is untouched,
/// and the exception propagates.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(const ByteSink&)>& write);

/// Reads a whole file, or its first `limit` bytes (fewer when it is shorter). Throws std::runtime_error
/// naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);
std::string read_file(const std::filesystem::path& path, std::size_t limit);

/// A file read from its start in pieces of the caller's size (a checkpoint load decodes its columns as
/// they arrive instead of holding the file's bytes).
class FileSource {
 public:
  /// Throws std::runtime_error("cannot open PATH: reason").
  explicit FileSource(const std::filesystem::path& path);
  /// The file's size when opened.
  std::uint64_t size() const { return size_; }
  /// Fills all of `out`, or throws std::runtime_error naming the file when it ends first or a read fails.
  void read(char* out, std::size_t bytes);

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

}  // namespace paulistrings::io
