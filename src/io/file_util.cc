#include "io/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "meshnn/io/output.h"

namespace meshnn::io {

void check_regular_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  const char* what = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  throw InvalidArgument(
      detail::concat(path, ": is ", what, "; this input is read whole and must be a regular file"));
}

namespace {

// Fixed slots, so that the signal handler touches no allocator: state 0 free, 1 being written,
// 2 holds a path, 3 being released.
constexpr int kTempSlots = 64;
constexpr size_t kTempPathMax = 4096;
char g_temp_paths[kTempSlots][kTempPathMax];
std::atomic<int> g_temp_state[kTempSlots];

void on_fatal_signal(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_state[i].load() == 2) ::unlink(g_temp_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void register_temp_file(const std::string& path) {
  if (path.size() >= kTempPathMax) return;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!g_temp_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
    g_temp_state[i].store(2);
    return;
  }
}

void unregister_temp_file(const std::string& path) {
  for (int i = 0; i < kTempSlots; ++i) {
    if (g_temp_state[i].load() != 2 || path != g_temp_paths[i]) continue;
    int expected = 2;
    if (g_temp_state[i].compare_exchange_strong(expected, 3)) {
      g_temp_state[i].store(0);
      return;
    }
  }
}

void remove_temp_files_on_signal() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

TempFile::~TempFile() {
  if (!owned_) return;
  std::remove(path_.c_str());
  unregister_temp_file(path_);
}

void TempFile::release() {
  if (!owned_) return;
  owned_ = false;
  unregister_temp_file(path_);
}

std::shared_ptr<ByteSource> ByteSource::map_file(const std::string& path) {
  check_regular_input(path);
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
  if (p == MAP_FAILED)
    throw BackendError(detail::concat(path, ": mmap failed: ", std::strerror(err)));
  // Asks for the file's page-cache pages in 2 MiB folios, mapped by one PMD entry each (as the
  // filter cache's entries, kernels/filter_cache.cc): a pass over a warm checkpoint read through
  // 4 KiB mappings ran at ~2 GB/s on this project's VMs, through 2 MiB ones ~13 GB/s (the origin
  // hash of a released LTX-2.3's conv weights: 0.16 -> 0.025 s; docs/benchmarks.md "Issue 34
  // (wave 20)"). It applies to pages read into the page cache through this mapping; elsewhere it
  // is a hint that changes nothing.
  (void)::madvise(p, src->size, MADV_HUGEPAGE);
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
  check_regular_input(path);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw BackendError(detail::concat(path, ": cannot open for reading"));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw BackendError(detail::concat(path, ": read error"));
  return bytes;
}

namespace {

namespace fs = std::filesystem;

std::string temp_name(const fs::path& dir, const std::string& stem) {
  static std::atomic<unsigned> counter{0};
  return (dir / detail::concat(".", stem, ".meshnn-tmp.", ::getpid(), ".", counter.fetch_add(1)))
      .string();
}

// Copies the whole of `src` into the already existing `dst` (opened without O_CREAT: a FIFO, a
// device, or a regular file rewritten in place).
void stream_into(const std::string& src, const std::string& dst, bool truncate,
                 const std::string& shown) {
  const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw BackendError(detail::concat(src, ": cannot reopen: ", std::strerror(errno)));
  const int out = ::open(dst.c_str(), O_WRONLY | O_CLOEXEC | (truncate ? O_TRUNC : 0));
  if (out < 0) {
    const int err = errno;
    ::close(in);
    throw BackendError(detail::concat(shown, ": cannot open for writing: ", std::strerror(err)));
  }
  std::vector<char> buf(size_t{1} << 20);
  int err = 0;
  for (;;) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        err = errno;
        break;
      }
      done += w;
    }
    if (err) break;
  }
  ::close(in);
  if (::close(out) != 0 && err == 0) err = errno;
  if (err) throw BackendError(detail::concat(shown, ": write failed: ", std::strerror(err)));
}

// write() into a scratch file under the system temp folder, then stream it into `target`.
void write_streamed(const std::string& target, const std::string& shown, bool truncate,
                    const std::function<void(const std::string&)>& write) {
  const TempFile tmp(temp_name(fs::temp_directory_path(), "meshnn-out"));
  write(tmp.path());
  stream_into(tmp.path(), target, truncate, shown);
}

}  // namespace

std::string temp_path_beside(const std::string& target) {
  const fs::path t(target);
  return temp_name(t.parent_path(), t.filename().string());
}

