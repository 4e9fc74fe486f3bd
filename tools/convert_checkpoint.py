#!/usr/bin/python3
"""Convert a PyTorch state dict (.pt / .ckpt / .bin / .safetensors) into meshnn's safetensors layout.

  convert_checkpoint.py IN OUT.safetensors [--kind auto|ltx|bigvgan] [--config config.json]
                        [--fold-weight-norm] [--dtype keep|f32|bf16] [--drop-encoder] [--allow-unknown]

Kinds and key rules (ltx2_audio_decode.md §8, bigvgan.md §6, §9):
* ltx: keys kept as ltx-core writes them: audio_vae.decoder.*, audio_vae.per_channel_statistics.*,
  audio_vae.encoder.* (kept unless --drop-encoder), vocoder.vocoder.* / vocoder.bwe_generator.* /
  vocoder.mel_stft.* (LTX-2.3) or vocoder.* (LTX-2). Prefix rules applied on input:
    - a leading "model." / "module." / "state_dict." wrapper is stripped;
    - ComfyUI-style "first_stage_model." is not recognised (error);
    - whole-model checkpoints: keys outside audio_vae.* / vocoder.* (e.g. model.diffusion_model.*) are
      dropped with a count, not an error;
    - diffusers vocoder names are mapped back (conv_in→conv_pre, conv_out→conv_post, act_out→act_post,
      upsamplers→ups, resnets→resblocks, downsample.filter→downsample.lowpass.filter) and diffusers
      audio-VAE statistics latents_std / latents_mean → per_channel_statistics.std-of-means / mean-of-means.
  The config JSON is taken from the input safetensors metadata ("config") or --config; it is required.
* bigvgan: NVIDIA generator keys (conv_pre, ups.{i}.0, resblocks.{r}.convs{1,2}.{j},
  resblocks.{r}.activations.{m}, activation_post, conv_post); a {"generator": …} wrapper is unwrapped;
  parametrizations.weight.original0/1 become weight_g/weight_v; --fold-weight-norm replaces each
  (weight_g, weight_v) pair by weight = g·v/‖v‖ (norm over all dims except 0, also for ConvTranspose1d).
  The config (config.json next to the input, or --config) goes into the metadata.

Any key that no rule recognises is an error listing the keys (unless --allow-unknown).
"""
import argparse
import json
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ltx_audio import io as lio  # noqa: E402
from ltx_audio.bigvgan import normalize_weight_norm_keys  # noqa: E402

_GEN = (r'(conv_pre\.(weight|bias)|ups\.\d+\.(weight|bias)|'
        r'resblocks\.\d+\.convs[12]\.\d+\.(weight|bias)|'
        r'resblocks\.\d+\.acts[12]\.\d+\.(act\.(alpha|beta)|upsample\.filter|downsample\.lowpass\.filter)|'
        r'act_post\.(act\.(alpha|beta)|upsample\.filter|downsample\.lowpass\.filter)|conv_post\.(weight|bias))')
_LTX_PATTERNS = [
    re.compile(r'^audio_vae\.decoder\.(conv_in|conv_out|mid\.block_[12]\.(conv[12]|nin_shortcut)|'
               r'up\.\d+\.block\.\d+\.(conv[12]|nin_shortcut)|up\.\d+\.upsample\.conv)\.conv\.(weight|bias)$'),
    re.compile(r'^audio_vae\.per_channel_statistics\.(std-of-means|mean-of-means)$'),
    re.compile(r'^audio_vae\.encoder\..+$'),
    re.compile(r'^vocoder\.(vocoder|bwe_generator)\.' + _GEN + r'$'),
    re.compile(r'^vocoder\.mel_stft\.(mel_basis|stft_fn\.(forward|inverse)_basis)$'),
    re.compile(r'^vocoder\.' + _GEN + r'$'),  # LTX-2 (19B) flat vocoder
]
_WN = r'(weight|weight_g|weight_v|bias)'
_BIGVGAN_PATTERNS = [re.compile(p) for p in (
    r'^conv_pre\.' + _WN + '$', r'^ups\.\d+\.0\.' + _WN + '$',
    r'^resblocks\.\d+\.convs?[12]?\.\d+\.' + _WN + '$',
    r'^resblocks\.\d+\.activations\.\d+\.(act\.(alpha|beta)|upsample\.filter|downsample\.lowpass\.filter)$',
    r'^activation_post\.(act\.(alpha|beta)|upsample\.filter|downsample\.lowpass\.filter)$',
    r'^conv_post\.' + _WN + '$')]

