// The request-body side of `meshnn serve`, apart from the network code so that a fuzzer can drive
// it: content negotiation (Content-Type, Accept, the stream's query string), the one-shot bodies
// (.npy model input, WAV for copy synthesis), the WebSocket stream's messages (binary float32
// frames, JSON control text), and the reply encodings (WAV, .npy, L16 / s16le / f32le PCM).
//
// Every parse applies the same checks with the same messages as the CLI (float_input, the shape
// the model declares), naming the input "request body" where the CLI names a file.
// Bad input throws a meshnn::Error subclass (InvalidArgument, ShapeError, FormatError): the server
// answers it with 400.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli/batch_limit.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/stream_io.h"
#include "meshnn/io/wav.h"

namespace meshnn::serve {

enum class OutputFormat { wav, npy, l16 };
enum class BodyType { npy, wav, unsupported };
enum class StreamPcm { s16le, f32le };

// Accept header (RFC 9110 12.5.1) → the format of `offered` the client prefers: each format takes
// the q-value of the most specific range that matches it (audio/wav over audio/* over */*), q=0
// refuses it, the highest q wins and a tie goes to the range listed first. An empty header gives
// offered[0]; nullopt when nothing offered is acceptable (406).
std::optional<OutputFormat> negotiate(std::string_view accept,
                                      std::initializer_list<OutputFormat> offered);
// negotiate() over what /decode answers: WAV (the default), .npy, L16.
std::optional<OutputFormat> parse_accept(std::string_view accept);
const char* content_type_of(OutputFormat f);
// Content-Type (parameters ignored, case-insensitive) → what the body holds.
BodyType parse_content_type(std::string_view content_type);

// The layouts input_from_npy accepts, e.g. "(1, 8, T, 16) or (8, T, 16)".
std::string accepted_layouts(const AudioIoSpec& spec);
// .npy body → a model's input as its spec says: `spec.shape` with the time axis any length ≥ 1
// and a free batch axis (B) 1 to 64 items; an input without the leading batch axis is given it
// (batch 1). Values as float_input checks them (float32, finite), as the CLI reads an input file.
Tensor input_from_npy(std::string_view body, const AudioIoSpec& spec);
// WAV body → mono samples (T,) at `sample_rate`, as vocode --wav checks them.
Tensor mono_wav_from_body(std::string_view body, int sample_rate);
// WAV body → (B, 1, S) f32, one batch item per WAV channel (B ≤ kMaxBatchItems), S ≥ 1, at
// `sample_rate`: as audio-encode reads its --wav.
Tensor batch_wav_from_body(std::string_view body, int sample_rate);
// A tensor as the bytes io::save_npy writes (audio-encode's --out).
std::string npy_body(const Tensor& t);

// One binary WebSocket message → (n, frame_size) f32 frames: whole frames of float32
// little-endian values, every value finite. An empty message gives n = 0.
Tensor frames_from_message(std::string_view data, int64_t frame_size);

// A text WebSocket message: {"type": "flush"} is the only one; anything else is an error.
enum class StreamControl { flush };
StreamControl parse_control(std::string_view text);

// The stream's query string: format=s16le (the default) or f32le, and items=N, the batch items of
// one frame (1 … kMaxBatchItems, default 1; cli/stream_frame.h defines the frame).
struct StreamQuery {
  StreamPcm pcm = StreamPcm::s16le;
  int64_t items = 1;
};
StreamQuery parse_stream_query(std::string_view query);

// Raw interleaved PCM of (1, C, S) planar samples through the library's own PCM sink (the bytes
// `--out -` writes), kept in an anonymous memory file. One per stream (state across calls).
class PcmEncoder {
 public:
  PcmEncoder(int channels, int sample_rate, StreamPcm format);
  ~PcmEncoder();
  PcmEncoder(const PcmEncoder&) = delete;
  PcmEncoder& operator=(const PcmEncoder&) = delete;
  // planar (1, C, S) → S · C samples, interleaved.
  std::string encode(const Tensor& planar);

 private:
  int fd_ = -1;
  std::unique_ptr<io::AudioSink> sink_;
};

// The reply body for a one-shot output (1, C, S) planar f32 (a batch's (B, 1, S) is passed as
// (1, B, S): one channel per item, as audio-decode writes it):
//   wav: the bytes `meshnn vocode` / `audio-decode --out` write (io::write_wav, float32), encoded
//        in memory (an anonymous memory file: no file on disk);
//   npy: (C, S) float32 .npy (io::npy_bytes);
//   l16: 16-bit big-endian PCM, interleaved (RFC 2586), the conversion of the s16le stream.
std::string encode_output(const Tensor& planar, int sample_rate, OutputFormat format);

// An HTTP path with its %XX escapes decoded (RFC 3986 2.1); FormatError on a bad escape or a
// decoded NUL or '/' (a name never holds one).
std::string decode_path(std::string_view path);

}  // namespace meshnn::serve
