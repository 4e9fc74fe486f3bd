"""The module's outputs equal the CLI's bit for bit on the same inputs (float32 WAV round trip is
exact), for BigVGAN (mel and WAV front end), the LTX-2.3 / LTX-2 decode and the GR00T adapter."""
import json

import numpy as np
import pytest

import meshnn
from conftest import fixture, run_cli


def read_planar(path):
    samples, sr = meshnn.read_wav(path)
    return samples[None], sr  # (C, T) → (1, C, T)


@pytest.mark.parametrize('mesh', ['1x1', '1x2'])
def test_vocode_mel_equals_cli(bigvgan, tmp_path, rng, mesh):
    mel = rng.standard_normal((1, bigvgan.num_mels, 40)).astype(np.float32)
    np.save(tmp_path / 'mel.npy', mel)
    run_cli('vocode', '--checkpoint', fixture('bigvgan_v2_24k_small.safetensors'), '--mel',
            tmp_path / 'mel.npy', '--out', tmp_path / 'out.wav', '--mesh', mesh, '--quiet')
    want, sr = read_planar(tmp_path / 'out.wav')
    got = bigvgan(mel, mesh=mesh)
    assert sr == bigvgan.sample_rate
    assert got.shape == want.shape == (1, 1, 40 * bigvgan.hop_length)
    np.testing.assert_array_equal(got, want)


def test_vocode_wav_equals_cli(bigvgan, tmp_path, rng):
    wav = (0.3 * rng.standard_normal(40 * bigvgan.hop_length)).astype(np.float32)
    meshnn.write_wav(tmp_path / 'in.wav', wav, bigvgan.sample_rate)
    run_cli('vocode', '--checkpoint', fixture('bigvgan_v2_24k_small.safetensors'), '--wav',
            tmp_path / 'in.wav', '--out', tmp_path / 'out.wav', '--quiet')
    want, _ = read_planar(tmp_path / 'out.wav')
    samples, _ = meshnn.read_wav(tmp_path / 'in.wav')
    mel = bigvgan.mel_spectrogram(samples[0].copy())
    assert mel.shape == (1, bigvgan.num_mels, 40)
    np.testing.assert_array_equal(bigvgan(mel, mesh='1x1'), want)


@pytest.mark.parametrize('name,mesh,chunk', [('ltx23_small', 'auto', 0), ('ltx23_small', '1x2', 0),
                                             ('ltx23_small', '1x1', 4), ('ltx2_small', 'auto', 0)])
def test_audio_decode_equals_cli(tmp_path, rng, name, mesh, chunk):
    ckpt = fixture(name + '.safetensors')
    latent = rng.standard_normal((1, 8, 12, 16)).astype(np.float32)
    np.save(tmp_path / 'latent.npy', latent)
    args = ['audio-decode', '--checkpoint', ckpt, '--latent', tmp_path / 'latent.npy', '--out',
            tmp_path / 'out.wav', '--mesh', mesh, '--quiet']
    if chunk:
        args += ['--chunk-frames', chunk]
    run_cli(*args)
    want, sr = read_planar(tmp_path / 'out.wav')
    dec = meshnn.LtxAudioDecoder.from_checkpoint(ckpt, mesh=mesh)
    got = dec(latent, chunk_frames=chunk or None)
    assert sr == dec.sample_rate == (48000 if name == 'ltx23_small' else 24000)
    assert got.shape == want.shape == (1, 2, dec.output_samples(12))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('version,mesh,extra', [
    ('n1_5', '1x1', {}), ('n1_6', '1x1', {}), ('n1_7', '1x1', {}), ('n1_6', '1x2', {}),
    ('n1_5', '1x1', {'taps': True, 'gather_mode': 'onehot', 'precision': 'bf16'})])
def test_gr00t_adapter_equals_cli(tmp_path, version, mesh, extra):
    ckpt = fixture(f'gr00t_adapter_{version}.safetensors')
    from meshnn._safetensors import load_safetensors
    t, meta = load_safetensors(ckpt)
    np.save(tmp_path / 'types.npy', t['input.token_types'])
    np.save(tmp_path / 'features.npy', t['input.features'])
    np.save(tmp_path / 'state.npy', t['input.state'])
    emb = int(meta['embodiment'])
    v = version.replace('_', '.')
    flags = []
    if extra.get('taps'):
        flags.append('--taps')
    for k in ('gather_mode', 'precision'):
        if k in extra:
            flags += ['--' + k.replace('_', '-'), extra[k]]
    run_cli('gr00t-adapter', '--checkpoint', ckpt, '--version', v, '--token-types',
            tmp_path / 'types.npy', '--features', tmp_path / 'features.npy', '--state',
            tmp_path / 'state.npy', '--embodiment', emb, '--mesh', mesh, '--out',
            tmp_path / 'out.safetensors', *flags)
    want, meta = load_safetensors(tmp_path / 'out.safetensors')
    adapter = meshnn.gr00t.VlAdapter(ckpt, v, t['input.token_types'], mesh=mesh, **extra)
    assert adapter.describe() == json.loads(meta['plan'])
    got = adapter(t['input.features'], state=t['input.state'], embodiment=emb)
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_array_equal(got[k].reshape(want[k].shape), want[k], err_msg=k)
    # Calling again reuses the adapter (K/V buffers) and gives the same tensors.
    again = adapter(t['input.features'], state=t['input.state'], embodiment=emb)
    for k in want:
        np.testing.assert_array_equal(again[k], got[k], err_msg=k)
