"""Inputs, outputs and errors at the boundary: numpy and torch inputs read in place, outputs that
own meshnn's buffer, the documented exceptions (ValueError / KeyError / RuntimeError), progress."""
import numpy as np
import pytest

import meshnn
from meshnn._convert import as_array
from meshnn._safetensors import load_safetensors, save_safetensors
from conftest import fixture, import_torch


def mel_for(v, rng, frames=20, batch=1):
    return rng.standard_normal((batch, v.num_mels, frames)).astype(np.float32)


def test_numpy_in_numpy_out_owns_meshnn_buffer(bigvgan, rng):
    y = bigvgan(mel_for(bigvgan, rng))
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.flags['C_CONTIGUOUS']
    assert not y.flags['OWNDATA'] and type(y.base).__name__ == 'PyCapsule'  # no copy made
    assert y.shape == (1, 1, 20 * bigvgan.hop_length) and np.all(np.abs(y) <= 1)
    y[...] = 0  # writable, and dropping it frees the buffer (see test_leak.py)


def test_batch(bigvgan, ltx23, rng):
    mel = mel_for(bigvgan, rng, batch=2)
    both = bigvgan(mel, mesh='1x1')
    for b in range(2):
        np.testing.assert_array_equal(both[b:b + 1], bigvgan(mel[b:b + 1], mesh='1x1'))
    lat = rng.standard_normal((2, 8, 6, 16)).astype(np.float32)
    out = ltx23(lat)
    assert out.shape == (2, 2, ltx23.output_samples(6))
    np.testing.assert_array_equal(out[1:], ltx23(lat[1:]))


def test_torch_input_is_read_in_place_and_as_torch_shares_the_buffer(bigvgan, rng):
    torch = import_torch()
    t = torch.from_numpy(mel_for(bigvgan, rng)).requires_grad_(True)
    a = as_array(t, 'mel')
    assert a.__array_interface__['data'][0] == t.data_ptr()  # zero copy through DLPack
    y_t = bigvgan(t, as_torch=True)
    assert isinstance(y_t, torch.Tensor) and not y_t.requires_grad
    np.testing.assert_array_equal(y_t.numpy(), bigvgan(t.detach().numpy()))
    y_np = y_t.numpy()
    y_t[0, 0, 0] = 12.5  # the tensor and the array are one buffer
    assert y_np[0, 0, 0] == 12.5


@pytest.mark.parametrize('kind', ['float64', 'wrong_rank', 'nan', 'inf', 'wrong_mels', 'list',
                                  'int'])
def test_bad_mel_raises_value_error(bigvgan, rng, kind):
    mel = mel_for(bigvgan, rng, frames=24)
    bad, match = {
        'float64': (mel.astype(np.float64), 'expected float32, got float64'),
        'wrong_rank': (mel[0], r'expected \(B, 100, frames\), got \(100, 24\)'),
        'nan': (np.where(np.arange(24) == 5, np.nan, mel).astype(np.float32), 'non-finite'),
        'inf': (np.where(np.arange(24) == 7, np.inf, mel).astype(np.float32), 'non-finite'),
        'wrong_mels': (mel[:, :80].copy(), r'expected \(B, 100, frames\)'),
        'list': (mel.tolist(), 'expected float32, got float64'),
        'int': (mel.astype(np.int32), 'expected float32, got int32'),
    }[kind]
    with pytest.raises(ValueError, match=match):
        bigvgan(bad)


@pytest.mark.parametrize('kind', ['float64', 'wrong_rank', 'nan', 'bf16', 'grad'])
def test_bad_torch_latent_raises_value_error(ltx23, kind):
    torch = import_torch()
    lat = torch.randn(1, 8, 6, 16)
    if kind == 'grad':  # not an error: a tensor that requires grad is read without autograd
        assert ltx23(lat.requires_grad_(True)).shape == (1, 2, ltx23.output_samples(6))
        return
    bad, match = {
        'float64': (lat.double(), 'expected float32, got torch.float64'),
        'bf16': (lat.bfloat16(), 'expected float32, got torch.bfloat16'),
        'wrong_rank': (lat[0], r'latent: expected \(B, 8, T, 16\), got \(8, 6, 16\)'),
        'nan': (lat.index_fill(2, torch.tensor([3]), float('nan')), 'non-finite'),
    }[kind]
    with pytest.raises(ValueError, match=match):
        ltx23(bad)


