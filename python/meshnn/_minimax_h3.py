"""meshnn.MiniMaxH3AudioVAE: the MiniMax-H3 audio VAE with the calls of diffusers'
AutoencoderKL family (from_pretrained, config, decode(z).sample, encode(x).latent_dist with
sample(generator=...), forward(sample, sample_posterior, return_dict, generator)), plus exact
streams; a facade over meshnn.AudioModel (the registry's "minimax-h3-audio-vae"). Torch in →
torch out, numpy in → numpy out, as every call of the package.
"""
import os

import numpy as np

from ._audio import AudioModel
from ._common import _Closable, _threads, _to_cpu_float32, bool_arg
from ._convert import is_torch, out, wants_torch
from ._kwargs import strict_class
from ._streams import AudioEncodeStream

_MODEL = 'minimax-h3-audio-vae'  # its name in AudioModel.registered()


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
class MiniMaxH3EncodeStream(AudioEncodeStream):
    """An exact streaming encoder: push(wave (B, 1, n)) → the posterior of the frames that became
    final, flush() → the rest (the last partial hop zero-padded, as encode()); reset() drops the
    current input. Each returns (mean, log_std), each (B, C, m); torch in → torch out, flush()
    as the last push. The pushes and the flush concatenated along time equal encode() of the
    whole wave to f32 rounding (meshnn.AudioEncodeStream under this name)."""


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

    def __init__(self, model):
        self._core = model  # a meshnn.AudioModel holding the VAE

    @classmethod
    def from_pretrained(cls, folder, subfolder=None, precision='fp32', threads=None, mesh='auto',
                        parts='both', torch_dtype=None, allow_unknown_config=False):
        """folder: the component folder (config.json + diffusion_pytorch_model.safetensors), or
        the pipeline folder with subfolder='audio_vae'. No downloads. precision: 'fp32' | 'bf16'
        (or diffusers' torch_dtype=torch.float32 / torch.bfloat16); parts: 'both', 'decoder' or
        'encoder' (half the weights in memory; the other call then raises);
        allow_unknown_config: accept config fields meshnn does not know. Any other keyword raises
        TypeError."""
        bool_arg('MiniMaxH3AudioVAE.from_pretrained: allow_unknown_config', allow_unknown_config)
        if parts not in ('both', 'decoder', 'encoder'):
            raise ValueError(f"parts: expected 'both', 'decoder' or 'encoder', got '{parts}'")
        precision = _precision(precision, torch_dtype)
        folder = os.fspath(folder)
        if subfolder:
            folder = os.path.join(folder, os.fspath(subfolder))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f'{folder}: no such folder (meshnn does not download)')
        return cls(AudioModel.load(folder, precision=precision, threads=threads, mesh=mesh,
                                   allow_unknown_config=allow_unknown_config,
                                   encoder_only=parts == 'encoder',
                                   decoder_only=parts == 'decoder', model=_MODEL))

    @property
    def audio_model(self):
        """The meshnn.AudioModel this class is a facade over."""
        return self._live()

    @property
    def config(self):
        """The folder's config.json as a dict with attribute access (diffusers' vae.config)."""
        return self._live().config

    @property
    def sampling_rate(self):
        return self._live().sample_rate

    @property
    def hop_length(self):
        return self._live().output_samples(1)

    @property
    def latent_channels(self):
        return self._live().input_spec['shape'][1]

    @property
    def latents_mean(self):
        return self._live().latents_mean

    @property
    def latents_std(self):
        return self._live().latents_std

    def decode(self, z, return_dict=True, *, as_torch=None):
        """z: (B, C, T) float32 denormalised latents → .sample (B, 1, hop·T) in [-1, 1].
        Torch in → torch out unless as_torch says otherwise."""
        y = self._live()(z, as_torch=as_torch)
        return _Output(sample=y) if return_dict else (y,)

    def encode(self, x, return_dict=True, *, as_torch=None):
        """x: (B, 1, L) float32 at 32 kHz → .latent_dist with mode() / mean / log_std / std /
        sample(generator), each (B, C, ceil(L / hop)); zero right-pad to whole hops, never a
        crop. Torch in → torch out unless as_torch says otherwise."""
        as_torch = wants_torch(x, as_torch)
        mean, logs = self._live().encode(x, as_torch=False, log_std=True)
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
        return self._live().stream(mesh=mesh, threads=_threads(threads))

    def encode_stream(self, mesh='1x1', threads=None):
        """An exact streaming encoder (MiniMaxH3EncodeStream): push(wave (B, 1, n)) → (mean,
        log_std) of the frames that became final."""
        s = self._live().encode_stream(mesh=mesh, threads=_threads(threads))
        return MiniMaxH3EncodeStream(s._core)

    def normalize(self, z, *, as_torch=None):
        """(z − latents_mean) / latents_std per channel (encode output → DiT latents)."""
        return self._live().normalize_latents(z, as_torch=as_torch)

    def denormalize(self, z, *, as_torch=None):
        """z · latents_std + latents_mean per channel (DiT latents → decode input)."""
        return self._live().denormalize_latents(z, as_torch=as_torch)

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