_DIFFUSERS_VOC = [(r'\.conv_in\.', '.conv_pre.'), (r'\.conv_out\.', '.conv_post.'), (r'\.act_out\.', '.act_post.'),
                  (r'\.upsamplers\.', '.ups.'), (r'\.resnets\.', '.resblocks.'),
                  (r'\.downsample\.filter$', '.downsample.lowpass.filter')]


class ConvertError(Exception):
    pass


def load_any(path):
    """→ (state dict of tensors, metadata dict)."""
    if not os.path.exists(path):
        raise ConvertError(f'{path}: no such file')
    if path.endswith('.safetensors'):
        return lio.load_safetensors(path)
    try:
        obj = torch.load(path, map_location='cpu')
    except Exception as e:  # noqa: BLE001
        raise ConvertError(f'{path}: not a readable PyTorch checkpoint ({e})') from e
    for wrapper in ('generator', 'state_dict', 'model', 'module'):
        if isinstance(obj, dict) and wrapper in obj and isinstance(obj[wrapper], dict):
            obj = obj[wrapper]
            break
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        bad = [k for k, v in obj.items() if not isinstance(v, torch.Tensor)][:5] if isinstance(obj, dict) else [type(obj).__name__]
        raise ConvertError(f'{path}: expected a state dict of tensors (optionally under "generator"/"state_dict"), '
                           f'found non-tensor entries {bad}')
    return obj, {}


def strip_wrappers(sd):
    out = {}
    for k, v in sd.items():
        for p in ('module.', 'state_dict.'):
            if k.startswith(p):
                k = k[len(p):]
        if k.startswith('model.') and (k[6:].startswith('audio_vae.') or k[6:].startswith('vocoder.')):
            k = k[6:]
        out[k] = v
    return out


def guess_kind(sd):
    if any(k.startswith(('audio_vae.', 'vocoder.')) for k in sd):
        return 'ltx'
    if any(k.startswith(('conv_pre.', 'ups.')) for k in sd):
        return 'bigvgan'
    raise ConvertError('cannot tell the checkpoint kind from its keys (first keys: %s); pass --kind' % list(sd)[:5])


def ltx_rename(sd):
    out, dropped = {}, 0
    for k, v in sd.items():
        if k.startswith('vocoder.'):
            for a, b in _DIFFUSERS_VOC:
                k = re.sub(a, b, k)
        k = {'audio_vae.latents_std': 'audio_vae.per_channel_statistics.std-of-means',
             'audio_vae.latents_mean': 'audio_vae.per_channel_statistics.mean-of-means'}.get(k, k)
        if not k.startswith(('audio_vae.', 'vocoder.')):
            dropped += 1
            continue
        out[k] = v
    return out, dropped


def fold_weight_norm(sd):
    out = dict(sd)
    for k in [k for k in sd if k.endswith('.weight_g')]:
        stem = k[:-len('.weight_g')]
        if stem + '.weight_v' not in sd:
            raise ConvertError(f'{k} has no matching {stem}.weight_v')
        g, v = sd[k].double(), sd[stem + '.weight_v'].double()
        if g.shape != (v.shape[0],) + (1,) * (v.dim() - 1):
            raise ConvertError(f'{k}: shape {tuple(g.shape)} does not match weight_v {tuple(v.shape)} (dim 0 norm)')
        nrm = v.pow(2).sum(dim=tuple(range(1, v.dim())), keepdim=True).sqrt()
        out[stem + '.weight'] = (g * v / nrm).to(sd[stem + '.weight_v'].dtype)
        del out[k], out[stem + '.weight_v']
    return out