def test_strided_inputs_are_copied_once_and_equal_contiguous_ones(bigvgan, ltx23, rng):
    """Slices and transposes are taken (issue 35: the docs' stream examples push slices)."""
    mel = mel_for(bigvgan, rng, frames=24)
    view = mel[:, :, ::2]
    np.testing.assert_array_equal(bigvgan(view), bigvgan(np.ascontiguousarray(view)))
    torch = import_torch()
    lat = torch.randn(1, 8, 16, 6).transpose(2, 3)
    np.testing.assert_array_equal(ltx23(lat).numpy(), ltx23(lat.contiguous()).numpy())


def test_bad_options_raise_value_error(ltx23, bigvgan, rng):
    lat = rng.standard_normal((1, 8, 6, 16)).astype(np.float32)
    with pytest.raises(ValueError, match='cannot be split over 8 devices'):
        ltx23(lat, mesh='1x8')
    with pytest.raises(ValueError):
        ltx23(lat, mesh='banana')
    with pytest.raises(ValueError, match='threads'):
        ltx23(lat, threads=-1)
    with pytest.raises(ValueError):
        meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx23_small.safetensors'), precision='fp8')


def test_missing_checkpoint_key_raises_key_error(tmp_path):
    t, meta = load_safetensors(fixture('bigvgan_v2_24k_small.safetensors'))
    victim = sorted(k for k in t if k.startswith('conv_post'))[0]
    del t[victim]
    save_safetensors(tmp_path / 'broken.safetensors', t, meta)
    with pytest.raises(KeyError, match=victim.replace('.', r'\.')):
        meshnn.BigVGAN.from_pretrained(tmp_path / 'broken.safetensors')


def test_other_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match='does not download'):
        meshnn.BigVGAN.from_pretrained('nvidia/bigvgan_v2_24khz_100band_256x')
    (tmp_path / 'junk.safetensors').write_bytes(b'\x10\x00\x00\x00\x00\x00\x00\x00{not json}')
    with pytest.raises(RuntimeError):  # FormatError → RuntimeError
        meshnn.LtxAudioDecoder.from_checkpoint(tmp_path / 'junk.safetensors')


