"""The streams of meshnn.AudioModel (and of the typed classes over it): Stream (frames in, the
samples that became final out) and AudioEncodeStream (samples in, latent frames out)."""
from ._common import _Closable
from ._convert import as_array, out, wants_torch
from ._kwargs import strict_class


class _StreamCommon(_Closable):
    """What both streams answer: reset(), the rate, the hop, the look-ahead in ms, the mesh."""

    def __init__(self, core):
        self._core = core
        self._torch = False

    def reset(self):
        self._live().reset()

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def samples_per_frame(self):
        return self._live().samples_per_frame

    @property
    def lookahead_ms(self):
        return self._live().lookahead_ms

    @property
    def mesh(self):
        return self._live().mesh

    def __repr__(self):
        name = type(self).__name__
        if self.closed:
            return f'meshnn.{name}(closed)'
        return f'meshnn.{name}(mesh={self.mesh!r}, sample_rate={self.sample_rate})'


@strict_class
class Stream(_StreamCommon):
    """An exact streaming decoder (docs/streaming.md): push(frames) → the samples that became
    final, flush() → the rest; reset() drops the current input. Frames may be numpy arrays or
    CPU torch tensors (float32; slices are fine), as for the models: torch in → torch out, and
    flush() returns what the last push got. One call at a time per stream: a call from a second
    thread while one runs raises RuntimeError ("in use")."""

    def push(self, frames, *, as_torch=None):
        kind = wants_torch(frames, as_torch)
        y = out(self._live().push(as_array(frames, 'frames')), kind)
        self._torch = kind
        return y

    def flush(self, *, as_torch=None):
        return out(self._live().flush(), self._torch if as_torch is None else
                   wants_torch(None, as_torch))

    @property
    def lookahead_frames(self):
        return self._live().lookahead_frames

    @property
    def frames_pushed(self):
        """Frames pushed since the last flush / reset."""
        return self._live().frames_pushed

    @property
    def samples_returned(self):
        """Samples (per item and channel) returned since the last flush / reset."""
        return self._live().samples_returned


@strict_class
class AudioEncodeStream(_StreamCommon):
    """An exact streaming encoder (AudioModel.encode_stream): push(wave (B, 1, n)) → the
    posterior of the frames that became final, flush() → the rest (the last partial hop
    zero-padded, as encode()); reset() drops the current input. Each returns (mean, log_std),
    each (B, C, m); torch in → torch out, flush() as the last push. The pushes and the flush
    concatenated along time equal encode() of the whole wave to f32 rounding."""

    def push(self, wave, *, as_torch=None):
        kind = wants_torch(wave, as_torch)
        mean, logs = self._live().push(as_array(wave, 'wave'))
        self._torch = kind
        return out(mean, kind), out(logs, kind)

    def flush(self, *, as_torch=None):
        kind = self._torch if as_torch is None else wants_torch(None, as_torch)
        mean, logs = self._live().flush()
        return out(mean, kind), out(logs, kind)

    @property
    def lookahead_samples(self):
        return self._live().lookahead_samples
