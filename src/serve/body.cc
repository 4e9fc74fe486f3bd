#include "serve/body.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/enum_names.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/stream_io.h"
#include "serve/query_params.h"

namespace meshnn::serve {
namespace {

const char* const kBody = "request body";

std::string lower_trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  std::string out(s.substr(b, e - b + 1));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "type/subtype; params" → "type/subtype", lower case.
std::string media_type(std::string_view v) { return lower_trim(v.substr(0, v.find(';'))); }

const uint8_t* bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string read_fd_from(int fd, off_t from, off_t to) {
  std::string out(static_cast<size_t>(to - from), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t r = ::pread(fd, out.data() + done, out.size() - done, from + done);
    if (r < 0 && errno == EINTR) continue;
    MESHNN_CHECK_AS(BackendError, r > 0,
                    "serve: reading encoded PCM failed: ", std::strerror(errno));
    done += static_cast<size_t>(r);
  }
  return out;
}

}  // namespace

namespace {

// The media types a format answers to, most specific first ("audio/*" as a type range).
bool matches(OutputFormat f, const std::string& range, int& specificity) {
  static const char* const wav[] = {"audio/wav", "audio/x-wav", "audio/wave"};
  specificity = 0;
  if (range == "*/*") specificity = 1;
  if (range == "audio/*" && f != OutputFormat::npy) specificity = 2;
  if (f == OutputFormat::wav)
    for (const char* t : wav)
      if (range == t) specificity = 3;
  if (f == OutputFormat::npy && range == "application/x-npy") specificity = 3;
  if (f == OutputFormat::l16 && range == "audio/l16") specificity = 3;
  return specificity > 0;
}

// The q parameter of one Accept entry ("type; q=0.5; x=y"), 1 when absent; a malformed q is 0
// (refused rather than guessed).
double q_value(std::string_view entry) {
  size_t pos = entry.find(';');
  while (pos != std::string_view::npos) {
    const size_t next = entry.find(';', pos + 1);
    const std::string p = lower_trim(entry.substr(pos + 1, next - pos - 1));
    if (p.rfind("q=", 0) == 0) {
      const std::string v = p.substr(2);
      char* end = nullptr;
      const double q = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(q >= 0 && q <= 1)) return 0;
      return q;
    }
    pos = next;
  }
  return 1;
}

}  // namespace

std::optional<OutputFormat> negotiate(std::string_view accept,
                                      std::initializer_list<OutputFormat> offered) {
  if (offered.size() == 0) return std::nullopt;
  if (lower_trim(accept).empty()) return *offered.begin();
  std::optional<OutputFormat> best;
  double best_q = 0;
  size_t best_at = 0;
  for (OutputFormat f : offered) {
    // The most specific range that names f decides its q (and its place in the list).
    int spec_best = 0;
    double q = 0;
    size_t at = 0, index = 0;
    for (size_t pos = 0; pos <= accept.size(); ++index) {
      const size_t comma = std::min(accept.find(',', pos), accept.size());
      const std::string_view entry = accept.substr(pos, comma - pos);
      int spec = 0;
      if (matches(f, media_type(entry), spec) && spec > spec_best) {
        spec_best = spec;
        q = q_value(entry);
        at = index;
      }
      pos = comma + 1;
    }
    if (spec_best > 0 && q > 0 && (!best || q > best_q || (q == best_q && at < best_at))) {
      best = f;
      best_q = q;
      best_at = at;
    }
  }
  return best;
}

std::optional<OutputFormat> parse_accept(std::string_view accept) {
  return negotiate(accept, {OutputFormat::wav, OutputFormat::npy, OutputFormat::l16});
}

namespace {
constexpr EnumNames<OutputFormat, 3> kContentTypes{"output format",
                                                   {{OutputFormat::wav, "audio/wav"},
                                                    {OutputFormat::npy, "application/x-npy"},
                                                    {OutputFormat::l16, "audio/L16"}}};
}  // namespace

const char* content_type_of(OutputFormat f) {
  return kContentTypes.name(f, "application/octet-stream");
}

BodyType parse_content_type(std::string_view content_type) {
  const std::string t = media_type(content_type);
  if (t == "application/x-npy" || t == "application/octet-stream") return BodyType::npy;
  if (t == "audio/wav" || t == "audio/x-wav" || t == "audio/wave") return BodyType::wav;
  return BodyType::unsupported;
}

std::string accepted_layouts(const AudioIoSpec& spec) {
  // "(1, 8, T, 16)" → also "(8, T, 16)": the input without its batch axis.
  const std::string layout = spec.layout();
  return layout + " or (" + layout.substr(layout.find(", ") + 2);
}