def test_progress_callback(ltx23, rng):
    lat = rng.standard_normal((1, 8, 8, 16)).astype(np.float32)
    seen = []
    y = ltx23(lat, progress=lambda d, n, s: seen.append((d, n, s)))
    # LTX-2.3: three stages (mel-VAE decoder, vocoder, bandwidth extension), each named.
    assert [(d, n) for d, n, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert all(isinstance(st, str) and st for _, _, st in seen)
    np.testing.assert_array_equal(y, ltx23(lat))
    chunks = []
    ltx23(lat, chunk_frames=3, mesh='1x1', progress=lambda d, n, s: chunks.append((d, n)))
    assert chunks and chunks[-1][0] == chunks[-1][1]


def test_progress_callback_exception_stops_the_call(ltx23, rng):
    lat = rng.standard_normal((1, 8, 8, 16)).astype(np.float32)

    class Stop(Exception):
        pass

    def stop(done, total, stage):
        if done == 2:
            raise Stop(f'stopped at {stage}')

    with pytest.raises(Stop, match='stopped at .*vocoder'):
        ltx23(lat, progress=stop)
    np.testing.assert_array_equal(ltx23(lat), ltx23(lat))  # the decoder still works


def test_config_and_metadata(bigvgan, ltx23, ltx2):
    assert bigvgan.h.num_mels == bigvgan.num_mels == 100
    assert bigvgan.h['hop_size'] == bigvgan.hop_length == 256 and bigvgan.sample_rate == 24000
    assert bigvgan.eval() is bigvgan and bigvgan.remove_weight_norm() is None
    assert (ltx23.version, ltx23.sample_rate) == ('ltx-2.3', 48000)
    assert (ltx2.version, ltx2.sample_rate) == ('ltx-2', 24000)
    assert ltx23.parameters > 0


def test_wav_round_trip(tmp_path, rng):
    x = (0.5 * rng.standard_normal((2, 1000))).astype(np.float32)
    meshnn.write_wav(tmp_path / 'a.wav', x, 48000)
    s, sr = meshnn.read_wav(tmp_path / 'a.wav')
    assert sr == 48000 and s.shape == (2, 1000)  # channels first, as write_wav takes it
    np.testing.assert_array_equal(s, x)
    # The round trip of a short file keeps its channel count (was: a T-channel WAV).
    meshnn.write_wav(tmp_path / 'b.wav', s, sr)
    s2, _ = meshnn.read_wav(tmp_path / 'b.wav')
    np.testing.assert_array_equal(s2, x)


def _wav_data_chunk(path):
    """The float32 samples of a WAV's data chunk, in file order."""
    b = open(path, 'rb').read()
    at = 12
    while b[at:at + 4] != b'data':
        at += 8 + int.from_bytes(b[at + 4:at + 8], 'little')
    n = int.from_bytes(b[at + 4:at + 8], 'little')
    return np.frombuffer(b[at + 8:at + 8 + n], dtype='<f4')


def test_wav_layout_is_channels_first_in_cpp_and_python(tmp_path, rng):
    """One wave layout: the C++ io::read_wav / io::write_wav (the raw bindings, no conversion in
    between) and Python's meshnn.read_wav / write_wav all take and give (C, T); the file holds the
    frames interleaved, as every WAV reader expects."""
    from meshnn import _meshnn
    x = (0.5 * rng.standard_normal((3, 701))).astype(np.float32)
    meshnn.write_wav(tmp_path / 'py.wav', x, 16000)
    _meshnn.write_wav(str(tmp_path / 'cpp.wav'), x, 16000)
    assert open(tmp_path / 'py.wav', 'rb').read() == open(tmp_path / 'cpp.wav', 'rb').read()
    np.testing.assert_array_equal(_wav_data_chunk(tmp_path / 'cpp.wav'), x.T.ravel())
    for name in ('py.wav', 'cpp.wav'):
        s_cpp, sr = _meshnn.read_wav(str(tmp_path / name))
        s_py, _ = meshnn.read_wav(tmp_path / name)
        assert sr == 16000 and s_cpp.shape == s_py.shape == (3, 701)
        np.testing.assert_array_equal(s_cpp, x)
        np.testing.assert_array_equal(s_py, x)
    with pytest.raises(ValueError, match='channels first'):
        _meshnn.write_wav(str(tmp_path / 'tc.wav'), np.ascontiguousarray(
            rng.standard_normal((2000, 2)).astype(np.float32)), 16000)  # (T, C): too many channels


def test_gr00t_adapter_errors():
    ckpt = fixture('gr00t_adapter_n1_5.safetensors')
    t, _ = load_safetensors(ckpt)
    types = t['input.token_types']
    with pytest.raises(ValueError, match='num_attention_heads \\(3\\) divisible by 2'):
        meshnn.gr00t.VlAdapter(ckpt, 'n1.5', types, mesh='1x2')  # checked at construction
    with pytest.raises(ValueError):
        meshnn.gr00t.VlAdapter(ckpt, 'n2.0', types)
    adapter = meshnn.gr00t.VlAdapter(ckpt, 'n1.5', types)
    feats = t['input.features']
    with pytest.raises(ValueError, match='S=40'):
        adapter(feats[:, :39].copy(), state=t['input.state'])
    with pytest.raises(ValueError, match='expected float32'):
        adapter(feats.astype(np.float64), state=t['input.state'])
    bad_state = t['input.state'].copy()
    bad_state[0, 0, 1] = np.nan
    with pytest.raises(ValueError, match='non-finite'):
        adapter(feats, state=bad_state)
    out = adapter(feats)  # no state: no state encoder run
    assert 'state_features' not in out and 'kv.0.k' in out
