#!/usr/bin/python3
"""Golden fixtures for the LTX-2.3 / LTX-2 audio decode (Stage A mel-VAE decoder, Stage B vocoder,
Stage C bandwidth extension) from tools/ltx_audio, reduced-width configs with seeded random weights.

Usage: gen_ltx_audio.py OUT_DIR. Writes (layout documented in docs/models.md):
  ltx23_small.safetensors     checkpoint: real key names, bf16, config JSON in __metadata__["config"]
  ltx23_small_io.safetensors  input.latent, every stage's intermediate and output (f32), T=1 edge case
  ltx2_small.safetensors      LTX-2 (19B, HiFi-GAN vocoder, no BWE) checkpoint, same conventions
  ltx2_small_io.safetensors   its input / stage outputs
  ltx_audio_ops.safetensors   single-op goldens: kaiser / Hann taps, Activation1d, Hann x3 resampler,
                              causal STFT log-mel, CausalConv2d, Upsample, ConvTranspose1d
"""
import os

# Deterministic reductions: one thread for torch, OpenMP and BLAS, set before torch / numpy load
# (torch.set_num_threads alone is not enough: oneDNN picks other kernels, OpenBLAS pinv differs).
for _v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
    os.environ[_v] = '1'

import copy  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
sys.path.insert(0, HERE)
import st  # noqa: E402
from ltx_audio import configs as C, model as M, randinit as R  # noqa: E402

SEED = 20240605


def _ckpt_tensors(model):
    return {k: v.detach().to(torch.bfloat16) for k, v in model.state_dict().items()}


def _io(model, latent, latent_t1):
    tr = {}
    with torch.no_grad():
        out = model(latent, tr)
        out_t1 = model(latent_t1)
    io = {'input.latent': latent}
    io.update(tr)
    io.pop('stage_c.bwe.conv_post', None)  # identical to stage_c.residual (no final activation on the BWE)
    io['output'] = out
    io['edge_t1.input.latent'] = latent_t1
    io['edge_t1.output'] = out_t1
    # float64 reference of the same model and input (rounded to f32 for storage): measures the f32 error
    m64 = copy.deepcopy(model).double()
    tr64 = {}
    with torch.no_grad():
        m64(latent.double(), tr64)
    for k in ('stage_a.out', 'stage_b.out', 'output'):
        io['ref64.' + k] = tr64[k] if k != 'output' else tr64.get('output')
        a, b = tr[k].double(), tr64[k]
        print(f'    torch f32 vs f64 {k:12s}: rel L2 {((a - b).norm() / b.norm()).item():.2e}')
    return {k: v.contiguous().float() for k, v in io.items()}


def _meta(cfg, note):
    return {'config': json.dumps(cfg, sort_keys=True), 'generator': 'tools/goldens/gen_ltx_audio.py',
            'seed': str(SEED), 'note': note}


def gen_model(out_dir, name, cfg, seed):
    model = R.random_ltx(cfg, seed, bf16=True)
    g = torch.Generator().manual_seed(seed + 1)
    latent = torch.randn(1, 8, 3, 16, generator=g)
    latent_t1 = torch.randn(1, 8, 1, 16, generator=g)
    st.save(os.path.join(out_dir, f'{name}.safetensors'), _ckpt_tensors(model),
            _meta(cfg, 'random weights (bf16); load with the real key names'))
    io = _io(model, latent, latent_t1)
    st.save(os.path.join(out_dir, f'{name}_io.safetensors'), io,
            _meta(cfg, 'inputs and stage outputs for ' + name + '.safetensors'))
    m = 4 * latent.shape[2] - 3
    per = 480 if model.has_bwe else 240
    assert io['stage_a.out'].shape == (1, 2, m, 64), io['stage_a.out'].shape
    assert io['stage_b.out'].shape[-1] == (160 * m if model.has_bwe else 240 * m)
    assert io['output'].shape == (1, 2, per * m)
    assert io['edge_t1.output'].shape == (1, 2, per)
    for k, v in io.items():
        assert torch.isfinite(v).all(), k
    return io


