// A WebSocket stream session of `meshnn serve` (/v1/models/{name}/stream): binary frame messages
// in, PCM out, a text control message flushes ({"type": "done"}); errors end it with an error
// frame and a close. Taken over from an HTTP session at the upgrade. Internal to the serve_* files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cli/stream_frame.h"
#include "serve/errors.h"
#include "serve/models.h"
#include "serve/server.h"

namespace meshnn::serve::internal {

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(tcp::socket socket, Server& srv, std::shared_ptr<const ServedModel> model,
            StreamPcm pcm, cli::StreamFrame frame, std::string id, std::string target);
  ~WsSession();

  void start(Request req);

 private:
  // Touched by one job at a time, on the workers only.
  struct State {
    std::shared_ptr<AudioStream> stream;
    std::unique_ptr<PcmEncoder> encoder;
  };

  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec, size_t n);
  void on_control(const std::string& data);
  void on_frames(const std::string& data);
  template <class Work>
  static void job(Work&& work, const std::shared_ptr<WsSession>& self, bool flush);
  static void post_error(const std::shared_ptr<WsSession>& self, const std::exception& e);
  void on_output(std::string bytes, int64_t samples, double compute, bool flush);
  void send_done();
  void fail(const std::exception& e);
  void finish();
  void cut();
  void fail(const ErrorStatus& st, const std::string& message);

  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buf_;
  Server& srv_;
  std::shared_ptr<const ServedModel> model_;
  StreamPcm pcm_;
  cli::StreamFrame frame_;
  std::string id_, target_;
  Clock::time_point t0_, first_frame_;
  std::shared_ptr<Token> token_ = std::make_shared<Token>();
  std::shared_ptr<State> st_ = std::make_shared<State>();
  int64_t frames_ = 0, samples_ = 0;
  double compute_s_ = 0, first_audio_ms_ = 0, audio_s_ = 0;
  bool have_frame_ = false, have_audio_ = false, failed_ = false;
  int status_ = 101;
  uint64_t session_ = 0;
  bool finished_ = false;
  size_t bytes_in_ = 0, bytes_out_ = 0;
};

}  // namespace meshnn::serve::internal
