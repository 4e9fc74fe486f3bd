"""meshnn.BigVGAN, meshnn.LtxAudioDecoder and meshnn.MiniMaxH3AudioVAE: the audio models with the
calls PyTorch users know.

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
from ._convert import as_array, out

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


def _bool_arg(name, value):
    if not isinstance(value, bool):
        raise ValueError(f'{name} must be True or False, got {value!r}')
    return value


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


class Stream(_Closable):
    """An exact streaming decoder (docs/streaming.md): push(frames) → the samples that became
    final, flush() → the rest; reset() drops the current input. Frames may be numpy arrays or
    CPU torch tensors (float32, C-contiguous), as for the models. One call at a time per stream:
    a call from a second thread while one runs raises RuntimeError ("in use")."""

    def __init__(self, core):
        self._core = core

    def push(self, frames, *, as_torch=False):
        return out(self._live().push(as_array(frames, 'frames')), as_torch)

    def flush(self, *, as_torch=False):
        return out(self._live().flush(), as_torch)

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
                        backend='local', use_cuda_kernel=False, allow_unknown_config=False,
                        **unused):
        """path: a folder as NVIDIA publishes it (config.json + bigvgan_generator.pt, or our
        bigvgan_generator.safetensors), or a .safetensors / .pt file (config.json next to it, or
        `config`, or the safetensors `config` metadata). No downloads: a hub id must be fetched
        first (e.g. `huggingface-cli download nvidia/bigvgan_v2_24khz_100band_256x --local-dir D`).
        use_cuda_kernel is accepted for drop-in calls and ignored (CPU only).
        allow_unknown_config: accept config fields meshnn does not know (logged, ignored)."""
        lenient = _bool_arg('allow_unknown_config', allow_unknown_config)
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f'{path}: no such file or folder (meshnn does not download; fetch the model folder '
                f'first, e.g. huggingface-cli download <repo> --local-dir <dir>)')
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        if config is None and os.path.isfile(os.path.join(folder, 'config.json')):
            config = os.path.join(folder, 'config.json')
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
        core = _meshnn.BigVganVocoder.load(ckpt, config, precision, lenient)
        return cls(core, mesh=mesh, threads=threads, backend=backend)

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def num_mels(self):
        return self._live().num_mels

    @property
    def hop_length(self):
        return self._live().hop_length

    def __call__(self, mel, *, as_torch=False, progress=None, mesh=None, threads=None):
        """mel: (B, num_mels, frames) float32 → (B, 1, frames · hop_length) float32 in [-1, 1]."""
        y = self._live().vocode(as_array(mel, 'mel'), mesh=mesh or self._mesh, backend=self._backend,
                              threads=self._threads if threads is None else _threads(threads),
                              progress=progress)
        return out(y, as_torch)

    forward = __call__

    def mel_spectrogram(self, wav, *, as_torch=False):
        """wav: (T,) or (B, T) float32 at sample_rate → log-mel (B, num_mels, T // hop_length),
        as NVIDIA's meldataset.get_mel_spectrogram (B = 1 for a 1-D input)."""
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

    def to(self, *args, **kwargs):
        return self

    def __repr__(self):
        return (f'meshnn.BigVGAN(sample_rate={self.sample_rate}, num_mels={self.num_mels}, '
                f'hop_length={self.hop_length})')


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
        devices); allow_unknown_config: accept config fields meshnn does not know (logged,
        ignored)."""
        core = _meshnn.LtxAudioDecoder.load(
            os.fspath(path), precision, _bool_arg('allow_unknown_config', allow_unknown_config))
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

    def __call__(self, latent, *, as_torch=False, progress=None, chunk_frames=None, mesh=None,
                 threads=None):
        """latent: (B, 8, T, 16) float32 → waveform (B, 2, samples) float32 at sample_rate.
        chunk_frames: decode on one device in chunks of that many latent frames (bounded memory,
        equal to the one-shot decode to f32 rounding). progress(done, total, stage) is called
        after each stage or chunk; an exception it raises stops the decode and is re-raised."""
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


def mel_spectrogram(vocoder, wav, **kw):
    """BigVGAN's mel front end of `vocoder` on wav (see BigVGAN.mel_spectrogram)."""
    return vocoder.mel_spectrogram(wav, **kw)


def read_wav(path):
    """WAV file → (samples (C, T) float32 in [-1, 1], sample_rate) (libsndfile, as the CLI).
    Channels first, as the models return audio and as write_wav takes it, so that
    write_wav(path, *read_wav(path)) rewrites the same file."""
    samples, sr = _meshnn.read_wav(os.fspath(path))
    return np.ascontiguousarray(samples.T), sr


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
    _meshnn.write_wav(os.fspath(path), np.ascontiguousarray(a.T),
                      int_arg('sample_rate', sample_rate, 1, 1 << 30))