Tensor input_from_npy(std::string_view body, const AudioIoSpec& spec) {
  Tensor x = float_input(io::load_npy_bytes(bytes(body), body.size(), kBody), kBody);
  const size_t rank = spec.shape.size();
  if (x.rank() + 1 == static_cast<int64_t>(rank)) {
    Shape with_batch{1};
    for (int64_t d : x.shape()) with_batch.push_back(d);
    x = x.reshape(with_batch);
  }
  bool fits = x.rank() == static_cast<int64_t>(rank);
  for (size_t i = 0; fits && i < rank; ++i) {
    const int64_t d = x.dim(static_cast<int>(i));
    if (static_cast<int>(i) == spec.time_axis)
      fits = d >= 1;
    else if (spec.shape[i] >= 0)
      fits = d == spec.shape[i];
    else
      fits = d >= 1 && d <= kMaxBatchItems;  // a free batch axis: one output channel per item
  }
  if (!fits)
    throw ShapeError(detail::concat(
        kBody, ": expected ", spec.what, " ", accepted_layouts(spec),
        spec.shape[0] < 0 ? detail::concat(" (B ≤ ", kMaxBatchItems, ")") : std::string(), ", got ",
        shape_str(x.shape())));
  return x;
}

Tensor mono_wav_from_body(std::string_view body, int sample_rate) {
  // The checks and messages of vocode --wav.
  io::WavAudio w = io::read_wav_bytes(bytes(body), body.size(), kBody);
  MESHNN_CHECK(w.sample_rate == sample_rate, kBody, ": sample rate ", w.sample_rate,
               " Hz, the model expects ", sample_rate, " Hz (resample it first)");
  MESHNN_CHECK_AS(ShapeError, w.samples.dim(0) == 1, kBody, ": ", w.samples.dim(0),
                  " channels; the model takes mono (mix down first)");
  return w.samples.reshape({w.samples.dim(1)});
}

Tensor batch_wav_from_body(std::string_view body, int sample_rate) {
  // The checks and messages of audio-encode --wav.
  const io::WavAudio in = io::read_wav_bytes(bytes(body), body.size(), kBody);
  const int64_t S = in.samples.dim(1);  // (C, S)
  MESHNN_CHECK_AS(ShapeError, S >= 1, kBody, ": no samples");
  MESHNN_CHECK_AS(InvalidArgument, in.sample_rate == sample_rate, kBody, ": ", in.sample_rate,
                  " Hz; the model takes ", sample_rate, " Hz (resample first)");
  MESHNN_CHECK_AS(ShapeError, in.samples.dim(0) <= kMaxBatchItems, kBody, ": ", in.samples.dim(0),
                  " channels; at most ", kMaxBatchItems, " (one batch item each)");
  return io::channels_as_batch(in.samples);
}

std::string npy_body(const Tensor& t) {
  const std::vector<uint8_t> b = io::npy_bytes(t);
  return std::string(b.begin(), b.end());
}

Tensor frames_from_message(std::string_view data, int64_t frame_size) {
  const size_t frame_bytes = static_cast<size_t>(frame_size) * sizeof(float);
  MESHNN_CHECK_AS(FormatError, frame_size > 0 && data.size() % frame_bytes == 0,
                  "stream message of ", data.size(), " bytes: not a whole number of frames (",
                  frame_size, " float32 values = ", frame_bytes, " bytes each)");
  const int64_t n = static_cast<int64_t>(data.size() / frame_bytes);
  Tensor frames = Tensor::empty({n, frame_size});
  if (n > 0) std::memcpy(frames.data<float>(), data.data(), data.size());  // little-endian host
  check_finite(frames, "stream frames");
  return frames;
}

StreamControl parse_control(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  MESHNN_CHECK_AS(FormatError, !j.is_discarded() && j.is_object(),
                  "stream text message: not a JSON object (expected {\"type\": \"flush\"})");
  const auto t = j.find("type");
  MESHNN_CHECK_AS(FormatError, t != j.end() && t->is_string() && t->get<std::string>() == "flush",
                  "stream text message: unknown type (the only one is {\"type\": \"flush\"})");
  return StreamControl::flush;
}

StreamQuery parse_stream_query(std::string_view query) {
  StreamQuery q;
  for_each_query_param(query, [&q](const QueryParam& p) {
    const std::string_view k = p.key, v = p.value;
    if (k == "format") {
      if (v == "s16le" || v == "s16")
        q.pcm = StreamPcm::s16le;
      else if (v == "f32le" || v == "f32" || v == "float32")
        q.pcm = StreamPcm::f32le;
      else
        throw InvalidArgument(
            detail::concat("stream format '", std::string(v), "': expected s16le or f32le"));
    } else if (k == "items") {
      // Strict: 1 to 2 decimal digits, no sign, in 1 … kMaxBatchItems.
      int64_t n = 0;
      bool ok = !v.empty() && v.size() <= 2;
      for (char c : v) {
        ok = ok && c >= '0' && c <= '9';
        n = n * 10 + (c - '0');
      }
      MESHNN_CHECK_AS(InvalidArgument, ok && n >= 1 && n <= kMaxBatchItems, "stream items '",
                      std::string(v), "': expected 1 to ", kMaxBatchItems,
                      " (batch items per frame)");
      q.items = n;
    } else if (!k.empty()) {
      throw InvalidArgument(
          detail::concat("unknown stream parameter '", std::string(k), "' (known: format, items)"));
    }
  });
  return q;
}

