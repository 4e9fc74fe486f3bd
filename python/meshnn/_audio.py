"""meshnn.BigVGAN, meshnn.LtxAudioDecoder and meshnn.AudioModel: the audio models with the calls
PyTorch users know (meshnn.MiniMaxH3AudioVAE is in _minimax_h3.py).

BigVGAN follows NVIDIA's bigvgan.BigVGAN (from_pretrained on a local folder, forward(mel) →
(B, 1, samples), .h, remove_weight_norm / eval for drop-in code); LtxAudioDecoder follows
ltx-core's decode_audio (latent (B, 8, T, 16) → (B, 2, samples)).
"""
import atexit
import json
import operator
import os
import threading

import numpy as np

from . import _meshnn
from ._convert import as_array, is_torch, out, wants_torch
from ._kwargs import strict, strict_class

_CONVERTER = 'tools/convert_checkpoint.py'


class AttrDict(dict):
    """A dict whose keys are also attributes (NVIDIA's `h`)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


_mpi_finalize_registered = False


def _backend(backend):
    """Checks the backend name; for "mpi", finalizes MPI when the interpreter exits (every rank of
    an mpiexec launch must, or mpiexec reports an abnormal end)."""
    global _mpi_finalize_registered
    if backend not in ('local', 'mpi'):
        raise ValueError(f'backend must be "local" or "mpi", got {backend!r}')
    if backend == 'mpi' and not _mpi_finalize_registered:
        atexit.register(_meshnn._finalize_backends)
        _mpi_finalize_registered = True
    return backend


def _unknown_config_option(core_load, allow_unknown_config, what):
    """The keyword the core's load takes for allow_unknown_config (a bool; anything else raises
    ValueError naming `what`)."""
    if not isinstance(allow_unknown_config, bool):
        raise ValueError(f'{what}: allow_unknown_config must be True or False, '
                         f'got {allow_unknown_config!r}')
    return {'allow_unknown_config': allow_unknown_config}


def _to_cpu_float32(owner, args, device, dtype):
    """torch's Module.to(...) for drop-in code: the CPU and float32 are accepted (meshnn runs on
    the CPU and takes float32; its compute precision is chosen at load); anything else raises
    ValueError instead of being ignored."""
    for a in args:
        kind = type(a).__name__ if is_torch(a) else ''
        if isinstance(a, bool):
            continue  # non_blocking, given positionally
        if kind == 'Tensor':
            device, dtype = a.device, a.dtype
        elif kind == 'dtype':
            dtype = a
        elif kind == 'device' or isinstance(a, (str, int)):
            device = a
        else:
            raise ValueError(f'{type(owner).__name__}.to(): unexpected argument {a!r}')
    if device is not None and str(getattr(device, 'type', device)).split(':')[0] != 'cpu':
        raise ValueError(f'{type(owner).__name__}.to({device!r}): meshnn runs on the CPU; its '
                         f'outputs are CPU arrays / tensors (move those with .to(device))')
    if dtype is not None and str(dtype) not in ('torch.float32', 'float32', 'torch.float'):
        raise ValueError(f'{type(owner).__name__}.to(dtype={dtype}): inputs and outputs are '
                         f'float32; choose the compute precision at load (precision="bf16")')
    return owner


@strict
def process_rank(backend='mpi'):
    """This process's rank under mpiexec (0 without MPI): write outputs from rank 0 only."""
    return _meshnn.process_rank(_backend(backend))


def int_arg(name, value, lo=None, hi=None):
    """value as an int when it is one (int or numpy integer; never bool or float: 4.7 is not
    silently 4, True is not 1), within [lo, hi]; ValueError otherwise."""
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError(f'{name} must be an integer, got {type(value).__name__} {value!r}')
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f'{name} must be an integer, got {type(value).__name__} {value!r}') from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bounds = f'≥ {lo}' if hi is None else f'in [{lo}, {hi}]'
        raise ValueError(f'{name} must be {bounds}, got {v}')
    return v


def _threads(threads):
    if threads is None:
        return 0
    return int_arg('threads', threads, 0, 4096)


@strict_class
class _Closable:
    """close() and `with`: drops the compiled object (its memory is freed once no call on
    another thread still uses it); any later call raises ValueError."""
    _core = None

    def _live(self):
        core = self._core
        if core is None:
            raise ValueError(f'{type(self).__name__} is closed')
        return core

    def close(self):
        self._core = None

    @property
    def closed(self):
        return self._core is None

    def __enter__(self):
        self._live()
        return self

    def __exit__(self, *exc):
        self.close()
        return False


