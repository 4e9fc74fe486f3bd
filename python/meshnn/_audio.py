"""meshnn.AudioModel: any audio model meshnn knows, through the registry (the one audio class
the compiled module binds; BigVGAN, LtxAudioDecoder and MiniMaxH3AudioVAE are facades over it),
and the WAV helpers read_wav / write_wav.
"""
import json
import os

import numpy as np

from . import _meshnn
from ._common import AttrDict, _Closable, _backend, _threads, bool_arg, int_arg
from ._convert import as_array, out, wants_torch
from ._kwargs import strict, strict_class
from ._streams import AudioEncodeStream, Stream


def _options(precision='fp32', config=None, allow_unknown_config=False, allow_unused=False,
             encoder_only=False, decoder_only=False, model=None, what='AudioModel.load'):
    """The core's AudioModelOptions, each flag checked to be a bool (ValueError naming `what`)."""
    flags = {'allow_unknown_config': allow_unknown_config, 'allow_unused': allow_unused,
             'encoder_only': encoder_only, 'decoder_only': decoder_only}
    for name, value in flags.items():
        bool_arg(f'{what}: {name}', value)
    return _meshnn.AudioModelOptions(
        precision=precision, config='' if config is None else os.fspath(config),
        model=model or '', **flags)


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
    calls; input_spec / output_spec say what they take and give. mesh, threads and backend given
    at load are every call's defaults; a call may override each."""

    def __init__(self, core, threads=None, mesh='auto', backend='local'):
        self._core = core
        self._threads = _threads(threads)
        self._mesh = str(mesh)
        self._backend = _backend(backend)

    @classmethod
    def load(cls, path, precision='fp32', config=None, threads=None, allow_unknown_config=False,
             mesh='auto', backend='local', allow_unused=False, encoder_only=False,
             decoder_only=False, model=None):
        """path: a checkpoint file or a model folder; precision: a mode, a preset or stage=mode
        pairs (docs/precision.md); config: a config.json for a checkpoint without one;
        allow_unknown_config: accept config fields meshnn does not know; allow_unused: accept a
        checkpoint with extra tensors beside the model's (LTX); encoder_only / decoder_only: load
        one half of a VAE (the other call then raises); model: load as this registered model
        without asking the others (its own loader's errors)."""
        o = _options(precision, config, allow_unknown_config, allow_unused, encoder_only,
                     decoder_only, model)
        return cls(_meshnn.AudioModel.load(os.fspath(path), o), threads=threads, mesh=mesh,
                   backend=backend)

    @classmethod
    def random(cls, model, seed=0, precision='fp32', threads=None, mesh='auto', backend='local'):
        """The registered `model` with seeded random weights at its released size (demos,
        timing); ValueError for a model that has none."""
        seed = int_arg('seed', seed, 0, (1 << 64) - 1)
        core = _meshnn.AudioModel.random(str(model), seed, _options(precision))
        return cls(core, threads=threads, mesh=mesh, backend=backend)

    @staticmethod
    def registered():
        """The registered models, in the order load() asks them."""
        return list(_meshnn.AudioModel.registered())

    @staticmethod
    def identify(path, config=None, allow_unknown_config=False):
        """The registered model load() would take `path` for (from file headers; no weights
        read); ValueError saying why each refuses when none would."""
        o = _options(config=config, allow_unknown_config=allow_unknown_config,
                     what='AudioModel.identify')
        return _meshnn.AudioModel.identify(os.fspath(path), o)

    @staticmethod
    def files(path, config=None):
        """The files load() reads for `path` (from their names; nothing is read): what a program
        must never write over."""
        return list(_meshnn.AudioModel.files(os.fspath(path), _options(config=config)))

    @property
    def model(self):
        return self._live().model

    @property
    def variant(self):
        """What the checkpoint is: 'ltx-2.3', 'ltx-2', 'bigvgan', 'minimax-h3', …"""
        return self._live().variant

    @property
    def description(self):
        return self._live().description

    @property
    def config(self):
        """The model's config as loaded (dict with attribute access)."""
        text = self._live().config_json
        return AttrDict(json.loads(text) if text else {})

    @property
    def stage_precisions(self):
        """{stage: mode} the model was built with, in chain order (empty for a model that runs
        one precision everywhere)."""
        return dict(self._live().stage_precisions)

    @property
    def parameters(self):
        return self._live().parameters

    @property
    def input_spec(self):
        return AttrDict(self._live().input_spec)

    @property
    def output_spec(self):
        return AttrDict(self._live().output_spec)

    @property
    def sample_rate(self):
        """Samples per second of the wave the model gives (and its encoder takes)."""
        return self._live().output_spec['sample_rate']

    @property
    def has_encoder(self):
        return self._live().has_encoder

    @property
    def can_stream(self):
        return self._live().can_stream

    @property
    def has_wave_input(self):
        return self._live().has_wave_input

    @property
    def has_latent_statistics(self):
        return self._live().has_latent_statistics

    @property
    def latents_mean(self):
        return list(self._live().latents_mean)

    @property
    def latents_std(self):
        return list(self._live().latents_std)

    def output_samples(self, frames):
        return self._live().output_samples(int_arg('frames', frames, 0, 1 << 40))

    def _run_options(self, mesh, backend, threads):
        return {'mesh': self._mesh if mesh is None else str(mesh),
                'backend': self._backend if backend is None else _backend(backend),
                'threads': self._threads if threads is None else _threads(threads)}

    def __call__(self, x, *, as_torch=None, mesh=None, threads=None, backend=None, progress=None,
                 chunk_frames=None):
        """x: input_spec's layout, float32 → output_spec's. chunk_frames: run on one device in
        chunks of that many input frames (bounded memory, equal to the one-shot run to f32
        rounding; models that run in chunks). progress(done, total, stage) is called after each
        stage or chunk; an exception it raises stops the run and is re-raised. Torch in → torch
        out unless as_torch says otherwise."""
        as_torch = wants_torch(x, as_torch)
        chunk = 0 if chunk_frames is None else int_arg('chunk_frames', chunk_frames, 0)
        y = self._live().run(as_array(x, 'input'), chunk_frames=chunk, progress=progress,
                             **self._run_options(mesh, backend, threads))
        return out(y, as_torch)

    run = __call__

    def encode(self, wave, *, as_torch=None, mesh=None, threads=None, backend=None, progress=None,
               log_std=False):
        """wave: output_spec's layout → input_spec's (models with an encoder): the posterior
        mean, or (mean, log_std) with log_std=True."""
        as_torch = wants_torch(wave, as_torch)
        bool_arg('log_std', log_std)
        mean, logs = self._live().encode(as_array(wave, 'wave'), progress=progress,
                                         **self._run_options(mesh, backend, threads))
        return (out(mean, as_torch), out(logs, as_torch)) if log_std else out(mean, as_torch)

    def normalize_latents(self, z, *, as_torch=None):
        """(z − latents_mean) / latents_std per channel of (B, C, T) (models with latent
        statistics: encode output → a generator's latents)."""
        return out(self._live().normalize_latents(as_array(z, 'latents')),
                   wants_torch(z, as_torch))

    def denormalize_latents(self, z, *, as_torch=None):
        """z · latents_std + latents_mean per channel (a generator's latents → run input)."""
        return out(self._live().denormalize_latents(as_array(z, 'latents')),
                   wants_torch(z, as_torch))

    def input_from_wave(self, samples, *, as_torch=None):
        """samples: (S,) mono float32 at sample_rate → run()'s input (1, …, T) (models with
        has_wave_input: BigVGAN's mel spectrogram)."""
        return out(self._live().input_from_wave(as_array(samples, 'samples')),
                   wants_torch(samples, as_torch))

    def stream(self, mesh='1x1', threads=None, backend=None):
        """An exact streaming run (models that stream): push(frames) / flush()."""
        return Stream(self._live().stream(**self._run_options(mesh, backend, threads)))

    def stage_stream(self, stage, mesh='1x1', threads=None, backend=None):
        """A stream entering the chain at `stage` (a key of stage_precisions, e.g. 'vocoder')."""
        return Stream(self._live().stage_stream(str(stage),
                                                **self._run_options(mesh, backend, threads)))

    def encode_stream(self, mesh='1x1', threads=None, backend=None):
        """An exact streaming encoder (models with an encoder): push(wave (B, 1, n)) → (mean,
        log_std) of the frames that became final (AudioEncodeStream)."""
        return AudioEncodeStream(self._live().encode_stream(
            **self._run_options(mesh, backend, threads)))

    def _native_run_seconds(self, x, mesh='1x1', threads=0, repeat=1):
        """The C++ run alone, `repeat` times on x (GIL released): seconds per call (for
        bench/torch/python_overhead.py: the module's overhead against the library's)."""
        return self._live()._native_run_seconds(as_array(x, 'input'), mesh, threads, repeat)

    def __repr__(self):
        if self.closed:
            return 'meshnn.AudioModel(closed)'
        return f'meshnn.AudioModel({self.model!r}: {self.description})'