def check_keys(sd, patterns, kind, allow_unknown):
    unknown = [k for k in sd if not any(p.match(k) for p in patterns)]
    if unknown and not allow_unknown:
        raise ConvertError(f'{len(unknown)} unrecognised {kind} key(s): ' + ', '.join(unknown[:20])
                           + (' …' if len(unknown) > 20 else '') + ' (use --kind or --allow-unknown)')
    return unknown


def convert(inp, out, kind='auto', config=None, fold=False, dtype='keep', drop_encoder=False, allow_unknown=False):
    sd, meta = load_any(inp)
    sd = normalize_weight_norm_keys(strip_wrappers(sd))
    kind = guess_kind(sd) if kind == 'auto' else kind
    cfg = None
    if config:
        with open(config) as f:
            cfg = json.load(f)
    elif 'config' in meta:
        cfg = json.loads(meta['config'])
    if kind == 'ltx':
        sd, dropped = ltx_rename(sd)
        if dropped:
            print(f'note: dropped {dropped} non-audio tensors (not under audio_vae. / vocoder.)', file=sys.stderr)
        if drop_encoder:
            sd = {k: v for k, v in sd.items() if not k.startswith('audio_vae.encoder.')}
        if fold:
            sd = fold_weight_norm(sd)
        check_keys(sd, _LTX_PATTERNS, 'LTX audio', allow_unknown)
        if cfg is None:
            raise ConvertError(f'{inp}: no "config" metadata; pass --config with the checkpoint config JSON')
        if 'vocoder' not in cfg or 'audio_vae' not in cfg:
            raise ConvertError('config must contain "audio_vae" and "vocoder" sections')
    elif kind == 'bigvgan':
        if fold:
            sd = fold_weight_norm(sd)
        check_keys(sd, _BIGVGAN_PATTERNS, 'BigVGAN', allow_unknown)
        if cfg is None:
            cj = os.path.join(os.path.dirname(os.path.abspath(inp)), 'config.json')
            if os.path.exists(cj):
                with open(cj) as f:
                    cfg = json.load(f)
        if cfg is None:
            raise ConvertError(f'{inp}: no config.json beside it; pass --config')
    else:
        raise ConvertError(f'unknown kind {kind!r}')
    if not sd:
        raise ConvertError(f'{inp}: no tensors left after conversion')
    if dtype == 'f32':
        sd = {k: v.float() for k, v in sd.items()}
    elif dtype == 'bf16':
        sd = {k: v.to(torch.bfloat16) for k, v in sd.items()}
    for k, v in sd.items():
        if v.dtype not in (torch.float32, torch.bfloat16, torch.float16, torch.float64):
            raise ConvertError(f'{k}: unsupported dtype {v.dtype}')
        if v.dtype == torch.float64:
            sd[k] = v.float()
    lio.save_safetensors(out, sd, {'config': json.dumps(cfg, sort_keys=True), 'format': 'pt',
                                   'converted_from': os.path.basename(inp), 'kind': kind})
    return len(sd)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('input')
    ap.add_argument('output')
    ap.add_argument('--kind', choices=['auto', 'ltx', 'bigvgan'], default='auto')
    ap.add_argument('--config')
    ap.add_argument('--fold-weight-norm', action='store_true')
    ap.add_argument('--dtype', choices=['keep', 'f32', 'bf16'], default='keep')
    ap.add_argument('--drop-encoder', action='store_true')
    ap.add_argument('--allow-unknown', action='store_true')
    a = ap.parse_args(argv)
    try:
        n = convert(a.input, a.output, a.kind, a.config, a.fold_weight_norm, a.dtype, a.drop_encoder, a.allow_unknown)
    except (ConvertError, OSError, json.JSONDecodeError) as e:
        print(f'convert_checkpoint: error: {e}', file=sys.stderr)
        return 2
    print(f'wrote {a.output}: {n} tensors')
    return 0


if __name__ == '__main__':
    sys.exit(main())