def gen_ops(out_dir):
    g = torch.Generator().manual_seed(SEED + 7)
    t = {}
    up = M.UpSample1d(2, 12)
    t['kaiser.taps'] = up.filter.reshape(12)
    hann = M.UpSample1d(3, persistent=False, window_type='hann')
    t['hann3.taps'] = hann.filter.reshape(-1)
    # Activation1d(SnakeBeta) on (1, 3, 20): edges exercise both replicate pads
    act = M.Activation1d(M.SnakeBeta(3))
    with torch.no_grad():
        act.act.alpha.copy_(torch.randn(3, generator=g) * 0.3)
        act.act.beta.copy_(torch.randn(3, generator=g) * 0.3)
    x = torch.randn(1, 3, 20, generator=g) * 2
    t['activation1d.input'] = x
    t['activation1d.act.alpha'] = act.act.alpha.detach().clone()
    t['activation1d.act.beta'] = act.act.beta.detach().clone()
    with torch.no_grad():
        t['activation1d.upsampled'] = act.upsample(x)
        t['activation1d.output'] = act(x)
    # Hann-sinc x3 resampler, (1, 2, 37)
    x = torch.randn(1, 2, 37, generator=g)
    t['hann3.input'] = x
    t['hann3.output'] = hann(x)
    # CausalConv2d k3 and Upsample on (1, 3, 4, 5)
    cc = M.CausalConv2d(3, 2, 3)
    upm = M.Upsample(3)
    with torch.no_grad():
        for m in (cc.conv, upm.conv.conv):
            m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.3)
            m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
        x = torch.randn(1, 3, 4, 5, generator=g)
        t['causal_conv2d.input'] = x
        t['causal_conv2d.conv.weight'] = cc.conv.weight.detach().clone()
        t['causal_conv2d.conv.bias'] = cc.conv.bias.detach().clone()
        t['causal_conv2d.output'] = cc(x)
        t['upsample.conv.conv.weight'] = upm.conv.conv.weight.detach().clone()
        t['upsample.conv.conv.bias'] = upm.conv.conv.bias.detach().clone()
        t['upsample.input'] = x
        t['upsample.output'] = upm(x)  # (1, 3, 7, 10)
        # ConvTranspose1d (k 11, s 5, p 3) as in ups.0 of the main vocoder
        ct = torch.nn.ConvTranspose1d(4, 3, 11, 5, padding=3)
        ct.weight.copy_(torch.randn(ct.weight.shape, generator=g) * 0.3)
        ct.bias.copy_(torch.randn(ct.bias.shape, generator=g) * 0.1)
        x = torch.randn(1, 4, 6, generator=g)
        t['conv_transpose1d.weight'] = ct.weight.detach().clone()
        t['conv_transpose1d.bias'] = ct.bias.detach().clone()
        t['conv_transpose1d.input'] = x
        t['conv_transpose1d.output'] = ct(x)  # (1, 3, 30)
        # PixelNorm over channels
        x = torch.randn(1, 5, 3, 4, generator=g)
        t['pixel_norm.input'] = x
        t['pixel_norm.output'] = M.PixelNorm()(x)
    st.save(os.path.join(out_dir, 'ltx_audio_ops.safetensors'), {k: v.contiguous().float() for k, v in t.items()},
            {'generator': 'tools/goldens/gen_ltx_audio.py', 'seed': str(SEED)})


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: gen_ltx_audio.py OUT_DIR')
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    gen_model(out_dir, 'ltx23_small', C.ltx23_config(small=True), SEED)
    gen_model(out_dir, 'ltx2_small', C.ltx2_config(small=True), SEED + 1)
    gen_ops(out_dir)
    for f in ('ltx23_small', 'ltx23_small_io', 'ltx2_small', 'ltx2_small_io', 'ltx_audio_ops'):
        p = os.path.join(out_dir, f + '.safetensors')
        print(f'  {f}.safetensors {os.path.getsize(p) / 1024:.0f} KiB')


if __name__ == '__main__':
    main()
