#!/usr/bin/python3
"""Seeded random checkpoints at the real architectures, with the real key names.

  make_checkpoint.py ltx23 OUT.safetensors [--seed S] [--small] [--f32] [--no-inverse-basis]
  make_checkpoint.py ltx2  OUT.safetensors [--seed S] [--small] [--f32]
  make_checkpoint.py bigvgan OUT_DIR --config bigvgan_v2_24khz_100band_256x [--seed S] [--small] [--fold] [--pt]
  make_checkpoint.py h3 OUT_DIR [--seed S] [--small | --tiny] [--dtype f32|bf16|fp16] [--fold]
  make_checkpoint.py list

LTX: one safetensors file with ltx-core's key names (audio_vae.decoder.*, audio_vae.per_channel_statistics.*,
vocoder.vocoder.* / vocoder.bwe_generator.* / vocoder.mel_stft.* for LTX-2.3, vocoder.* for LTX-2) and the
checkpoint config JSON in the header metadata under "config"; tensors in bf16 like the published files
(--f32 to store f32). The audio_vae.encoder.* tensors are not written (decode does not use them).
BigVGAN: OUT_DIR/bigvgan_generator.safetensors (NVIDIA keys, weight_g/weight_v unless --fold, f32, the
config JSON also in the metadata) + OUT_DIR/config.json; --pt also writes bigvgan_generator.pt
({"generator": state_dict}, like NVIDIA's release).

MiniMax-H3 audio VAE: a diffusers component folder, OUT_DIR/config.json (`_class_name`
AutoencoderKLMiniMaxH3Audio, indent 2, sorted keys) + OUT_DIR/diffusion_pytorch_model.safetensors (diffusers
keys, weight_g/weight_v unless --fold, f32 unless --dtype; metadata {"format": "pt"}); the released config, or
--small (released rates, thin widths) / --tiny (hop 40, the fixture structure); tools/minimax_h3.

Unless --no-check, runs a short forward and prints per-stage statistics (fails on NaN/inf or an
output that is mostly clipped).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ltx_audio import bigvgan as BV, configs as C, io as lio, randinit as R, stats  # noqa: E402
from minimax_h3 import model as H3, randinit as H3R  # noqa: E402


def ltx_state_for_file(model, bf16=True, inverse_basis=True):
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if not inverse_basis:
        sd = {k: v for k, v in sd.items() if not k.endswith('stft_fn.inverse_basis')}
    return {k: (v.to(torch.bfloat16) if bf16 else v.float()) for k, v in sd.items()}


def check_ltx(model, frames, seed, printer=print):
    g = torch.Generator().manual_seed(seed + 1000)
    lat = torch.randn(1, 8, frames, 16, generator=g)
    tr = {}
    with torch.no_grad():
        y = model(lat, tr)
    m = 4 * frames - 3
    exp = m * (480 if model.has_bwe else 240)
    printer(f'latent T={frames} → mel frames {tr["stage_a.out"].shape[2]} (4T−3 = {m}), output {tuple(y.shape)} '
            f'(expected {exp} samples at {model.output_sampling_rate} Hz)')
    assert tr['stage_a.out'].shape[2] == m and y.shape[-1] == exp
    return stats.check_trace(tr, printer=printer)


def check_bigvgan(model, h, frames, seed, printer=print):
    g = torch.Generator().manual_seed(seed + 1000)
    wav = torch.randn(1, frames * h['hop_size'], generator=g) * 0.1
    mel = BV.mel_from_config(wav, h)
    tr = {'input.mel': mel}
    with torch.no_grad():
        y = model(mel, tr)
    tr['output'] = y
    return stats.check_trace(tr, printer=printer)


def check_h3(model, frames, seed, printer=print):
    g = torch.Generator().manual_seed(seed + 1000)
    C_lat, hop = model.cfg['latent_channels'], model.hop
    z = torch.randn(2, C_lat, frames, generator=g)
    wav = torch.randn(2, 1, frames * hop - hop // 3, generator=g) * 0.1
    tr = {'input.latents': z}
    with torch.no_grad():
        y = model.decode(z, tr)
        mean, logs = model.encode(wav, tr)
    tr['output'] = y
    assert y.shape == (2, 1, frames * hop) and mean.shape == (2, C_lat, frames) and logs.shape == mean.shape
    tr['encode.mean'] = mean
    tr['encode.logs'] = logs
    printer(f'decode {tuple(z.shape)} → {tuple(y.shape)}; encode {tuple(wav.shape)} → {tuple(mean.shape)}')
    return stats.check_trace(tr, printer=printer)


H3_DTYPES = {'f32': torch.float32, 'bf16': torch.bfloat16, 'fp16': torch.float16}


def make_h3(a):
    if a.small and a.tiny:
        raise SystemExit('--small and --tiny exclude each other')
    cfg = H3.reduced_config('small') if a.small else H3.reduced_config('tiny') if a.tiny else H3.RELEASED_CONFIG
    model = H3R.random_h3(cfg, a.seed)
    if a.fold:
        model.fold_weight_norm()
    dt = H3_DTYPES[a.dtype]
    sd = {k: v.detach().clone().to(dt) for k, v in model.state_dict().items()}
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, 'diffusion_pytorch_model.safetensors')
    lio.save_safetensors(path, sd, {'format': 'pt', 'meshnn_random_seed': str(a.seed)})
    with open(os.path.join(a.out, 'config.json'), 'w') as f:
        json.dump(dict(cfg, _diffusers_version='0.36.0.dev0'), f, indent=2, sort_keys=True)
    print(f'wrote {path} + config.json: {len(sd)} tensors, {sum(v.numel() for v in sd.values()) / 1e6:.2f} M values, '
          f'{a.dtype}')
    if a.no_check:
        return 0
    if dt != torch.float32:  # check what the file holds
        model.load_state_dict({k: v.float() for k, v in sd.items()})
    return 0 if check_h3(model, a.check_frames or 3, a.seed) else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model', choices=['ltx23', 'ltx2', 'bigvgan', 'h3', 'list'])
    ap.add_argument('out', nargs='?')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--small', action='store_true', help='reduced-width variant (same structure) for fixtures')
    ap.add_argument('--f32', action='store_true', help='LTX: store f32 instead of bf16')
    ap.add_argument('--no-inverse-basis', action='store_true', help='LTX-2.3: omit the unused stft_fn.inverse_basis')
    ap.add_argument('--config', help='BigVGAN released config name (see `list`)')
    ap.add_argument('--fold', action='store_true', help='BigVGAN / H3: write folded `weight` instead of weight_g/weight_v')
    ap.add_argument('--pt', action='store_true', help='BigVGAN: also write bigvgan_generator.pt')
    ap.add_argument('--tiny', action='store_true', help='H3: the hop-40 fixture structure')
    ap.add_argument('--dtype', choices=sorted(H3_DTYPES), default='f32', help='H3: tensor dtype in the file')
    ap.add_argument('--no-check', action='store_true')
    ap.add_argument('--check-frames', type=int, default=None)
    ap.add_argument('--threads', type=int, default=2)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    if a.model == 'list':
        print('\n'.join(C.BIGVGAN_CONFIGS))
        return 0
    if not a.out:
        ap.error('output path required')
    if a.model == 'h3':
        return make_h3(a)
    if a.model in ('ltx23', 'ltx2'):
        cfg = C.ltx23_config(a.small) if a.model == 'ltx23' else C.ltx2_config(a.small)
        model = R.random_ltx(cfg, a.seed, bf16=True)
        sd = ltx_state_for_file(model, bf16=not a.f32, inverse_basis=not a.no_inverse_basis)
        lio.save_safetensors(a.out, sd, {'config': json.dumps(cfg, sort_keys=True), 'format': 'pt',
                                         'meshnn_random_seed': str(a.seed)})
        n = sum(v.numel() for v in sd.values())
        print(f'wrote {a.out}: {len(sd)} tensors, {n / 1e6:.2f} M values, seed {a.seed}')
        ok = True
        if not a.no_check:
            ok = check_ltx(model, a.check_frames or (6 if a.small else 3), a.seed)
        return 0 if ok else 1
    if not a.config or a.config not in C.BIGVGAN_CONFIGS:
        ap.error(f'--config must be one of: {", ".join(C.BIGVGAN_CONFIGS)}')
    h = C.bigvgan_config(a.config, a.small)
    model = R.random_bigvgan(h, a.seed)
    os.makedirs(a.out, exist_ok=True)
    if a.fold:
        model.remove_weight_norm()
    sd = {k: v.detach().clone().float() for k, v in model.state_dict().items()}
    path = os.path.join(a.out, 'bigvgan_generator.safetensors')
    lio.save_safetensors(path, sd, {'config': json.dumps(h, sort_keys=True), 'meshnn_random_seed': str(a.seed)})
    with open(os.path.join(a.out, 'config.json'), 'w') as f:
        json.dump(h, f, indent=2, sort_keys=True)
    if a.pt:
        torch.save({'generator': sd}, os.path.join(a.out, 'bigvgan_generator.pt'))
    print(f'wrote {path} + config.json: {len(sd)} tensors, {sum(v.numel() for v in sd.values()) / 1e6:.2f} M values')
    ok = True
    if not a.no_check:
        ok = check_bigvgan(model, h, a.check_frames or 8, a.seed)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
