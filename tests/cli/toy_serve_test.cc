// A model defined outside src/models reaches the server: meshnn-toy-serve is meshnn-serve built
// with the toy VAE of tests/support/toy_model registered (CMakeLists.txt). Over loopback HTTP it
// lists the toy, answers its example input, decodes and encodes it with the bytes the toy CLI
// writes for the same input (meshnn-toy audio-decode / audio-encode at the worker's one thread),
// and drains on SIGTERM with exit 0. Runs the real binaries in a temp folder.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_run.h"
#include "support/scratch_dir.h"
#include "support/toy_model/config.h"
#include "support/toy_model/weights.h"

extern char** environ;

namespace meshnn {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Reply {
  int status = 0;
  std::string head, body;
};

// One request on a fresh loopback connection (Connection: close): the status line's code, the
// header block and the body as the server sent them.
Reply http(int port, const std::string& method, const std::string& path,
           const std::string& content_type = "", const std::string& body = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  Reply r;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    ADD_FAILURE() << "cannot connect to port " << port;
    return r;
  }
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!content_type.empty()) req += "Content-Type: " + content_type + "\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  for (size_t sent = 0; sent < req.size();) {
    const ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string all;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t end = all.find("\r\n\r\n");
  if (end == std::string::npos || all.size() < 12) {
    ADD_FAILURE() << "no HTTP answer to " << method << " " << path;
    return r;
  }
  r.status = std::stoi(all.substr(9, 3));
  r.head = all.substr(0, end);
  r.body = all.substr(end + 4);
  return r;
}

// meshnn-toy-serve on 127.0.0.1 and a free port, one worker thread; SIGTERM drains it.
class Server {
 public:
  Server(const test::ScratchDir& f, const std::string& model) : port_file_(f.at("port")) {
    const std::string bin = std::string(MESHNN_BINARY_DIR) + "/meshnn-toy-serve";
    std::vector<std::string> args = {bin, "--host",      "127.0.0.1",   "--port",
                                     "0", "--port-file", port_file_,    "--threads-per-worker",
                                     "1", "--model",     "toy=" + model};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    log_ = f.at("stderr.log");
    out_ = f.at("stdout.log");
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, bin.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + bin);
    const auto t0 = std::chrono::steady_clock::now();
    while (!fs::exists(port_file_) || read_file(port_file_).empty()) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("meshnn-toy-serve exited: " + read_file(log_));
      }
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60))
        throw std::runtime_error("meshnn-toy-serve did not start: " + read_file(log_));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    port_ = std::stoi(read_file(port_file_));
  }
  ~Server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  std::string log() const { return read_file(log_); }
  // SIGTERM → the exit status of the drain (−1 when it did not exit normally).
  int stop() {
    ::kill(pid_, SIGTERM);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

 private:
  std::string port_file_, log_, out_;
  pid_t pid_ = -1;
  int port_ = 0;
};

test::CliRun run_toy(const std::string& args) {
  return test::shell(std::string(MESHNN_BINARY_DIR) + "/meshnn-toy " + args);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ToyModelServe, ServeListsDecodesAndEncodesTheToyModelAsTheCliDoes) {
  const test::ScratchDir f;
  const std::string model = f.at("toy");
  test::toy::write_random_folder(model, test::toy::Config{}, 91);
  Server srv(f, model);

  const Reply list = http(srv.port(), "GET", "/v1/models");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find("\"toy\""), std::string::npos) << list.body;
  EXPECT_NE(list.body.find("toy-audio-vae"), std::string::npos) << list.body;

  // The model's own example input (seeded), decoded by the server and by the toy CLI.
  const Reply example = http(srv.port(), "GET", "/v1/models/toy/example?seconds=0.5&seed=3");
  ASSERT_EQ(example.status, 200) << example.body;
  write_file(f.at("z.npy"), example.body);
  const Reply decoded =
      http(srv.port(), "POST", "/v1/models/toy/decode", "application/x-npy", example.body);
  ASSERT_EQ(decoded.status, 200) << decoded.body;
  test::CliRun r = run_toy("audio-decode --checkpoint " + model + " --latent " + f.at("z.npy") +
                           " --out " + f.at("y.wav") + " --threads 1 --quiet");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string cli_wav = read_file(f.at("y.wav"));
  ASSERT_GT(cli_wav.size(), 44u);
  EXPECT_TRUE(decoded.body == cli_wav)
      << "serve's WAV differs from meshnn-toy audio-decode's (" << decoded.body.size() << " vs "
      << cli_wav.size() << " bytes)";

  // Encode the decoded WAV back: the server's latents are the CLI's bytes.
  const Reply encoded = http(srv.port(), "POST", "/v1/models/toy/encode", "audio/wav", cli_wav);
  ASSERT_EQ(encoded.status, 200) << encoded.body;
  r = run_toy("audio-encode --checkpoint " + model + " --wav " + f.at("y.wav") + " --out " +
              f.at("z2.npy") + " --threads 1 --quiet");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(encoded.body == read_file(f.at("z2.npy")))
      << "serve's latents differ from meshnn-toy audio-encode's";

  // A wrong input is the model's check, refused as a client error.
  const Reply bad =
      http(srv.port(), "POST", "/v1/models/toy/decode", "application/x-npy", "not an npy");
  EXPECT_EQ(bad.status, 400) << bad.body;

  EXPECT_EQ(srv.stop(), 0) << srv.log();
}

}  // namespace
}  // namespace meshnn