def _is_torch(x):
    return type(x).__module__.split('.')[0] == 'torch'


class _Output:
    """diffusers-style output: attributes and tuple indexing."""

    def __init__(self, **fields):
        self.__dict__.update(fields)
        self._order = list(fields)

    def __getitem__(self, i):
        return getattr(self, self._order[i])

    def to_tuple(self):
        return tuple(getattr(self, k) for k in self._order)


class MiniMaxH3Posterior:
    """The encoder's diagonal Gaussian: mean (the mode) and log standard deviation (B, C, T)."""

    def __init__(self, mean, log_std, as_torch):
        self._as_torch = as_torch
        self.mean = out(mean, as_torch)
        self.log_std = out(log_std, as_torch)

    def mode(self):
        return self.mean

    @property
    def std(self):
        return out(np.exp(np.asarray(self.log_std)), self._as_torch)

    def sample(self, generator=None):
        """mean + std · ε with ε ~ N(0, 1) (numpy Generator, or a torch Generator with torch)."""
        m = np.asarray(self.mean)
        if self._as_torch:
            import torch
            eps = torch.randn(m.shape, generator=generator).numpy()
        else:
            eps = (generator or np.random.default_rng()).standard_normal(m.shape, dtype=np.float32)
        return out((m + np.exp(np.asarray(self.log_std)) * eps).astype(np.float32), self._as_torch)


class MiniMaxH3EncodeStream(_Closable):
    """An exact streaming encoder: push(wave (B, 1, n)) → the posterior of the frames that became
    final, flush() → the rest (the last partial hop zero-padded, as encode()); reset() drops the
    current input. Each returns (mean, log_std), each (B, C, m). The pushes and the flush
    concatenated along time equal encode() of the whole wave to f32 rounding."""

    def __init__(self, core):
        self._core = core

    def push(self, wave, *, as_torch=False):
        mean, logs = self._live().push(as_array(wave, 'wave'))
        return out(mean, as_torch), out(logs, as_torch)

    def flush(self, *, as_torch=False):
        mean, logs = self._live().flush()
        return out(mean, as_torch), out(logs, as_torch)

    def reset(self):
        self._live().reset()

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def samples_per_frame(self):
        return self._live().samples_per_frame

    @property
    def lookahead_samples(self):
        return self._live().lookahead_samples

    @property
    def lookahead_ms(self):
        return self._live().lookahead_ms

    @property
    def mesh(self):
        return self._live().mesh

    def __repr__(self):
        if self.closed:
            return 'meshnn.MiniMaxH3EncodeStream(closed)'
        return f'meshnn.MiniMaxH3EncodeStream(mesh={self.mesh!r}, sample_rate={self.sample_rate})'