@strict_class
class Stream(_Closable):
    """An exact streaming decoder (docs/streaming.md): push(frames) → the samples that became
    final, flush() → the rest; reset() drops the current input. Frames may be numpy arrays or
    CPU torch tensors (float32; slices are fine), as for the models: torch in → torch out, and
    flush() returns what the last push got. One call at a time per stream: a call from a second
    thread while one runs raises RuntimeError ("in use")."""

    def __init__(self, core):
        self._core = core
        self._torch = False

    def push(self, frames, *, as_torch=None):
        kind = wants_torch(frames, as_torch)
        y = out(self._live().push(as_array(frames, 'frames')), kind)
        self._torch = kind
        return y

    def flush(self, *, as_torch=None):
        return out(self._live().flush(), self._torch if as_torch is None else
                   wants_torch(None, as_torch))

    def reset(self):
        self._live().reset()

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def samples_per_frame(self):
        return self._live().samples_per_frame

    @property
    def lookahead_frames(self):
        return self._live().lookahead_frames

    @property
    def lookahead_ms(self):
        return self._live().lookahead_ms

    @property
    def mesh(self):
        return self._live().mesh

    def __repr__(self):
        if self.closed:
            return 'meshnn.Stream(closed)'
        return f'meshnn.Stream(mesh={self.mesh!r}, sample_rate={self.sample_rate})'


@strict_class
class BigVGAN(_Closable):
    """NVIDIA BigVGAN vocoder on meshnn. Build with BigVGAN.from_pretrained(path)."""

    def __init__(self, core, mesh='auto', threads=None, backend='local'):
        self._core = core
        self._mesh = mesh
        self._threads = _threads(threads)
        self._backend = _backend(backend)
        self.h = AttrDict(json.loads(core.config_json) if core.config_json else {})

    @classmethod
    def from_pretrained(cls, path, precision='fp32', mesh='auto', threads=None, config=None,
                        backend='local', use_cuda_kernel=False, allow_unknown_config=False):
        """path: a folder as NVIDIA publishes it (config.json + bigvgan_generator.pt, or our
        bigvgan_generator.safetensors), or a .safetensors / .pt file; the config is `config`, else
        the folder's config.json, else the file's `config` metadata, else the config.json next to
        the file. No downloads: a hub id must be fetched
        first (e.g. `huggingface-cli download nvidia/bigvgan_v2_24khz_100band_256x --local-dir D`).
        use_cuda_kernel is accepted for drop-in calls and ignored (CPU only); any other keyword
        raises TypeError. allow_unknown_config: accept config fields meshnn does not know."""
        load = _meshnn.BigVganVocoder.load
        extra = _unknown_config_option(load, allow_unknown_config, 'BigVGAN.from_pretrained')
        if not isinstance(use_cuda_kernel, bool):
            raise ValueError(f'use_cuda_kernel must be True or False, got {use_cuda_kernel!r}')
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f'{path}: no such file or folder (meshnn does not download; fetch the model folder '
                f'first, e.g. huggingface-cli download <repo> --local-dir <dir>)')
        # The config as every entry point finds it: `config`, a folder's config.json, a file's
        # `config` metadata, else the config.json beside the file (BigVganVocoder::load).
        config = os.fspath(config) if config is not None else ''
        if os.path.isdir(path):
            candidates = [os.path.join(path, n) for n in
                          ('bigvgan_generator.safetensors', 'model.safetensors', 'bigvgan_generator.pt')]
            found = [c for c in candidates if os.path.isfile(c)]
            if not found:
                raise FileNotFoundError(
                    f'{path}: no bigvgan_generator.pt or bigvgan_generator.safetensors (NVIDIA '
                    f'publishes config.json + bigvgan_generator.pt; another checkpoint converts with '
                    f'{_CONVERTER} IN OUT.safetensors --kind bigvgan)')
            ckpt = found[0]
        else:
            ckpt = path
        # Safetensors and NVIDIA's torch.save .pt alike: the library's one reader (the .pt through
        # its weights-only unpickler; no torch needed, nothing in the file is ever executed).
        core = load(ckpt, config, precision, **extra)
        return cls(core, mesh=mesh, threads=threads, backend=backend)

    @property
    def config(self):
        """The config as parsed (the same dict as `h`)."""
        return self.h

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def num_mels(self):
        return self._live().num_mels

    @property
    def hop_length(self):
        return self._live().hop_length

    def __call__(self, mel, *, as_torch=None, progress=None, mesh=None, threads=None):
        """mel: (B, num_mels, frames) float32 → (B, 1, frames · hop_length) float32 in [-1, 1].
        Torch in → torch out unless as_torch says otherwise."""
        as_torch = wants_torch(mel, as_torch)
        y = self._live().vocode(as_array(mel, 'mel'), mesh=mesh or self._mesh, backend=self._backend,
                              threads=self._threads if threads is None else _threads(threads),
                              progress=progress)
        return out(y, as_torch)

    forward = __call__

    def mel_spectrogram(self, wav, *, as_torch=None):
        """wav: (T,) or (B, T) float32 at sample_rate → log-mel (B, num_mels, T // hop_length),
        as NVIDIA's meldataset.get_mel_spectrogram (B = 1 for a 1-D input)."""
        as_torch = wants_torch(wav, as_torch)
        a = as_array(wav, 'wav')
        if a.ndim == 1:
            y = self._live().mel_spectrogram(a)[None]
        elif a.ndim == 2:
            y = np.stack([self._live().mel_spectrogram(np.ascontiguousarray(r)) for r in a])
        else:
            raise ValueError(f'wav: expected (T,) or (B, T), got shape {tuple(a.shape)}')
        return out(y, as_torch)

    # Drop-in no-ops: meshnn folds weight norm at load and has no training mode.
    def stream(self, mesh='1x1', threads=None):
        """An exact streaming vocoder over these weights: push(mel (B, num_mels, n)) → the
        samples (B, 1, m) that became final, flush() → the rest (docs/streaming.md)."""
        return Stream(_meshnn.StreamingVocoder(self._live(), mesh=mesh, threads=_threads(threads)))

    def remove_weight_norm(self):
        return None

    def eval(self):
        return self

    def to(self, *args, device=None, dtype=None, non_blocking=False, memory_format=None):
        """Drop-in Module.to: the CPU and float32 return self; another device or dtype raises."""
        return _to_cpu_float32(self, args, device, dtype)

    def __repr__(self):
        return (f'meshnn.BigVGAN(sample_rate={self.sample_rate}, num_mels={self.num_mels}, '
                f'hop_length={self.hop_length})')


