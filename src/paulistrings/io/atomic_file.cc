// Atomic replacement by temp file + fsync + rename (POSIX rename is atomic within a file system).
#include "paulistrings/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace paulistrings::io {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(error));
}

std::ifstream open_for_reading(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  return in;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  write_file_atomically(path, [bytes](const ByteSink& sink) { sink(bytes); });
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(const ByteSink&)>& write) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : ".";
  std::string temporary_name = path.filename().string();  // ".NAME.tmp.XXXXXX", hidden beside the target
  temporary_name.insert(0, 1, '.');
  temporary_name.append(".tmp.XXXXXX");
  std::string pattern = (directory / temporary_name).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) fail("cannot create a temporary file next to", path, errno);
  const std::filesystem::path temporary = pattern;
  bool open = true;
  const auto abandon = [&] {  // idempotent: the sink may have abandoned the file before write() throws
    if (!open) return;
    open = false;
    ::close(fd);
    ::unlink(temporary.c_str());
  };
  const ByteSink sink = [&](std::string_view bytes) {
    std::size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int error = errno;
        abandon();
        fail("cannot write", path, error);
      }
      written += static_cast<std::size_t>(n);
    }
  };
  try {
    write(sink);
  } catch (...) {
    abandon();
    throw;
  }
  // mkstemp creates 0600; outputs are ordinary files, so give them the usual umask-governed mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("cannot flush", path, error);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("cannot replace", path, error);
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in = open_for_reading(path);
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path.string());
  return content.str();
}

std::string read_file(const std::filesystem::path& path, std::size_t limit) {
  std::ifstream in = open_for_reading(path);
  std::string bytes(limit, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(limit));
  if (in.bad()) throw std::runtime_error("cannot read " + path.string());
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

FileSource::FileSource(const std::filesystem::path& path) : path_(path), in_(open_for_reading(path)) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw std::runtime_error("cannot read the size of " + path.string() + ": " + error.message());
  size_ = static_cast<std::uint64_t>(size);
}

void FileSource::read(char* out, std::size_t bytes) {
  in_.read(out, static_cast<std::streamsize>(bytes));
  if (in_.bad()) throw std::runtime_error("cannot read " + path_.string());
  if (static_cast<std::size_t>(in_.gcount()) != bytes) {
    throw std::runtime_error("cannot read " + path_.string() + ": it ended early (changed while being read?)");
  }
}

}  // namespace paulistrings::io
