#!/usr/bin/python3
"""Golden fixtures for the MiniMax-H3 audio VAE (tools/minimax_h3), the 'tiny' reduced config (hop 40:
encoder strides 2 / 4 / 5, upsamplers (9, 5), (4, 2) ×3, 2 heads of 16 pooled to 8 latent channels), seeded
random weights.

Usage: gen_minimax_h3.py OUT_DIR. Writes:
  minimax_h3_tiny/config.json                              the diffusers config (_class_name
  minimax_h3_tiny/diffusion_pytorch_model.safetensors      AutoencoderKLMiniMaxH3Audio); weights BF16 (values
                                                           exactly bf16), weight_g/weight_v unfolded, the kaiser
                                                           filters and zero_k_bias F32
  minimax_h3_tiny_io.safetensors                           inputs and outputs, F32:
    decode.latents (2, 8, 12) → decode.output (2, 1, 480) (+ decode.<stage> traces);
    decode.loud_output: the same latents with conv_post.weight_g × loud.scale (mostly clamped at ±1);
    encode.wave (2, 1, 413), not a whole number of hops → encode.mean, encode.logs (2, 8, 11),
    encode.trunk (2, 32, 11) (the encoder output before pre_block);
    attn.input (2, 9, 32) → attn.output (2, 9, 8): pre_block alone on (B, T, latent_dim) rows.
"""
import os

for _v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
    os.environ[_v] = '1'

import json  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
sys.path.insert(0, HERE)
import st  # noqa: E402
from ltx_audio import randinit as R  # noqa: E402
from minimax_h3 import model as M, randinit as HR  # noqa: E402

SEED = 20261202
LOUD = 40.0


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: gen_minimax_h3.py OUT_DIR')
    out_dir = sys.argv[1]
    torch.set_num_threads(1)
    cfg = M.reduced_config('tiny')
    model = HR.random_h3(cfg, SEED)
    R.round_to_bf16_(model, params_only=True)  # the file holds bf16: make the model equal to it
    g = torch.Generator().manual_seed(SEED + 1)
    t = {}
    z = torch.randn(2, cfg['latent_channels'], 12, generator=g)
    wave = torch.randn(2, 1, 10 * model.hop + 13, generator=g) * 0.2
    h = torch.randn(2, 9, cfg['latent_dim'], generator=g)
    with torch.no_grad():
        tr = {}
        t['decode.output'] = model.decode(z, tr)
        for k, v in tr.items():
            t['decode.' + k] = v
        tr = {}
        mean, logs = model.encode(wave, tr)
        t['encode.trunk'] = tr[f'encoder.block.{len(model.encoder.block) - 1}']
        t['attn.output'] = model.pre_block(h)
        sd = {k: v.clone() for k, v in model.state_dict().items()}
        model.decoder.conv_post.weight_g.mul_(LOUD)
        t['decode.loud_output'] = model.decode(z)
        model.load_state_dict(sd)
    t.update({'decode.latents': z, 'encode.wave': wave, 'encode.mean': mean, 'encode.logs': logs,
              'attn.input': h, 'loud.scale': torch.tensor([LOUD])})
    t = {k: v.contiguous().float() for k, v in t.items()}
    for k, v in t.items():
        assert torch.isfinite(v).all(), k
    assert t['decode.output'].abs().max() < 1 and (t['decode.loud_output'].abs() == 1).float().mean() > 0.2
    folder = os.path.join(out_dir, 'minimax_h3_tiny')
    os.makedirs(folder, exist_ok=True)
    w = {k: (v.float() if k.endswith('.filter') or k.endswith('zero_k_bias') else v.to(torch.bfloat16))
         for k, v in sd.items()}
    st.save(os.path.join(folder, 'diffusion_pytorch_model.safetensors'), w, {'format': 'pt'})
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(dict(cfg, _diffusers_version='0.36.0.dev0'), f, indent=2, sort_keys=True)
        f.write('\n')
    st.save(os.path.join(out_dir, 'minimax_h3_tiny_io.safetensors'), t,
            {'config': json.dumps(cfg, sort_keys=True), 'generator': 'tools/goldens/gen_minimax_h3.py',
             'seed': str(SEED)})
    for f in ['minimax_h3_tiny/diffusion_pytorch_model.safetensors', 'minimax_h3_tiny_io.safetensors']:
        print(f'  {f} {os.path.getsize(os.path.join(out_dir, f)) / 1024:.0f} KiB')


if __name__ == '__main__':
    main()
