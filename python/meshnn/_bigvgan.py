"""meshnn.BigVGAN: NVIDIA's bigvgan.BigVGAN calls (from_pretrained on a local folder,
forward(mel) → (B, 1, samples), .h, remove_weight_norm / eval for drop-in code), a facade over
meshnn.AudioModel (the registry's "nvidia-bigvgan").
"""
import os

import numpy as np

from ._audio import AudioModel
from ._common import _Closable, _threads, _to_cpu_float32, bool_arg
from ._convert import as_array, out, wants_torch
from ._kwargs import strict, strict_class

_CONVERTER = 'tools/convert_checkpoint.py'
_MODEL = 'nvidia-bigvgan'  # its name in AudioModel.registered()


def _checkpoint_in(path):
    """path as BigVGAN.from_pretrained takes it → the weights file to load (a folder's generator
    file, else path itself); FileNotFoundError saying what to fetch or convert."""
    if not os.path.exists(path):
        raise FileNotFoundError(
            f'{path}: no such file or folder (meshnn does not download; fetch the model folder '
            f'first, e.g. huggingface-cli download <repo> --local-dir <dir>)')
    if not os.path.isdir(path):
        return path
    candidates = [os.path.join(path, n) for n in
                  ('bigvgan_generator.safetensors', 'model.safetensors', 'bigvgan_generator.pt')]
    found = [c for c in candidates if os.path.isfile(c)]
    if not found:
        raise FileNotFoundError(
            f'{path}: no bigvgan_generator.pt or bigvgan_generator.safetensors (NVIDIA '
            f'publishes config.json + bigvgan_generator.pt; another checkpoint converts with '
            f'{_CONVERTER} IN OUT.safetensors --kind bigvgan)')
    return found[0]


@strict_class
class BigVGAN(_Closable):
    """NVIDIA BigVGAN vocoder on meshnn. Build with BigVGAN.from_pretrained(path)."""

    def __init__(self, model):
        self._core = model  # a meshnn.AudioModel holding the vocoder
        self.h = model.config

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
        bool_arg('BigVGAN.from_pretrained: allow_unknown_config', allow_unknown_config)
        bool_arg('use_cuda_kernel', use_cuda_kernel)
        # Safetensors and NVIDIA's torch.save .pt alike: the library's one reader (the .pt through
        # its weights-only unpickler; no torch needed, nothing in the file is ever executed). The
        # config as every entry point finds it (the BigVGAN registry entry's load).
        ckpt = _checkpoint_in(os.fspath(path))
        return cls(AudioModel.load(ckpt, precision=precision, config=config, threads=threads,
                                   allow_unknown_config=allow_unknown_config, mesh=mesh,
                                   backend=backend, model=_MODEL))

    @property
    def audio_model(self):
        """The meshnn.AudioModel this class is a facade over."""
        return self._live()

    @property
    def config(self):
        """The config as parsed (the same dict as `h`)."""
        return self.h

    @property
    def sample_rate(self):
        return self._live().sample_rate

    @property
    def num_mels(self):
        return self._live().input_spec['shape'][1]

    @property
    def hop_length(self):
        return self._live().output_samples(1)

    def __call__(self, mel, *, as_torch=None, progress=None, mesh=None, threads=None):
        """mel: (B, num_mels, frames) float32 → (B, 1, frames · hop_length) float32 in [-1, 1].
        Torch in → torch out unless as_torch says otherwise."""
        return self._live()(mel, as_torch=as_torch, progress=progress, mesh=mesh or None,
                            threads=threads)

    forward = __call__

    def mel_spectrogram(self, wav, *, as_torch=None):
        """wav: (T,) or (B, T) float32 at sample_rate → log-mel (B, num_mels, T // hop_length),
        as NVIDIA's meldataset.get_mel_spectrogram (B = 1 for a 1-D input)."""
        as_torch = wants_torch(wav, as_torch)
        a = as_array(wav, 'wav')
        model = self._live()
        if a.ndim == 1:
            y = model.input_from_wave(a, as_torch=False)
        elif a.ndim == 2:
            y = np.concatenate([model.input_from_wave(r, as_torch=False) for r in a])
        else:
            raise ValueError(f'wav: expected (T,) or (B, T), got shape {tuple(a.shape)}')
        return out(y, as_torch)

    def stream(self, mesh='1x1', threads=None):
        """An exact streaming vocoder over these weights: push(mel (B, num_mels, n)) → the
        samples (B, 1, m) that became final, flush() → the rest (docs/streaming.md)."""
        return self._live().stream(mesh=mesh, threads=_threads(threads))

    # Drop-in no-ops: meshnn folds weight norm at load and has no training mode.
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


@strict
def mel_spectrogram(vocoder, wav, *, as_torch=None):
    """BigVGAN's mel front end of `vocoder` on wav (see BigVGAN.mel_spectrogram)."""
    return vocoder.mel_spectrogram(wav, as_torch=as_torch)
