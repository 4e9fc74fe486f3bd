#include "io/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace meshnn::io {

std::shared_ptr<ByteSource> ByteSource::map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw BackendError(detail::concat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw BackendError(detail::concat(path, ": not a regular file"));
  }
  auto src = std::make_shared<ByteSource>();
  src->size = static_cast<size_t>(st.st_size);
  if (src->size == 0) {  // mmap of 0 bytes fails; an empty file is simply empty
    ::close(fd);
    return src;
  }
  // MAP_PRIVATE + PROT_WRITE: copy-on-write, so a caller writing into a view cannot crash on a
  // read-only page nor modify the checkpoint; MAP_NORESERVE avoids charging the whole file as swap.
  void* p = ::mmap(nullptr, src->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw BackendError(detail::concat(path, ": mmap failed: ", std::strerror(err)));
  const size_t n = src->size;
  src->data = static_cast<uint8_t*>(p);
  src->owner = std::shared_ptr<void>(p, [n](void* q) { ::munmap(q, n); });
  return src;
}

std::shared_ptr<ByteSource> ByteSource::from_vector(std::vector<uint8_t> bytes) {
  auto src = std::make_shared<ByteSource>();
  auto vec = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  src->data = vec->data();
  src->size = vec->size();
  src->owner = vec;
  return src;
}

void throw_format(const std::string& file, uint64_t offset, const std::string& msg) {
  throw FormatError(detail::concat(file, ": at byte offset ", offset, ": ", msg));
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw BackendError(detail::concat(path, ": cannot open for reading"));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw BackendError(detail::concat(path, ": read error"));
  return bytes;
}

void write_file_atomic(const std::string& path,
                       const std::function<void(const std::string&)>& write) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      detail::concat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  try {
    write(tmp);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw BackendError(detail::concat(path, ": cannot rename the temporary file: ", std::strerror(err)));
  }
}

void write_bytes_atomic(const std::string& path, const void* bytes, size_t n) {
  write_file_atomic(path, [&](const std::string& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw BackendError(detail::concat(tmp, ": cannot open for writing: ", std::strerror(errno)));
    const bool ok = (n == 0 || std::fwrite(bytes, 1, n, f) == n);
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) throw BackendError(detail::concat(path, ": write failed"));
  });
}

}  // namespace meshnn::io