PcmEncoder::PcmEncoder(int channels, int sample_rate, StreamPcm format) {
  fd_ = ::memfd_create("meshnn_serve_pcm", MFD_CLOEXEC);
  MESHNN_CHECK_AS(BackendError, fd_ >= 0, "serve: memfd_create failed: ", std::strerror(errno));
  sink_ = io::open_raw_pcm_sink(
      fd_, channels, sample_rate,
      format == StreamPcm::s16le ? io::RawPcmFormat::s16le : io::RawPcmFormat::f32le, "pcm");
}

PcmEncoder::~PcmEncoder() {
  sink_.reset();
  if (fd_ >= 0) ::close(fd_);
}

std::string PcmEncoder::encode(const Tensor& planar) {
  MESHNN_CHECK_AS(ShapeError, planar.rank() == 3 && planar.dim(0) == 1,
                  "serve: (1, C, S) expected");
  if (planar.dim(2) == 0) return "";
  sink_->write(planar.reshape({planar.dim(1), planar.dim(2)}));  // (C, S), as the sinks take it
  // The sink writes sequentially at the file offset: take what it wrote and rewind, so the
  // memory file holds one message at most.
  const off_t end = ::lseek(fd_, 0, SEEK_CUR);
  MESHNN_CHECK_AS(BackendError, end >= 0, "serve: lseek failed: ", std::strerror(errno));
  std::string out = read_fd_from(fd_, 0, end);
  MESHNN_CHECK_AS(BackendError, ::ftruncate(fd_, 0) == 0 && ::lseek(fd_, 0, SEEK_SET) == 0,
                  "serve: rewinding the PCM buffer failed: ", std::strerror(errno));
  return out;
}

std::string encode_output(const Tensor& planar, int sample_rate, OutputFormat format) {
  MESHNN_CHECK_AS(ShapeError, planar.rank() == 3 && planar.dim(0) == 1,
                  "serve: (1, C, S) expected");
  const int64_t C = planar.dim(1), S = planar.dim(2);
  switch (format) {
    case OutputFormat::npy: {
      const std::vector<uint8_t> b = io::npy_bytes(planar.reshape({C, S}));
      return std::string(b.begin(), b.end());
    }
    case OutputFormat::l16: {
      std::string pcm =
          PcmEncoder(static_cast<int>(C), sample_rate, StreamPcm::s16le).encode(planar);
      for (size_t i = 0; i + 1 < pcm.size(); i += 2) std::swap(pcm[i], pcm[i + 1]);
      return pcm;
    }
    case OutputFormat::wav: {
      // The library's WAV writer into an anonymous memory file: no file on disk to clean up.
      const int fd = ::memfd_create("meshnn_serve_wav", MFD_CLOEXEC);
      MESHNN_CHECK_AS(BackendError, fd >= 0, "serve: memfd_create failed: ", std::strerror(errno));
      struct Close {
        int fd;
        ~Close() { ::close(fd); }
      } close_fd{fd};
      auto sink = io::open_wav_fd_sink(fd, static_cast<int>(C), sample_rate);
      sink->write(planar.reshape({C, S}));
      sink->close();
      const off_t end = ::lseek(fd, 0, SEEK_END);
      MESHNN_CHECK_AS(BackendError, end >= 0, "serve: lseek failed: ", std::strerror(errno));
      return read_fd_from(fd, 0, end);
    }
  }
  return "";
}

std::string decode_path(std::string_view path) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      // A raw NUL never reaches here through Beast's parser; refused all the same, as its escape.
      MESHNN_CHECK_AS(FormatError, path[i] != '\0', "request path: a NUL byte");
      out += path[i];
      continue;
    }
    const int hi = i + 2 < path.size() ? hex(path[i + 1]) : -1;
    const int lo = hi >= 0 ? hex(path[i + 2]) : -1;
    MESHNN_CHECK_AS(FormatError, lo >= 0, "request path: a '%' not followed by two hex digits");
    const char c = static_cast<char>(hi * 16 + lo);
    // An escaped '/' would move a segment boundary; NUL ends C strings: neither is in a name.
    MESHNN_CHECK_AS(FormatError, c != '\0' && c != '/', "request path: an escaped NUL or '/' (%",
                    std::string(path.substr(i + 1, 2)), ")");
    out += c;
    i += 2;
  }
  return out;
}

}  // namespace meshnn::serve
