// Output writers against every kind of target: regular files keep mode and owner and are replaced
// atomically, symlinks are followed, FIFOs and character devices are written into (never replaced),
// and an output that is an input is refused before any work. Every special file is made in a
// scratch folder; the system's /dev is never touched.
#include "meshnn/io/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "io/io_test_util.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/wav.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;
using test::random_tensor;
using test::scratch_dir;

std::vector<uint8_t> slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct stat stat_of(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st;
}

TEST(Output, RegularFileKeepsModeAndIsReplacedByRename) {
  const std::string dir = scratch_dir(), p = dir + "/x.npy";
  { std::ofstream(p) << "old"; }
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  const ino_t old_ino = stat_of(p).st_ino;
  const Tensor t = random_tensor({3, 5}, DType::f32, 1);
  io::save_npy(p, t);
  const struct stat st = stat_of(p);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_NE(st.st_ino, old_ino);  // a new inode: renamed over, not truncated
  EXPECT_TRUE(test::same_bytes(io::load_npy(p), t));
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find("meshnn-tmp"), std::string::npos) << e.path();
}

TEST(Output, RegularFileKeepsOwnerWhenRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: cannot give a file to another owner";
  const std::string p = scratch_dir() + "/owned.wav";
  { std::ofstream(p) << "old"; }
  ASSERT_EQ(::chown(p.c_str(), 12345, 23456), 0);
  io::write_wav(p, random_tensor({2, 64}, DType::f32, 2), 16000);
  const struct stat st = stat_of(p);
  EXPECT_EQ(st.st_uid, 12345u);
  EXPECT_EQ(st.st_gid, 23456u);
  EXPECT_EQ(io::read_wav(p).samples.dim(1), 64);
}

TEST(Output, SymlinkIsFollowedNotReplaced) {
  const std::string dir = scratch_dir();
  fs::create_directories(dir + "/real");
  { std::ofstream(dir + "/real/target.npy") << "old"; }
  fs::create_symlink("real/target.npy", dir + "/link.npy");
  const Tensor t = random_tensor({7}, DType::f64, 3);
  io::save_npy(dir + "/link.npy", t);
  EXPECT_TRUE(S_ISLNK(stat_of(dir + "/link.npy").st_mode));
  EXPECT_TRUE(test::same_bytes(io::load_npy(dir + "/real/target.npy"), t));
  // A dangling link: its target is created.
  fs::create_symlink("real/new.npy", dir + "/dangling.npy");
  io::save_npy(dir + "/dangling.npy", t);
  EXPECT_TRUE(S_ISLNK(stat_of(dir + "/dangling.npy").st_mode));
  EXPECT_TRUE(test::same_bytes(io::load_npy(dir + "/real/new.npy"), t));
}

TEST(Output, FifoIsWrittenIntoNotReplaced) {
  const std::string dir = scratch_dir(), fifo = dir + "/pipe.wav", ref = dir + "/ref.wav";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Tensor t = random_tensor({2, 300}, DType::f32, 4);
  io::write_wav(ref, t, 48000);
  std::vector<uint8_t> got;
  std::thread reader([&] { got = slurp(fifo); });  // open blocks until the writer opens
  io::write_wav(fifo, t, 48000);
  reader.join();
  EXPECT_TRUE(S_ISFIFO(stat_of(fifo).st_mode));
  EXPECT_EQ(got, slurp(ref));
}

TEST(Output, CharacterDeviceIsWrittenIntoNotReplaced) {
  const std::string dir = scratch_dir(), dev = dir + "/null";
  // A private copy of /dev/null (char 1:3) inside the scratch folder.
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod of a character device failed (" << std::strerror(errno)
                 << "): needs root outside a restricted container";
  const int fd = ::open(dev.c_str(), O_WRONLY);
  if (fd < 0) GTEST_SKIP() << "the scratch folder does not allow device files (nodev mount)";
  ::close(fd);
  io::save_safetensors(dev, {{"a", random_tensor({4, 4}, DType::f32, 5)}});
  io::write_wav(dev, random_tensor({1, 10}, DType::f32, 6), 8000);
  const struct stat st = stat_of(dev);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(major(st.st_rdev), 1u);
  EXPECT_EQ(minor(st.st_rdev), 3u);
  EXPECT_NO_THROW(io::check_output_path(dev, {}));
}

TEST(Output, OutputEqualToAnInputIsRefused) {
  const std::string dir = scratch_dir(), in = dir + "/latent.npy";
  io::save_npy(in, random_tensor({2, 3}, DType::f32, 7));
  const auto before = slurp(in);
  fs::create_symlink(in, dir + "/alias.npy");
  fs::create_hard_link(in, dir + "/hard.npy");
  for (const std::string& out :
       std::vector<std::string>{in, dir + "/./latent.npy", dir + "/alias.npy", dir + "/hard.npy"}) {
    try {
      io::check_output_path(out, {dir + "/ckpt.safetensors", in});
      ADD_FAILURE() << out << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("same file as the input"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(slurp(in), before);
  EXPECT_NO_THROW(io::check_output_path(dir + "/out.wav", {in}));
}

TEST(Output, UnwritableOrMissingFolderIsRefused) {
  const std::string dir = scratch_dir();
  EXPECT_THROW(io::check_output_path(dir + "/no/such/folder/out.wav", {}), InvalidArgument);
  EXPECT_THROW(io::check_output_path(dir, {}), InvalidArgument);  // a folder
  fs::create_directories(dir + "/ro");
  ASSERT_EQ(::chmod((dir + "/ro").c_str(), 0500), 0);
  if (::geteuid() != 0) {
    EXPECT_THROW(io::check_output_path(dir + "/ro/out.wav", {}), InvalidArgument);
  }
  ::chmod((dir + "/ro").c_str(), 0700);
}

}  // namespace
}  // namespace meshnn
