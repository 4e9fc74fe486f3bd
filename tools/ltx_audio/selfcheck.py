#!/usr/bin/python3
"""Self-checks of the PyTorch reference against the numbers and closed forms in the reference docs.
Run: /usr/bin/python3 tools/ltx_audio/selfcheck.py   (small inputs, a few seconds on one core)."""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ltx_audio import bigvgan as BV, configs as C, filters, io as lio, model as M, randinit as R  # noqa: E402

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
FAILS = []


def check(name, ok, detail=''):
    print(f'{"ok  " if ok else "FAIL"} {name} {detail}')
    if not ok:
        FAILS.append(name)


def main():
    torch.set_num_threads(1)
    # kaiser taps (bigvgan.md §4)
    doc = [0.00202897, 0.00938946, -0.02554346, -0.05765738, 0.12857261, 0.44320980]
    doc = np.array(doc + doc[::-1])
    for s in ('ltx', 'torch'):
        k = filters.kaiser_sinc_filter1d(0.25, 0.3, 12, s).reshape(-1).numpy()
        check(f'kaiser taps ({s} sinc) match doc', np.abs(k - doc).max() < 5e-8, f'max diff {np.abs(k - doc).max():.2e}')
    # Hann x3 taps (§6.4)
    h, pad, pl, pr = filters.hann_sinc_resampler_taps(3)
    h = h.reshape(-1).double()
    g = [3 * h[p::3].sum().item() for p in range(3)]
    check('hann taps: 43, centre 0.33, pads 7/42/40', h.numel() == 43 and abs(h[21] - 0.33) < 1e-7 and (pad, pl, pr) == (7, 42, 40))
    check('hann per-phase DC gain 1.00004 / 1.00068', abs(g[0] - 1.00004) < 1e-5 and abs(g[1] - 1.00068) < 1e-5 and abs(g[2] - 1.00068) < 1e-5,
          f'{g}')
    # Activation1d closed polyphase form (§5.5)
    torch.manual_seed(0)
    act = M.Activation1d(M.SnakeBeta(3)).double()
    with torch.no_grad():
        act.act.alpha.normal_(0, 0.3)
        act.act.beta.normal_(0, 0.3)
    x = torch.randn(1, 3, 17, dtype=torch.float64)
    ref = act(x)
    f = act.upsample.filter.reshape(-1).double()
    T = x.shape[-1]
    X = lambda i: x[..., min(max(i, 0), T - 1)]  # noqa: E731
    y = torch.zeros(1, 3, 2 * T, dtype=torch.float64)
    for t in range(T):
        y[..., 2 * t] = 2 * sum(f[2 * j + 1] * X(t + 2 - j) for j in range(6))
        y[..., 2 * t + 1] = 2 * sum(f[2 * j] * X(t + 3 - j) for j in range(6))
    z = act.act(y)
    out = torch.stack([sum(f[k] * z[..., min(max(2 * t + k - 5, 0), 2 * T - 1)] for k in range(12)) for t in range(T)], -1)
    check('Activation1d == closed polyphase form', (out - ref).abs().max() < 1e-12, f'{(out - ref).abs().max():.1e}')
    # lengths: 4T-3, 160*M, 480*M, T=1 edge
    m23 = R.random_ltx(C.ltx23_config(True), 1)
    for t in (1, 2, 5):
        with torch.no_grad():
            tr = {}
            yy = m23(torch.randn(1, 8, t, 16), tr)
        mm = max(4 * t - 3, 1)
        check(f'LTX-2.3 small T={t}: mel {mm} frames, 16k {160 * mm}, 48k {480 * mm}',
              tr['stage_a.out'].shape == (1, 2, mm, 64) and tr['stage_b.out'].shape == (1, 2, 160 * mm)
              and tr['stage_c.log_mel'].shape == (1, 2, 64, 2 * mm) and yy.shape == (1, 2, 480 * mm))
    # 'stuffed' UpSample1d (bench option) == conv_transpose1d reference on the whole small chain
    lat = torch.randn(1, 8, 3, 16)
    with torch.no_grad():
        ya = m23(lat)
        M.set_upsample_impl('stuffed')
        yb = m23(lat)
        M.set_upsample_impl('convt')
    check("UpSample1d 'stuffed' == 'convt' (whole small chain)", ((ya - yb).norm() / ya.norm()) < 1e-5, f'{((ya - yb).norm() / ya.norm()):.1e}')
    # Stage A causality: changing the last latent frame leaves earlier mel frames untouched
    lat = torch.randn(1, 8, 4, 16)
    lat2 = lat.clone()
    lat2[:, :, -1] += 1.0
    with torch.no_grad():
        a1, a2 = m23.stage_a(lat), m23.stage_a(lat2)
    d = (a1 - a2).abs().amax(dim=(0, 1, 3))
    check('Stage A causal: latent t affects mel frames ≥ 4t−3 only', d[:9].max() == 0 and d[9:].min() > 0, f'first changed frame {int((d > 0).nonzero()[0])}')
    # causal STFT vs torch.stft with the same (periodic Hann) window, causal left pad 432
    mel = m23.vocoder.mel_stft
    fwd, _ = filters.causal_stft_bases(512)
    ms = M.MelSTFT(512, 80, 512, 64)
    with torch.no_grad():
        ms.stft_fn.forward_basis.copy_(torch.from_numpy(fwd))
        ms.mel_basis.copy_(torch.from_numpy(filters.slaney_mel_filterbank(16000, 512, 64, 0, 8000)))
    sig = torch.randn(2, 800, dtype=torch.float32) * 0.3
    mag = ms.stft_fn(sig)
    ref = torch.stft(F.pad(sig, (432, 0)), 512, 80, 512, torch.hann_window(512), center=False, return_complex=True).abs()
    check('causal STFT (conv with basis) == torch.stft', mag.shape == (2, 257, 10) and (mag - ref).abs().max() < 1e-4,
          f'{(mag - ref).abs().max():.1e}')
    del mel
    # mel front end vs an independent float64 numpy STFT
    hcfg = C.bigvgan_config('bigvgan_v2_24khz_100band_256x')
    wav = torch.randn(1, 256 * 10 + 11) * 0.2
    mt = BV.mel_from_config(wav, hcfg)
    w = wav[0].double().numpy()
    p = (1024 - 256) // 2
    wp = np.pad(w, (p, p), mode='reflect')
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(1024) / 1024)
    nfr = (len(wp) - 1024) // 256 + 1
    frames = np.stack([wp[i * 256:i * 256 + 1024] * win for i in range(nfr)])
    spec = np.fft.rfft(frames, axis=1)
    magn = np.sqrt(spec.real ** 2 + spec.imag ** 2 + 1e-9).T
    fb = filters.slaney_mel_filterbank(24000, 1024, 100, 0, None).astype(np.float64)
    mref = np.log(np.maximum(fb @ magn, 1e-5))
    err = np.abs(mt[0].double().numpy() - mref).max()
    check('mel front end == float64 numpy STFT (≤1e-5 abs on log-mel)', mt.shape == (1, 100, 10) and err < 1e-5, f'{err:.1e}')
    # weight-norm fold per dim 0 (ConvTranspose: per input channel) == torch weight_norm forward
    h = C.bigvgan_config('bigvgan_v2_44khz_128band_512x', small=True)
    bv = R.random_bigvgan(h, 3)
    sd = {k: v.clone() for k, v in bv.state_dict().items()}
    sys.path.insert(0, TOOLS)
    import convert_checkpoint as CC
    folded = CC.fold_weight_norm(sd)
    bv2 = BV.load_bigvgan(folded, h)
    melin = torch.randn(1, 128, 5) - 4
    with torch.no_grad():
        o1, o2 = bv(melin), bv2(melin)
    check('weight-norm fold (convert_checkpoint) == weight_norm forward', (o1 - o2).abs().max() < 1e-5, f'{(o1 - o2).abs().max():.1e}')
    check('BigVGAN 44k small output length = frames·512', o1.shape == (1, 1, 5 * 512))
    n_keys = len(R.random_bigvgan(C.bigvgan_config('bigvgan_v2_24khz_100band_256x', True), 0).state_dict())
    n_v1 = len(R.random_bigvgan(C.bigvgan_config('bigvgan_24khz_100band', True), 0).state_dict())
    n_base = len(R.random_bigvgan(C.bigvgan_config('bigvgan_base_24khz_100band', True), 0).state_dict())
    check('BigVGAN key counts 783 / 784 / 526', (n_keys, n_v1, n_base) == (783, 784, 526), f'{(n_keys, n_v1, n_base)}')
    n23 = len(m23.state_dict())
    n2 = len(R.random_ltx(C.ltx2_config(True), 0).state_dict())
    check('LTX-2.3 tensor count 56+2+667+557+3 = 1285', n23 == 1285, str(n23))
    check('LTX-2 tensor count 56+2+(2+10+180+2)', n2 == 58 + 2 + 10 + 180 + 2, str(n2))
    # parameter counts of the full-size models (doc §1: 31.9 M, 115.1 M, 13.5 M)
    full = M.LtxAudioDecode(C.ltx23_config())
    pa = sum(p.numel() for p in full.audio_vae.decoder.parameters()) / 1e6
    pb = sum(p.numel() for p in full.vocoder.vocoder.parameters()) / 1e6
    pc = sum(p.numel() for p in full.vocoder.bwe_generator.parameters()) / 1e6
    check('full-size parameter counts 31.9 / 115.1 / 13.5 M', (round(pa, 1), round(pb, 1), round(pc, 1)) == (31.9, 115.1, 13.5),
          f'{pa:.2f} {pb:.2f} {pc:.2f}')
    del full
    # version detection and config checks
    try:
        bad = C.ltx23_config(True)
        bad['vocoder']['bwe']['activation'] = 'snake'
        M.LtxAudioDecode(bad)
        check('bwe.activation != snakebeta rejected', False)
    except ValueError as e:
        check('bwe.activation != snakebeta rejected', 'snakebeta' in str(e), str(e))
    check('version: LTX-2 config → HiFi-GAN Vocoder (24 kHz, tanh)',
          not M.LtxAudioDecode(C.ltx2_config(True)).has_bwe and M.is_ltx23(C.ltx23_config()) and not M.is_ltx23(C.ltx2_config()))
    # checkpoint round trip: make_checkpoint → convert_checkpoint → load_ltx gives the same output
    with tempfile.TemporaryDirectory() as d:
        ck = os.path.join(d, 'a.safetensors')
        subprocess.run([sys.executable, os.path.join(TOOLS, 'make_checkpoint.py'), 'ltx23', ck, '--small', '--seed', '5', '--no-check'],
                       check=True, capture_output=True)
        conv = os.path.join(d, 'b.safetensors')
        CC.convert(ck, conv)
        ma = M.load_ltx(ck)
        mb = M.load_ltx(conv)
        mr = R.random_ltx(C.ltx23_config(True), 5)
        lat = torch.randn(1, 8, 3, 16)
        with torch.no_grad():
            ya, yb, yr = ma(lat), mb(lat), mr(lat)
        check('make_checkpoint → load_ltx == in-memory model; convert is lossless', torch.equal(ya, yr) and torch.equal(ya, yb))
        # unknown keys → clear error
        sd, meta = lio.load_safetensors(ck)
        sd['vocoder.vocoder.bogus.weight'] = torch.zeros(1)
        lio.save_safetensors(os.path.join(d, 'c.safetensors'), sd, meta)
        try:
            CC.convert(os.path.join(d, 'c.safetensors'), os.path.join(d, 'd.safetensors'))
            check('converter rejects unknown keys', False)
        except CC.ConvertError as e:
            check('converter rejects unknown keys', 'bogus' in str(e), str(e)[:100])
        # NVIDIA .pt with {"generator": …} and parametrizations names
        hb = C.bigvgan_config('bigvgan_base_24khz_100band', True)
        b = R.random_bigvgan(hb, 2)
        sdp = {}
        for k, v in b.state_dict().items():
            k = k.replace('.weight_g', '.parametrizations.weight.original0').replace('.weight_v', '.parametrizations.weight.original1')
            sdp[k] = v
        torch.save({'generator': sdp}, os.path.join(d, 'g.pt'))
        with open(os.path.join(d, 'config.json'), 'w') as fh:
            json.dump(hb, fh)
        CC.convert(os.path.join(d, 'g.pt'), os.path.join(d, 'g.safetensors'), fold=True)
        sdl, metal = lio.load_safetensors(os.path.join(d, 'g.safetensors'))
        b2 = BV.load_bigvgan(sdl, json.loads(metal['config']))
        mi = torch.randn(1, 100, 4) - 3
        with torch.no_grad():
            check('NVIDIA .pt (parametrizations) → folded safetensors reproduces output', (b(mi) - b2(mi)).abs().max() < 1e-5)
    print('selfcheck:', 'all ok' if not FAILS else f'{len(FAILS)} FAILED: {FAILS}')
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
