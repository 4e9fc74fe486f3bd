// The WebSocket stream session of `meshnn serve` (ws_session.h).
#include "serve/ws_session.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <tuple>

#include "meshnn/core/error.h"
#include "serve/errors.h"

namespace meshnn::serve::internal {

WsSession::WsSession(tcp::socket socket, Server& srv, std::shared_ptr<const ServedModel> model,
                     StreamPcm pcm, cli::StreamFrame frame, std::string id, std::string target)
    : ws_(std::move(socket)),
      srv_(srv),
      model_(std::move(model)),
      pcm_(pcm),
      frame_(frame),
      id_(std::move(id)),
      target_(std::move(target)),
      t0_(Clock::now()) {
  ++srv_.metrics.open_connections;
  ++srv_.metrics.open_streams;
  ++srv_.in_flight;
}
WsSession::~WsSession() {
  token_->cancelled = true;
  srv_.remove_session(session_);
  --srv_.metrics.open_streams;
  --srv_.metrics.open_connections;
  finish();
}

void WsSession::start(Request req) {
  std::weak_ptr<WsSession> weak = weak_from_this();
  session_ = srv_.add_session([weak] {
    if (auto self = weak.lock()) net::post(self->ws_.get_executor(), [self] { self->cut(); });
  });
  beast::get_lowest_layer(ws_).expires_never();  // the websocket's own timeouts from here
  websocket::stream_base::timeout t{};
  t.handshake_timeout = ms(srv_.cfg.header_timeout);
  t.idle_timeout = ms(srv_.cfg.idle_timeout);
  t.keep_alive_pings = true;  // a peer that vanished without a close times out
  ws_.set_option(t);
  ws_.read_message_max(static_cast<size_t>(srv_.cfg.max_request_bytes));
  const std::string id = id_;
  ws_.set_option(websocket::stream_base::decorator([id](websocket::response_type& res) {
    res.set(http::field::server, "meshnn");
    res.set("X-Request-Id", id);
  }));
  ws_.async_accept(req, beast::bind_front_handler(&WsSession::on_accept, shared_from_this()));
}

void WsSession::on_accept(beast::error_code ec) {
  if (ec) {
    status_ = 400;
    return;
  }
  status_ = 101;
  auto self = shared_from_this();
  const bool queued = srv_.queue.push(
      [self] {
        if (self->token_->expired()) return;
        try {
          self->st_->stream = self->model_->open_stream(
              self->srv_.threads(), self->srv_.cfg.workers > 1 && self->srv_.cfg.batch_streams);
          self->st_->encoder = std::make_unique<PcmEncoder>(
              static_cast<int>(self->frame_.items) * self->model_->channels(),
              self->model_->sample_rate(), self->pcm_);
          net::post(self->ws_.get_executor(), [self] { self->do_read(); });
        } catch (const std::exception& e) {
          post_error(self, e);
        }
      },
      false);
  if (!queued) fail({503, "overloaded"}, "server busy: the job queue is full, retry later");
}

void WsSession::do_read() {
  if (failed_) return;
  ws_.async_read(buf_, beast::bind_front_handler(&WsSession::on_read, shared_from_this()));
}

void WsSession::on_read(beast::error_code ec, size_t n) {
  if (ec) {  // closed, timed out, protocol violation or a message over the limit
    token_->cancelled = true;
    if (ec != websocket::error::closed)
      status_ = ec == websocket::error::message_too_big ? 413 : 499;
    return;
  }
  bytes_in_ += n;
  std::string data = beast::buffers_to_string(buf_.data());
  buf_.consume(buf_.size());
  if (ws_.got_text()) return on_control(data);
  on_frames(data);
}

// A text message: the control message (a flush), queued behind the frames before it.
void WsSession::on_control(const std::string& data) {
  try {
    parse_control(data);
  } catch (const meshnn::Error& e) {
    return fail(e);
  }
  auto self = shared_from_this();
  srv_.queue.push(
      [self] {
        if (self->token_->expired()) return;
        job(
            [&] {
              const auto t = Clock::now();
              const Tensor y = cli::StreamFrame::as_planar(self->st_->stream->flush());
              const double c = since(t);
              return std::make_tuple(self->st_->encoder->encode(y), y.dim(2), c);
            },
            self, true);
      },
      true);
}

// A binary message: whole frames, queued as one push job.
void WsSession::on_frames(const std::string& data) {
  // A frame is what `--frames-from` reads for this model and item count (cli/stream_frame.h):
  // a message of another size is refused, never decoded as some other layout.
  const size_t frame_bytes = static_cast<size_t>(frame_.size()) * sizeof(float);
  if (data.size() % frame_bytes != 0)
    return fail({400, "bad_request"},
                detail::concat("stream message of ", data.size(),
                               " bytes: not a whole number of frames (a frame of '", model_->name(),
                               "' here is ", frame_.describe(),
                               "; connect with ?items=N for N batch items)"));
  Tensor frames;
  try {
    frames = frames_from_message(data, frame_.size());
  } catch (const meshnn::Error& e) {
    return fail(e);
  }
  if (!have_frame_) {
    have_frame_ = true;
    first_frame_ = Clock::now();
  }
  frames_ += frames.dim(0);
  if (model_->stream_seconds(frames_, frame_.items) > srv_.cfg.max_audio_seconds)
    return fail({413, "payload_too_large"},
                "stream longer than --max-audio-seconds " +
                    std::to_string(srv_.cfg.max_audio_seconds) +
                    " s (audio seconds summed over the output channels)");
  auto self = shared_from_this();
  srv_.queue.push(
      [self, frames] {
        if (self->token_->expired()) return;
        job(
            [&] {
              // Pushed in groups (the stream's output does not depend on the cut), so a client
              // that leaves mid-message frees the worker after one group.
              const int64_t group = self->model_->push_group();
              std::string bytes;
              int64_t samples = 0;
              const auto t = Clock::now();
              for (int64_t f0 = 0; f0 < frames.dim(0); f0 += group) {
                if (self->token_->expired()) throw Cancelled();
                const int64_t n = std::min(group, frames.dim(0) - f0);
                Tensor part = Tensor::empty({n, frames.dim(1)});
                std::memcpy(part.data<float>(), frames.data<float>() + f0 * frames.dim(1),
                            part.nbytes());
                const Tensor y = cli::StreamFrame::as_planar(
                    self->st_->stream->push(self->frame_.to_input(part)));
                samples += y.dim(2);
                bytes += self->st_->encoder->encode(y);
              }
              return std::make_tuple(std::move(bytes), samples, since(t));
            },
            self, false);
      },
      true);
}

// Runs `work` on the worker; its (bytes, samples, compute seconds) or its error go back to the
// session's strand.
template <class Work>
void WsSession::job(Work&& work, const std::shared_ptr<WsSession>& self, bool flush) {
  try {
    auto [bytes, samples, compute] = work();
    net::post(self->ws_.get_executor(),
              [self, b = std::move(bytes), samples = samples, compute = compute, flush]() mutable {
                self->on_output(std::move(b), samples, compute, flush);
              });
  } catch (const Cancelled&) {
  } catch (const std::exception& e) {
    post_error(self, e);
  }
}

// An error of a worker's job, answered on the session's strand by the server's one table.
void WsSession::post_error(const std::shared_ptr<WsSession>& self, const std::exception& e) {
  const ErrorStatus st = classify(e);
  std::string m = e.what();
  net::post(self->ws_.get_executor(), [self, st, m] { self->fail(st, m); });
}

void WsSession::on_output(std::string bytes, int64_t samples, double compute, bool flush) {
  if (failed_) return;
  samples_ += samples;
  compute_s_ += compute;
  auto then = [self = shared_from_this(), flush] {
    if (flush) return self->send_done();
    self->do_read();
  };
  if (bytes.empty()) return then();
  if (!have_audio_) {
    have_audio_ = true;
    first_audio_ms_ = have_frame_ ? 1e3 * since(first_frame_) : 0;
    srv_.metrics.first_audio(model_->name(), first_audio_ms_ / 1e3);
  }
  auto buf = std::make_shared<std::string>(std::move(bytes));
  bytes_out_ += buf->size();
  ws_.binary(true);
  ws_.async_write(net::buffer(*buf),
                  [self = shared_from_this(), buf, then](beast::error_code ec, size_t) {
                    if (ec) {
                      self->token_->cancelled = true;
                      self->status_ = 499;
                      return;
                    }
                    then();
                  });
}

void WsSession::send_done() {
  const double audio = static_cast<double>(samples_) / model_->sample_rate();
  srv_.metrics.audio(model_->name(), audio, compute_s_);
  audio_s_ += audio;
  nlohmann::json j{{"type", "done"},
                   {"samples", samples_},
                   {"first_audio_ms", have_audio_ ? first_audio_ms_ : 0.0},
                   {"rtf", audio > 0 ? compute_s_ / audio : 0.0},
                   {"items", frame_.items},
                   {"request_id", id_}};
  frames_ = samples_ = 0;
  compute_s_ = 0;
  have_frame_ = have_audio_ = false;
  auto buf = std::make_shared<std::string>(j.dump());
  ws_.text(true);
  ws_.async_write(net::buffer(*buf),
                  [self = shared_from_this(), buf](beast::error_code ec, size_t) {
                    if (ec) {
                      self->status_ = 499;
                      return;
                    }
                    self->do_read();
                  });
}

void WsSession::fail(const std::exception& e) { fail(classify(e), e.what()); }

// Access log, metrics, drain accounting: once, when the session goes or when a drain cut it
// (a worker may still hold the session then, and the process exits without waiting for it).
void WsSession::finish() {
  if (finished_) return;
  finished_ = true;
  --srv_.in_flight;
  srv_.metrics.request("stream", status_, since(t0_), bytes_in_, bytes_out_);
  srv_.access(id_, "GET", target_, model_->name(), status_, bytes_in_, bytes_out_, audio_s_,
              since(t0_));
}

// The drain's end (its deadline or a second signal): an error frame (503) and a close.
void WsSession::cut() {
  if (finished_ || failed_) return;
  ++srv_.cut_requests;
  fail({503, "draining"},
       "the server stopped before this stream ended (--drain-timeout or a second signal)");
}

// {"type": "error", "code", …} then a close; the session ends with the close. A fault of ours
// shows only the request id (the cause goes to the log), as over HTTP.
void WsSession::fail(const ErrorStatus& st, const std::string& message) {
  if (failed_) return;
  failed_ = true;
  token_->cancelled = true;
  const int status = st.status;
  status_ = status;
  if (st.ours())
    std::fprintf(stderr, "meshnn serve: error id=%s: %s\n", id_.c_str(), message.c_str());
  auto buf =
      std::make_shared<std::string>(ws_error_frame(st.code, shown_message(st, message, id_), id_));
  ws_.text(true);
  const websocket::close_code code = status == 503   ? websocket::close_code::try_again_later
                                     : status >= 500 ? websocket::close_code::internal_error
                                     : status == 413 ? websocket::close_code::too_big
                                                     : websocket::close_code::bad_payload;
  const bool draining = srv_.draining;
  ws_.async_write(net::buffer(*buf),
                  [self = shared_from_this(), buf, code, draining](beast::error_code ec, size_t) {
                    if (ec) {
                      if (draining) self->finish();
                      return;
                    }
                    self->ws_.async_close(code, [self, draining](beast::error_code) {
                      if (draining) self->finish();
                    });
                  });
}

}  // namespace meshnn::serve::internal