@strict_class
class LtxAudioDecoder(_Closable):
    """LTX-2.3 / LTX-2 audio decode (mel-VAE decoder → vocoder [→ bandwidth extension])."""

    def __init__(self, core, mesh='auto', threads=None, backend='local'):
        self._core = core
        self._mesh = mesh
        self._threads = _threads(threads)
        self._backend = _backend(backend)

    @classmethod
    def from_checkpoint(cls, path, mesh='auto', precision='fp32', threads=None, backend='local',
                        allow_unknown_config=False):
        """path: an LTX-2 / LTX-2.3 .safetensors with ltx-core's key names and `config` metadata.
        mesh: "auto" (one device, an OpenMP team over the cores) or "RxC"; precision: fp32 |
        bf16 | bf16x2 | bf16x3 for every stage, the preset "bf16-safe" (vae and vocoder bf16, bwe
        fp32), or per stage "vae=bf16,vocoder=bf16,bwe=fp32" (unnamed stages fp32; an unknown or
        missing stage raises ValueError); threads: OpenMP threads per device (None = cores /
        devices); allow_unknown_config: accept config fields meshnn does not know."""
        load = _meshnn.LtxAudioDecoder.load
        extra = _unknown_config_option(load, allow_unknown_config,
                                       'LtxAudioDecoder.from_checkpoint')
        core = load(os.fspath(path), precision, **extra)
        return cls(core, mesh=mesh, threads=threads, backend=backend)

    @classmethod
    def random_ltx23(cls, seed=0, mesh='auto', precision='fp32', threads=None):
        """A seeded random LTX-2.3 decoder at the real architecture (demos, timing)."""
        return cls(_meshnn.LtxAudioDecoder.random_ltx23(seed, precision), mesh=mesh, threads=threads)

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
        return self._live().version

    @property
    def parameters(self):
        return self._live().parameters

    def output_samples(self, latent_frames):
        return self._live().output_samples(int_arg('latent_frames', latent_frames, 0, 1 << 40))

    def __call__(self, latent, *, as_torch=None, progress=None, chunk_frames=None, mesh=None,
                 threads=None):
        """latent: (B, 8, T, 16) float32 → waveform (B, 2, samples) float32 at sample_rate.
        chunk_frames: decode on one device in chunks of that many latent frames (bounded memory,
        equal to the one-shot decode to f32 rounding). progress(done, total, stage) is called
        after each stage or chunk; an exception it raises stops the decode and is re-raised.
        Torch in → torch out unless as_torch says otherwise."""
        as_torch = wants_torch(latent, as_torch)
        y = self._live().decode(as_array(latent, 'latent'), mesh=mesh or self._mesh,
                              backend=self._backend,
                              threads=self._threads if threads is None else _threads(threads),
                              chunk_frames=0 if chunk_frames is None else
                              int_arg('chunk_frames', chunk_frames, 0),
                              progress=progress)
        return out(y, as_torch)

    decode = __call__

    def stream(self, mesh='1x1', threads=None):
        """An exact streaming decoder: push(latent (B, 8, n, 16)) → the samples (B, 2, m) that
        became final, flush() → the rest (docs/streaming.md)."""
        return Stream(_meshnn.StreamingLtxDecoder(self._live(), mesh=mesh,
                                                  threads=_threads(threads)))

    def stream_vocoder(self, mesh='1x1', threads=None):
        """The vocoder (+ bandwidth extension) alone as a stream: push(mel (B, 2, n, 64))."""
        return Stream(_meshnn.StreamingVocoder(self._live(), mesh=mesh, threads=_threads(threads)))

    def __repr__(self):
        return f'meshnn.LtxAudioDecoder(version={self.version!r}, sample_rate={self.sample_rate})'


