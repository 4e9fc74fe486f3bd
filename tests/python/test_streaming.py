"""Streaming from Python: frames pushed in random pieces and a flush give the one-shot output
(to f32 rounding, docs/streaming.md), for BigVGAN and the LTX decoder, on one device and as a
1x2 pipeline."""
import numpy as np
import pytest

TOL = 4e-6


def push_in_pieces(stream, x, axis, rng):
    n = x.shape[axis]
    cuts = sorted(set(rng.integers(1, n, size=5).tolist()))
    outs, at = [], 0
    for e in cuts + [n]:
        outs.append(stream.push(np.ascontiguousarray(np.take(x, range(at, e), axis=axis))))
        at = e
    outs.append(stream.flush())
    return np.concatenate(outs, axis=2)


@pytest.mark.parametrize('mesh', ['1x1', '1x2'])
def test_bigvgan_stream_equals_one_shot(bigvgan, rng, mesh):
    mel = rng.uniform(-8, 1, (1, bigvgan.num_mels, 30)).astype(np.float32)
    s = bigvgan.stream(mesh=mesh)
    assert s.lookahead_frames > 0 and s.sample_rate == bigvgan.sample_rate
    first = s.push(mel[:, :, :5].copy())
    assert s.frames_pushed == 5 and s.samples_returned == first.shape[2]
    s.reset()
    assert s.frames_pushed == 0 and s.samples_returned == 0
    got = push_in_pieces(s, mel, 2, rng)
    want = bigvgan(mel, mesh='1x1')
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= TOL


@pytest.mark.parametrize('mesh', ['1x1', '1x2'])
def test_ltx_stream_equals_one_shot(ltx23, rng, mesh):
    latent = rng.uniform(-2, 2, (1, 8, 7, 16)).astype(np.float32)
    got = push_in_pieces(ltx23.stream(mesh=mesh), latent, 2, rng)
    want = ltx23(latent, mesh='1x1')
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= TOL


def test_stream_refuses_bad_frames(bigvgan):
    s = bigvgan.stream()
    with pytest.raises(ValueError):
        s.push(np.zeros((1, bigvgan.num_mels + 1, 2), np.float32))
