// Private file helpers shared by the io/ parsers: a read-only byte source (mmap or vector),
// FormatError construction, and safe output writes (temp + rename, or streamed into devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/error.h"
#include "meshnn/io/output.h"

namespace meshnn::io {

// Immutable bytes of a whole file. The pointer is writable only because Tensor views take a
// void*; an mmap'd file is mapped MAP_PRIVATE, so writes are copy-on-write and never reach disk.
struct ByteSource {
  uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<void> owner;  // munmap or vector storage

  static std::shared_ptr<ByteSource> map_file(const std::string& path);
  static std::shared_ptr<ByteSource> from_vector(std::vector<uint8_t> bytes);
};

// "<file>: at byte offset <offset>: <msg>"
[[noreturn]] void throw_format(const std::string& file, uint64_t offset, const std::string& msg);

template <class... Args>
[[noreturn]] void format_fail(const std::string& file, uint64_t offset, Args&&... parts) {
  throw_format(file, offset, detail::concat(std::forward<Args>(parts)...));
}

// Inputs that are read whole (checkpoints, .npy, WAV, JSON) must be regular files: opening a FIFO
// would block until a writer comes, and a device has no end. InvalidArgument naming `path` and
// what it is (stat, which never blocks); a missing file is left to the open that follows.
void check_regular_input(const std::string& path);

// Temporary output files removed when the process dies of SIGINT, SIGTERM or SIGHUP (a killed
// write must not leave a rendered WAV in a temp folder). A registered file is unlinked by the
// signal handler; deregister it once it is renamed or removed. At most 64 at once (more are
// simply not covered). Thread-safe and async-signal-safe.
void register_temp_file(const std::string& path);
void unregister_temp_file(const std::string& path);
// remove_temp_files_on_signal (the handler that removes them) is public: meshnn/io/output.h.

// A registered temporary file removed (and deregistered) when the guard goes away unless
// release()d (after a successful rename).
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) { register_temp_file(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  const std::string& path() const { return path_; }
  void release();

 private:
  std::string path_;
  bool owned_ = true;
};

// A fresh scratch name in `target`'s folder (".<name>.meshnn-tmp.<pid>.<n>"), for a file renamed
// over `target` once complete.
std::string temp_path_beside(const std::string& target);

// Closes an owned descriptor.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
};

// Reads a whole file (BackendError if it cannot be opened).
std::vector<uint8_t> read_file_bytes(const std::string& path);

// Writes an output file the safe way (rules in include/meshnn/io/output.h): calls write(file) with
// a path to a fresh regular file to fill, then puts the result where `path` leads — renamed over a
// regular target (keeping its mode and owner), streamed into a FIFO / device / other non-regular
// target, through symlinks. The scratch file is removed on any failure.
void write_output(const std::string& path, const std::function<void(const std::string&)>& write);
// Writes `bytes` to path with write_output.
void write_bytes_output(const std::string& path, const void* bytes, size_t n);

// Writes all of [p, p + n) to fd (sequential); BackendError naming `name` on failure.
void write_all(int fd, const void* p, size_t n, const std::string& name);

}  // namespace meshnn::io