class MiniMaxH3AudioVAE(_Closable):
    """MiniMax-H3 audio VAE (diffusers AutoencoderKLMiniMaxH3Audio): 32 kHz mono per batch item,
    stereo as two items. decode()/encode() apply no latent statistics, as diffusers'; the
    pipeline's normalisation is normalize()/denormalize() with latents_mean / latents_std.
    mesh: 'auto' (one device), or RxC: the columns split the batch items (stereo on 1x2: one
    channel per device, no communication), the rows time; every mesh equals 1x1 to f32 rounding.
    stream() / encode_stream() give exact streaming decode / encode."""

    def __init__(self, core, threads=None, mesh='auto'):
        self._core = core
        self._threads = _threads(threads)
        self._mesh = str(mesh)

    @classmethod
    def from_pretrained(cls, folder, subfolder=None, precision='fp32', threads=None, mesh='auto',
                        parts='both', allow_unknown_config=False, **unused):
        """folder: the component folder (config.json + diffusion_pytorch_model.safetensors), or
        the pipeline folder with subfolder='audio_vae'. No downloads. parts: 'both', 'decoder'
        or 'encoder' (half the weights in memory; the other call then raises).
        allow_unknown_config: accept config fields meshnn does not know (logged, ignored)."""
        lenient = _bool_arg('allow_unknown_config', allow_unknown_config)
        folder = os.fspath(folder)
        if subfolder:
            folder = os.path.join(folder, subfolder)
        if not os.path.isdir(folder):
            raise FileNotFoundError(f'{folder}: no such folder (meshnn does not download)')
        return cls(_meshnn.MiniMaxH3AudioVae.load(folder, precision, parts, lenient),
                   threads=threads, mesh=mesh)

    @property
    def sampling_rate(self):
        return self._live().sample_rate

    @property
    def hop_length(self):
        return self._live().hop_length

    @property
    def latents_mean(self):
        return list(self._live().latents_mean)

    @property
    def latents_std(self):
        return list(self._live().latents_std)

    def decode(self, z, return_dict=True, *, as_torch=None):
        """z: (B, C, T) float32 denormalised latents → .sample (B, 1, hop·T) in [-1, 1].
        Torch in → torch out unless as_torch says otherwise."""
        as_torch = _is_torch(z) if as_torch is None else as_torch
        y = out(self._live().decode(as_array(z, 'latents'), threads=self._threads,
                                    mesh=self._mesh), as_torch)
        return _Output(sample=y) if return_dict else (y,)

    def encode(self, x, return_dict=True, *, as_torch=None):
        """x: (B, 1, L) float32 at 32 kHz → .latent_dist with mode() / mean / log_std / std /
        sample(), each (B, C, ceil(L / hop)); zero right-pad to whole hops, never a crop."""
        as_torch = _is_torch(x) if as_torch is None else as_torch
        mean, logs = self._live().encode(as_array(x, 'wave'), threads=self._threads,
                                         mesh=self._mesh)
        dist = MiniMaxH3Posterior(mean, logs, as_torch)
        return _Output(latent_dist=dist) if return_dict else (dist,)

    def stream(self, mesh='1x1', threads=None):
        """An exact streaming decoder: push(latents (B, C, n)) → the samples (B, 1, m) that
        became final, flush() → the rest (docs/streaming.md). mesh: '1x1' or a '1xN' pipeline."""
        return Stream(self._live().decode_stream(mesh=mesh, threads=_threads(threads)))

    def encode_stream(self, mesh='1x1', threads=None):
        """An exact streaming encoder (MiniMaxH3EncodeStream): push(wave (B, 1, n)) → (mean,
        log_std) of the frames that became final."""
        return MiniMaxH3EncodeStream(self._live().encode_stream(mesh=mesh,
                                                                 threads=_threads(threads)))

    def _stats(self, z):
        c = len(self.latents_mean)
        m = np.asarray(self.latents_mean, dtype=np.float32).reshape(1, c, 1)
        s = np.asarray(self.latents_std, dtype=np.float32).reshape(1, c, 1)
        return as_array(z, 'latents'), m, s

    def normalize(self, z):
        """(z − latents_mean) / latents_std per channel (encode output → DiT latents)."""
        a, m, s = self._stats(z)
        return out(((a - m) / s).astype(np.float32), _is_torch(z))

    def denormalize(self, z):
        """z · latents_std + latents_mean per channel (DiT latents → decode input)."""
        a, m, s = self._stats(z)
        return out((a * s + m).astype(np.float32), _is_torch(z))

    def eval(self):
        return self

    def to(self, *args, **kwargs):
        return self

    def __repr__(self):
        return (f'meshnn.MiniMaxH3AudioVAE(sampling_rate={self.sampling_rate}, '
                f'hop_length={self.hop_length})')


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
        allow_unknown_config: accept config fields meshnn does not know (logged, ignored)."""
        return cls(_meshnn.AudioModel.load(os.fspath(path), precision,
                                           '' if config is None else os.fspath(config),
                                           _bool_arg('allow_unknown_config', allow_unknown_config)),
                   threads=threads)

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
        as_torch = _is_torch(x) if as_torch is None else as_torch
        t = self._threads if threads is None else _threads(threads)
        return out(self._live().run(as_array(x, 'input'), mesh=mesh, threads=t,
                                    progress=progress), as_torch)

    run = __call__

    def encode(self, wave, *, as_torch=None, mesh='auto', threads=None):
        """wave: output_spec's layout → input_spec's (models with an encoder)."""
        as_torch = _is_torch(wave) if as_torch is None else as_torch
        t = self._threads if threads is None else _threads(threads)
        return out(self._live().encode(as_array(wave, 'wave'), mesh=mesh, threads=t), as_torch)

    def stream(self, mesh='1x1', threads=None):
        """An exact streaming run (models that stream): push(frames) / flush()."""
        return Stream(self._live().stream(mesh=mesh, threads=_threads(threads)))

    def __repr__(self):
        if self.closed:
            return 'meshnn.AudioModel(closed)'
        return f'meshnn.AudioModel({self.model!r}: {self.description})'