std::string resolve_output_path(const std::string& path) {
  MESHNN_CHECK(!path.empty(), "output path is empty");
  fs::path p = fs::absolute(path);
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::vector<char> buf(4096);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0 || static_cast<size_t>(n) >= buf.size())
      throw BackendError(detail::concat(path, ": cannot read the symbolic link ", p.string()));
    const fs::path t(std::string(buf.data(), static_cast<size_t>(n)));
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  throw InvalidArgument(detail::concat(path, ": too many levels of symbolic links"));
}

void write_output(const std::string& path, const std::function<void(const std::string&)>& write) {
  const std::string target = resolve_output_path(path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  MESHNN_CHECK(!exists || !S_ISDIR(st.st_mode), path, ": is a folder, not a file");
  // FIFO, character / block device, socket: never replace it, write into it.
  if (exists && !S_ISREG(st.st_mode)) return write_streamed(target, path, false, write);
  const fs::path dir = fs::path(target).parent_path();
  // A folder we cannot create files in, but a writable file: rewrite it in place.
  if (exists && ::access(dir.c_str(), W_OK | X_OK) != 0)
    return write_streamed(target, path, true, write);
  TempFile guard(temp_name(dir, fs::path(target).filename().string()));
  const std::string& tmp = guard.path();
  write(tmp);
  if (exists) {
    // Keep the replaced file's permission bits and owner. When the owner cannot be kept (not
    // root, someone else's file), rewrite the file in place instead: that keeps both.
    bool keep = ::chmod(tmp.c_str(), st.st_mode & 07777) == 0;
    struct stat tst {};
    if (keep && ::stat(tmp.c_str(), &tst) == 0 &&
        (tst.st_uid != st.st_uid || tst.st_gid != st.st_gid))
      keep = ::chown(tmp.c_str(), st.st_uid, st.st_gid) == 0;
    if (!keep) {
      stream_into(tmp, target, true, path);
      return;
    }
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    throw BackendError(
        detail::concat(path, ": cannot rename the temporary file: ", std::strerror(err)));
  }
  guard.release();
}

void write_bytes_output(const std::string& path, const void* bytes, size_t n) {
  write_output(path, [&](const std::string& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f)
      throw BackendError(detail::concat(tmp, ": cannot open for writing: ", std::strerror(errno)));
    const bool ok = (n == 0 || std::fwrite(bytes, 1, n, f) == n);
    const int err = errno;
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed)
      throw BackendError(detail::concat(path, ": write failed: ", std::strerror(ok ? errno : err)));
  });
}

void check_output_path(const std::string& out, const std::vector<std::string>& inputs,
                       const std::string& option) {
  MESHNN_CHECK(!out.empty(), option, ": empty output path");
  const std::string target = resolve_output_path(out);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    MESHNN_CHECK(!S_ISDIR(st.st_mode), option, " ", out, ": is a folder, not a file");
    for (const std::string& in : inputs) {
      struct stat ist {};
      if (in.empty() || ::stat(in.c_str(), &ist) != 0) continue;
      MESHNN_CHECK(ist.st_dev != st.st_dev || ist.st_ino != st.st_ino, option, " ", out,
                   " is the same file as the input ", in,
                   ": writing it would destroy the input; choose another output path");
    }
    const fs::path dir = fs::path(target).parent_path();
    MESHNN_CHECK(::access(target.c_str(), W_OK) == 0 ||
                     (S_ISREG(st.st_mode) && ::access(dir.c_str(), W_OK | X_OK) == 0),
                 option, " ", out, ": not writable (", target, ")");
    return;
  }
  const fs::path dir = fs::path(target).parent_path();
  struct stat dst {};
  MESHNN_CHECK(::stat(dir.c_str(), &dst) == 0 && S_ISDIR(dst.st_mode), option, " ", out,
               ": the folder ", dir.string(), " does not exist");
  MESHNN_CHECK(::access(dir.c_str(), W_OK | X_OK) == 0, option, " ", out, ": the folder ",
               dir.string(), " is not writable");
}

// Writes all of [p, p + n) to fd (sequential); BackendError naming `name` on failure.
void write_all(int fd, const void* data, size_t n, const std::string& name) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t r = ::write(fd, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw BackendError(detail::concat(name, ": write failed: ", std::strerror(errno)));
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
}

}  // namespace meshnn::io
