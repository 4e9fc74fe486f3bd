"""Against the PyTorch references in tools/ (tools/ltx_audio: NVIDIA BigVGAN, ltx-core's decode)
on small random checkpoints, fresh random inputs: PSNR ≥ 100 dB. Inputs given as torch tensors."""
import json
import os
import shutil
import sys

import numpy as np
import pytest

import meshnn
from conftest import TOOLS, fixture, import_torch, psnr_db

MIN_PSNR_DB = 100.0


@pytest.fixture(scope='module')
def ref():
    torch = import_torch()
    torch.set_num_threads(2)
    sys.path.insert(0, TOOLS)
    from ltx_audio import bigvgan as BV, io as lio, model as M
    return torch, BV, lio, M


def torch_bigvgan(ref, path, config=None):
    torch, BV, lio, _ = ref
    state, meta = lio.load_safetensors(path)
    # Fixtures also hold the golden inputs / stage outputs next to the generator's tensors.
    state = {k: v for k, v in state.items()
             if not k.startswith(('input.', 'output', 'bigvgan.'))}
    h = json.loads(open(config).read() if config else meta['config'])
    return BV.load_bigvgan(state, h), h


@pytest.mark.parametrize('name', ['bigvgan_v2_24k_small', 'bigvgan_base_24k_small'])
def test_bigvgan_psnr_vs_pytorch(ref, name):
    torch, BV, _, _ = ref
    path = fixture(name + '.safetensors')
    model, h = torch_bigvgan(ref, path)
    g = torch.Generator().manual_seed(hash(name) % 1000)
    wav = 0.3 * torch.randn(1, 48 * h['hop_size'], generator=g)
    mel = BV.mel_from_config(wav, h).contiguous()
    with torch.no_grad():
        want = model(mel).numpy()
    vocoder = meshnn.BigVGAN.from_pretrained(path)
    got = vocoder(mel, as_torch=True)  # torch in, torch out
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    assert tuple(got.shape) == want.shape
    p = psnr_db(got.numpy(), want)
    print(f'{name}: PSNR {p:.1f} dB')
    assert p >= MIN_PSNR_DB
    # meshnn's own mel front end against meldataset.py's
    mel_ours = vocoder.mel_spectrogram(wav[0])
    assert psnr_db(mel_ours, mel.numpy()) >= MIN_PSNR_DB


@pytest.mark.parametrize('name', ['ltx23_small', 'ltx2_small'])
def test_ltx_decode_psnr_vs_pytorch(ref, name):
    torch, _, _, M = ref
    path = fixture(name + '.safetensors')
    model = M.load_ltx(path, strict=False)
    latent = torch.randn(1, 8, 14, 16, generator=torch.Generator().manual_seed(11))
    with torch.no_grad():
        want = model(latent).numpy()
    decoder = meshnn.LtxAudioDecoder.from_checkpoint(path)
    got = decoder(latent)  # torch in, torch out
    assert isinstance(got, torch.Tensor) and got.shape == want.shape
    got = got.numpy()
    p = psnr_db(got, want)
    print(f'{name}: PSNR {p:.1f} dB')
    assert p >= MIN_PSNR_DB


def test_from_pretrained_nvidia_folder_pt(ref, bigvgan_folder, tmp_path):
    """config.json + bigvgan_generator.pt (the library's .pt reader) gives the same vocoder as our safetensors,
    and matches the PyTorch model built from the .pt."""
    torch, BV, _, _ = ref
    pt_only = tmp_path / 'nvidia'
    pt_only.mkdir()
    shutil.copy(bigvgan_folder / 'config.json', pt_only / 'config.json')
    shutil.copy(bigvgan_folder / 'bigvgan_generator.pt', pt_only / 'bigvgan_generator.pt')
    from_pt = meshnn.BigVGAN.from_pretrained(pt_only, use_cuda_kernel=False)
    from_st = meshnn.BigVGAN.from_pretrained(bigvgan_folder / 'bigvgan_generator.safetensors')
    assert from_pt.h == json.load(open(pt_only / 'config.json'))
    assert from_pt.h.num_mels == from_pt.num_mels and from_pt.h.sampling_rate == from_pt.sample_rate
    assert not list(pt_only.glob('*.safetensors'))  # the temporary conversion is gone
    h = from_pt.h
    mel = torch.randn(2, h['num_mels'], 36, generator=torch.Generator().manual_seed(3))
    a, b = from_pt(mel), from_st(mel)
    np.testing.assert_array_equal(a, b)
    state = torch.load(pt_only / 'bigvgan_generator.pt', map_location='cpu')['generator']
    model = BV.load_bigvgan(state, dict(h))
    with torch.no_grad():
        want = model(mel).numpy()
    assert a.shape == want.shape == (2, 1, 36 * h['hop_size'])
    assert psnr_db(a, want) >= MIN_PSNR_DB


def test_gr00t_adapter_vs_pytorch_goldens():
    """The adapter's outputs against the PyTorch goldens stored in the fixture (rel. L2 ≤ 1e-5)."""
    from meshnn._safetensors import load_safetensors
    for version in ('n1_5', 'n1_6', 'n1_7'):
        ckpt = fixture(f'gr00t_adapter_{version}.safetensors')
        t, meta = load_safetensors(ckpt)
        adapter = meshnn.gr00t.VlAdapter(ckpt, version.replace('_', '.'), t['input.token_types'])
        got = adapter(t['input.features'], state=t['input.state'], embodiment=int(meta['embodiment']))
        for k in ('dit_encoder_hidden_states', 'state_features'):
            want = t['golden.' + k]
            err = np.linalg.norm(got[k].reshape(want.shape) - want) / np.linalg.norm(want)
            assert err <= 1e-5, (version, k, err)


def test_pt_folder_loads_without_torch(bigvgan_folder, tmp_path):
    """Where torch is not importable, NVIDIA's .pt folder still loads (the library's own reader)
    and vocodes the same samples as with torch present; `import meshnn` never imports torch."""
    import subprocess
    pt_only = tmp_path / 'nvidia'
    pt_only.mkdir()
    shutil.copy(bigvgan_folder / 'config.json', pt_only / 'config.json')
    shutil.copy(bigvgan_folder / 'bigvgan_generator.pt', pt_only / 'bigvgan_generator.pt')
    v = meshnn.BigVGAN.from_pretrained(pt_only, threads=1)
    mel = np.random.default_rng(7).standard_normal((1, v.num_mels, 12)).astype(np.float32) - 4
    np.save(tmp_path / 'mel.npy', mel)
    code = ('import sys; sys.modules["torch"] = None\n'  # makes `import torch` fail
            'import numpy as np, meshnn\n'
            f'v = meshnn.BigVGAN.from_pretrained({str(pt_only)!r}, threads=1)\n'
            f'np.save({str(tmp_path / "out.npy")!r}, v(np.load({str(tmp_path / "mel.npy")!r})))\n')
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / 'out.npy'), v(mel))
    r = subprocess.run([sys.executable, '-c', 'import sys, meshnn; print("torch" in sys.modules)'],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.stdout.strip() == 'False', r.stdout + r.stderr
