"""meshnn.MiniMaxH3AudioVAE: the MiniMax-H3 audio VAE with the calls of diffusers'
AutoencoderKL family (from_pretrained, config, decode(z).sample, encode(x).latent_dist with
sample(generator=...), forward(sample, sample_posterior, return_dict, generator)), plus exact
streams. Torch in → torch out, numpy in → numpy out, as every call of the package.
"""
import json
import os

import numpy as np

from . import _meshnn
from ._audio import (AttrDict, Stream, _Closable, _threads, _to_cpu_float32,
                     _unknown_config_option)
from ._convert import as_array, is_torch, out, wants_torch
from ._kwargs import strict_class


class _Output:
    """diffusers-style output: attributes and tuple indexing (built by meshnn only)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)
        self._order = list(fields)

    def __getitem__(self, i):
        return getattr(self, self._order[i])

    def to_tuple(self):
        return tuple(getattr(self, k) for k in self._order)


def _standard_normal(shape, generator):
    """ε ~ N(0, 1) of `shape`, float32 numpy. generator: None (fresh entropy), a numpy Generator,
    or a torch.Generator: then torch.randn(shape, generator=...) on the CPU, the draw diffusers'
    DiagonalGaussianDistribution.sample makes, so one seed gives diffusers' noise."""
    if generator is None:
        return np.random.default_rng().standard_normal(shape, dtype=np.float32)
    if isinstance(generator, np.random.Generator):
        return generator.standard_normal(shape, dtype=np.float32)
    if is_torch(generator) and type(generator).__name__ == 'Generator':
        import torch
        if generator.device.type != 'cpu':
            raise ValueError(f'generator: on {generator.device}; meshnn draws on the CPU '
                             f'(torch.Generator() or torch.Generator("cpu"))')
        return torch.randn(tuple(shape), generator=generator, dtype=torch.float32).numpy()
    raise ValueError(f'generator: expected None, a torch.Generator or a numpy.random.Generator, '
                     f'got {type(generator).__name__}')


@strict_class
class MiniMaxH3Posterior:
    """The encoder's diagonal Gaussian, as diffusers' DiagonalGaussianDistribution: mean (the
    mode), log_std, std, var, logvar, each (B, C, T); sample(generator) draws mean + std · ε."""

    def __init__(self, mean, log_std, as_torch):
        self._as_torch = as_torch
        self._mean = mean
        self._log_std = log_std
        self.mean = out(mean, as_torch)
        self.log_std = out(log_std, as_torch)

    def mode(self):
        return self.mean

    @property
    def std(self):
        return out(np.exp(self._log_std), self._as_torch)

    @property
    def var(self):
        return out(np.exp(2 * self._log_std), self._as_torch)

    @property
    def logvar(self):
        return out(2 * self._log_std, self._as_torch)

    def sample(self, generator=None):
        """mean + std · ε, ε ~ N(0, 1) from generator (None, torch.Generator or numpy Generator);
        the output is torch when the encoded input was."""
        eps = _standard_normal(self._mean.shape, generator)
        z = (self._mean + np.exp(self._log_std) * eps).astype(np.float32)
        return out(z, self._as_torch)


@strict_class
class MiniMaxH3EncodeStream(_Closable):
    """An exact streaming encoder: push(wave (B, 1, n)) → the posterior of the frames that became
    final, flush() → the rest (the last partial hop zero-padded, as encode()); reset() drops the
    current input. Each returns (mean, log_std), each (B, C, m); torch in → torch out, flush()
    as the last push. The pushes and the flush concatenated along time equal encode() of the
    whole wave to f32 rounding."""

    def __init__(self, core):
        self._core = core
        self._torch = False

    def push(self, wave, *, as_torch=None):
        kind = wants_torch(wave, as_torch)
        mean, logs = self._live().push(as_array(wave, 'wave'))
        self._torch = kind
        return out(mean, kind), out(logs, kind)

    def flush(self, *, as_torch=None):
        kind = self._torch if as_torch is None else wants_torch(None, as_torch)
        mean, logs = self._live().flush()
        return out(mean, kind), out(logs, kind)

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


def _precision(precision, torch_dtype):
    """precision= and diffusers' torch_dtype= (float32 → fp32, bfloat16 → bf16) → one mode."""
    if torch_dtype is None:
        return precision
    name = str(torch_dtype).replace('torch.', '')
    mode = {'float32': 'fp32', 'float': 'fp32', 'bfloat16': 'bf16'}.get(name)
    if mode is None:
        raise ValueError(f'torch_dtype={torch_dtype}: meshnn computes in float32 or bfloat16 '
                         f'(torch.float32, torch.bfloat16)')
    if precision not in ('fp32', mode):
        raise ValueError(f'precision={precision!r} and torch_dtype={torch_dtype} disagree')
    return mode


