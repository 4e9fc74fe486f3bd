"""meshnn.LtxAudioDecoder: ltx-core's decode_audio (latent (B, 8, T, 16) → (B, 2, samples)), a
facade over meshnn.AudioModel (the registry's "ltx-audio-decoder").
"""
import os

from ._audio import AudioModel
from ._common import _Closable, _threads, bool_arg, int_arg
from ._convert import as_array
from ._kwargs import strict_class

_MODEL = 'ltx-audio-decoder'  # its name in AudioModel.registered()


@strict_class
class LtxAudioDecoder(_Closable):
    """LTX-2.3 / LTX-2 audio decode (mel-VAE decoder → vocoder [→ bandwidth extension])."""

    def __init__(self, model):
        self._core = model  # a meshnn.AudioModel holding the decoder

    @classmethod
    def from_checkpoint(cls, path, mesh='auto', precision='fp32', threads=None, backend='local',
                        allow_unknown_config=False):
        """path: an LTX-2 / LTX-2.3 .safetensors with ltx-core's key names and `config` metadata.
        mesh: "auto" (one device, an OpenMP team over the cores) or "RxC"; precision: fp32 |
        bf16 | bf16x2 | bf16x3 for every stage, the preset "bf16-safe" (vae and vocoder bf16, bwe
        fp32), or per stage "vae=bf16,vocoder=bf16,bwe=fp32" (unnamed stages fp32; an unknown or
        missing stage raises ValueError); threads: OpenMP threads per device (None = cores /
        devices); allow_unknown_config: accept config fields meshnn does not know."""
        bool_arg('LtxAudioDecoder.from_checkpoint: allow_unknown_config', allow_unknown_config)
        return cls(AudioModel.load(os.fspath(path), precision=precision, threads=threads,
                                   allow_unknown_config=allow_unknown_config, mesh=mesh,
                                   backend=backend, model=_MODEL))

    @classmethod
    def random_ltx23(cls, seed=0, mesh='auto', precision='fp32', threads=None):
        """A seeded random LTX-2.3 decoder at the real architecture (demos, timing)."""
        return cls(AudioModel.random(_MODEL, seed, precision=precision, threads=threads,
                                     mesh=mesh))

    @property
    def audio_model(self):
        """The meshnn.AudioModel this class is a facade over."""
        return self._live()

    @property
    def stage_precisions(self):
        """{stage: mode} the decoder was built with, e.g. {'vae': 'bf16', 'vocoder': 'bf16',
        'bwe': 'fp32'}."""
        return self._live().stage_precisions

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def version(self):
        return self._live().variant

    @property
    def parameters(self):
        return self._live().parameters

    def output_samples(self, latent_frames):
        return self._live().output_samples(int_arg('latent_frames', latent_frames, 0, 1 << 40))

    def __call__(self, latent, *, as_torch=None, progress=None, chunk_frames=None, mesh=None,
                 threads=None):
        """latent: (B, 8, T, 16) float32 → waveform (B, 2, samples) float32 at sample_rate.
        chunk_frames: decode on one device in chunks of that many latent frames (bounded memory,
        equal to the one-shot decode to f32 rounding); without it, mesh "auto" chunks latents
        longer than 10 s by itself, as the CLI's audio-decode. progress(done, total, stage) is
        called after each stage or chunk; an exception it raises stops the decode and is
        re-raised. Torch in → torch out unless as_torch says otherwise."""
        a = as_array(latent, 'latent')
        if a.ndim != 4:  # AudioModel also takes (8, T, 16) as batch 1; this call never did
            got = ', '.join(map(str, a.shape))
            raise ValueError(f'latent: expected (B, 8, T, 16), got ({got})')
        return self._live()(latent, as_torch=as_torch, progress=progress, mesh=mesh or None,
                            threads=threads, chunk_frames=chunk_frames)

    decode = __call__

    def stream(self, mesh='1x1', threads=None):
        """An exact streaming decoder: push(latent (B, 8, n, 16)) → the samples (B, 2, m) that
        became final, flush() → the rest (docs/streaming.md)."""
        return self._live().stream(mesh=mesh, threads=_threads(threads))

    def stream_vocoder(self, mesh='1x1', threads=None):
        """The vocoder (+ bandwidth extension) alone as a stream: push(mel (B, 2, n, 64))."""
        return self._live().stage_stream('vocoder', mesh=mesh, threads=_threads(threads))

    def __repr__(self):
        return f'meshnn.LtxAudioDecoder(version={self.version!r}, sample_rate={self.sample_rate})'