@strict
def mel_spectrogram(vocoder, wav, *, as_torch=None):
    """BigVGAN's mel front end of `vocoder` on wav (see BigVGAN.mel_spectrogram)."""
    return vocoder.mel_spectrogram(wav, as_torch=as_torch)


@strict
def read_wav(path):
    """WAV file → (samples (C, T) float32 in [-1, 1], sample_rate) (libsndfile, as the CLI).
    Channels first, as the models return audio, as write_wav takes it and as the C++ io::read_wav
    gives it (one layout in C++ and Python), so that write_wav(path, *read_wav(path)) rewrites the
    same file."""
    return _meshnn.read_wav(os.fspath(path))


@strict
def write_wav(path, audio, sample_rate):
    """audio: (T,), (C, T) or (1, C, T) float32 (channels first, as the models return) →
    float32 WAV, as the CLI writes it."""
    a = as_array(audio, 'audio')
    if a.ndim == 3:
        if a.shape[0] != 1:
            raise ValueError(f'audio: one waveform at a time, got batch {a.shape[0]}')
        a = a[0]
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2:
        raise ValueError(f'audio: expected (T,), (C, T) or (1, C, T), got shape {tuple(np.shape(audio))}')
    _meshnn.write_wav(os.fspath(path), np.ascontiguousarray(a),
                      int_arg('sample_rate', sample_rate, 1, 1 << 30))


@strict_class
class AudioModel(_Closable):
    """Any audio model meshnn knows, found from what its files hold (AudioModel.registered() lists
    them in the order they are asked): an LTX-2 / LTX-2.3 checkpoint, an NVIDIA BigVGAN folder or
    checkpoint, a MiniMax-H3 audio VAE folder. run() / encode() / stream() are the model's own
    calls; input_spec / output_spec say what they take and give."""

    def __init__(self, core, threads=None):
        self._core = core
        self._threads = _threads(threads)

    @classmethod
    def load(cls, path, precision='fp32', config=None, threads=None, allow_unknown_config=False):
        """path: a checkpoint file or a model folder; precision: a mode, a preset or stage=mode
        pairs (docs/precision.md); config: a config.json for a checkpoint without one;
        allow_unknown_config: accept config fields meshnn does not know."""
        load = _meshnn.AudioModel.load
        extra = _unknown_config_option(load, allow_unknown_config, 'AudioModel.load')
        return cls(load(os.fspath(path), precision, '' if config is None else os.fspath(config),
                        **extra), threads=threads)

    @staticmethod
    def registered():
        return list(_meshnn.AudioModel.registered())

    @property
    def model(self):
        return self._live().model

    @property
    def description(self):
        return self._live().description

    @property
    def input_spec(self):
        return AttrDict(self._live().input_spec)

    @property
    def output_spec(self):
        return AttrDict(self._live().output_spec)

    @property
    def has_encoder(self):
        return self._live().has_encoder

    @property
    def can_stream(self):
        return self._live().can_stream

    def output_samples(self, frames):
        return self._live().output_samples(int_arg('frames', frames, 0, 1 << 40))

    def __call__(self, x, *, as_torch=None, mesh='auto', threads=None, progress=None):
        """x: input_spec's layout, float32 → output_spec's. Torch in → torch out unless as_torch
        says otherwise."""
        as_torch = wants_torch(x, as_torch)
        t = self._threads if threads is None else _threads(threads)
        return out(self._live().run(as_array(x, 'input'), mesh=mesh, threads=t,
                                    progress=progress), as_torch)

    run = __call__

    def encode(self, wave, *, as_torch=None, mesh='auto', threads=None):
        """wave: output_spec's layout → input_spec's (models with an encoder)."""
        as_torch = wants_torch(wave, as_torch)
        t = self._threads if threads is None else _threads(threads)
        return out(self._live().encode(as_array(wave, 'wave'), mesh=mesh, threads=t), as_torch)

    def stream(self, mesh='1x1', threads=None):
        """An exact streaming run (models that stream): push(frames) / flush()."""
        return Stream(self._live().stream(mesh=mesh, threads=_threads(threads)))

    def __repr__(self):
        if self.closed:
            return 'meshnn.AudioModel(closed)'
        return f'meshnn.AudioModel({self.model!r}: {self.description})'