@strict_class
class MiniMaxH3AudioVAE(_Closable):
    """MiniMax-H3 audio VAE (diffusers AutoencoderKLMiniMaxH3Audio): 32 kHz mono per batch item,
    stereo as two items. decode()/encode() apply no latent statistics, as diffusers'; the
    pipeline's normalisation is normalize()/denormalize() with latents_mean / latents_std.
    mesh: 'auto' (one device), or RxC: the columns split the batch items (stereo on 1x2: one
    channel per device, no communication), the rows time; every mesh equals 1x1 to f32 rounding.
    stream() / encode_stream() give exact streaming decode / encode."""

    def __init__(self, core, threads=None, mesh='auto', config=None):
        self._core = core
        self._threads = _threads(threads)
        self._mesh = str(mesh)
        self._config = AttrDict(config or {})

    @classmethod
    def from_pretrained(cls, folder, subfolder=None, precision='fp32', threads=None, mesh='auto',
                        parts='both', torch_dtype=None, allow_unknown_config=False):
        """folder: the component folder (config.json + diffusion_pytorch_model.safetensors), or
        the pipeline folder with subfolder='audio_vae'. No downloads. precision: 'fp32' | 'bf16'
        (or diffusers' torch_dtype=torch.float32 / torch.bfloat16); parts: 'both', 'decoder' or
        'encoder' (half the weights in memory; the other call then raises);
        allow_unknown_config: accept config fields meshnn does not know. Any other keyword raises
        TypeError."""
        load = _meshnn.MiniMaxH3AudioVae.load
        extra = _unknown_config_option(load, allow_unknown_config,
                                       'MiniMaxH3AudioVAE.from_pretrained')
        precision = _precision(precision, torch_dtype)
        folder = os.fspath(folder)
        if subfolder:
            folder = os.path.join(folder, os.fspath(subfolder))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f'{folder}: no such folder (meshnn does not download)')
        core = load(folder, precision, parts, **extra)
        # The core has read and checked config.json; `config` shows it as diffusers' does.
        with open(os.path.join(folder, 'config.json'), encoding='utf-8') as f:
            config = json.load(f)
        return cls(core, threads=threads, mesh=mesh, config=config)

    @property
    def config(self):
        """The folder's config.json as a dict with attribute access (diffusers' vae.config)."""
        return self._config

    @property
    def sampling_rate(self):
        return self._live().sample_rate

    @property
    def hop_length(self):
        return self._live().hop_length

    @property
    def latent_channels(self):
        return self._live().latent_channels

    @property
    def latents_mean(self):
        return list(self._live().latents_mean)

    @property
    def latents_std(self):
        return list(self._live().latents_std)

    def decode(self, z, return_dict=True, *, as_torch=None):
        """z: (B, C, T) float32 denormalised latents → .sample (B, 1, hop·T) in [-1, 1].
        Torch in → torch out unless as_torch says otherwise."""
        as_torch = wants_torch(z, as_torch)
        y = out(self._live().decode(as_array(z, 'latents'), threads=self._threads,
                                    mesh=self._mesh), as_torch)
        return _Output(sample=y) if return_dict else (y,)

    def encode(self, x, return_dict=True, *, as_torch=None):
        """x: (B, 1, L) float32 at 32 kHz → .latent_dist with mode() / mean / log_std / std /
        sample(generator), each (B, C, ceil(L / hop)); zero right-pad to whole hops, never a
        crop. Torch in → torch out unless as_torch says otherwise."""
        as_torch = wants_torch(x, as_torch)
        mean, logs = self._live().encode(as_array(x, 'wave'), threads=self._threads,
                                         mesh=self._mesh)
        dist = MiniMaxH3Posterior(mean, logs, as_torch)
        return _Output(latent_dist=dist) if return_dict else (dist,)

    def forward(self, sample, sample_posterior=False, return_dict=True, generator=None, *,
                as_torch=None):
        """diffusers' AutoencoderKL.forward: encode, take the posterior's mode (or a draw with
        generator when sample_posterior), decode → .sample (B, 1, hop·⌈L / hop⌉)."""
        if not isinstance(sample_posterior, bool):
            raise ValueError(f'sample_posterior must be True or False, got {sample_posterior!r}')
        as_torch = wants_torch(sample, as_torch)
        dist = self.encode(sample, as_torch=False).latent_dist
        z = dist.sample(generator) if sample_posterior else dist.mode()
        return self.decode(z, return_dict, as_torch=as_torch)

    __call__ = forward

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
        a = as_array(z, 'latents')
        if a.dtype != np.float32 or a.ndim != 3 or a.shape[1] != c:
            raise ValueError(f'latents: expected (B, {c}, T) float32, got {a.dtype} '
                             f'{tuple(a.shape)}')
        if not np.isfinite(a).all():
            raise ValueError('latents: non-finite value (NaN or inf) in the input')
        return a, m, s

    @staticmethod
    def _finite(y, a, what):
        # Finite inputs can still overflow float32 here (|z| near 3e38): say so, never pass inf on.
        if not np.isfinite(y).all():
            raise ValueError(f'latents: {what} overflows float32 (largest |value| in the input: '
                             f'{float(np.max(np.abs(a))):.3g}); no latent is that large')
        return y

    def normalize(self, z, *, as_torch=None):
        """(z − latents_mean) / latents_std per channel (encode output → DiT latents)."""
        a, m, s = self._stats(z)
        with np.errstate(over='ignore', invalid='ignore'):
            y = ((a - m) / s).astype(np.float32)
        return out(self._finite(y, a, 'normalize'), wants_torch(z, as_torch))

    def denormalize(self, z, *, as_torch=None):
        """z · latents_std + latents_mean per channel (DiT latents → decode input)."""
        a, m, s = self._stats(z)
        with np.errstate(over='ignore', invalid='ignore'):
            y = (a * s + m).astype(np.float32)
        return out(self._finite(y, a, 'denormalize'), wants_torch(z, as_torch))

    def eval(self):
        return self

    def to(self, *args, device=None, dtype=None, non_blocking=False, memory_format=None):
        """Drop-in Module.to: the CPU and float32 return self; another device or dtype raises."""
        return _to_cpu_float32(self, args, device, dtype)

    def __repr__(self):
        if self.closed:
            return 'meshnn.MiniMaxH3AudioVAE(closed)'
        return (f'meshnn.MiniMaxH3AudioVAE(sampling_rate={self.sampling_rate}, '
                f'hop_length={self.hop_length})')
