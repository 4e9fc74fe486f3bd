"""The calls of meshnn.AudioModel the typed classes are facades over: identify / files, forced
model, random weights, encode streams, latent statistics, chunked runs, stage streams, config and
per-stage precisions, copy synthesis (input_from_wave)."""
import json
import os

import numpy as np
import pytest

import meshnn
from conftest import fixture

H3 = fixture('minimax_h3_tiny')
LTX23 = fixture('ltx23_small.safetensors')
BIGVGAN = fixture('bigvgan_v2_24k_small.safetensors')


@pytest.fixture(scope='module')
def h3():
    return meshnn.AudioModel.load(H3, threads=1)


def test_identify_and_files_name_what_load_takes_and_reads(tmp_path):
    assert meshnn.AudioModel.identify(H3) == 'minimax-h3-audio-vae'
    assert meshnn.AudioModel.identify(LTX23) == 'ltx-audio-decoder'
    assert meshnn.AudioModel.identify(BIGVGAN) == 'nvidia-bigvgan'
    assert meshnn.AudioModel.files(LTX23) == [LTX23]
    assert sorted(meshnn.AudioModel.files(H3)) == sorted(
        [os.path.join(H3, 'config.json'), os.path.join(H3, 'diffusion_pytorch_model.safetensors')])
    cfg = tmp_path / 'given.json'
    assert str(cfg) in meshnn.AudioModel.files(BIGVGAN, config=cfg)
    junk = tmp_path / 'junk.bin'
    junk.write_bytes(os.urandom(64))
    with pytest.raises(ValueError, match='not a model meshnn knows'):
        meshnn.AudioModel.identify(junk)
    with pytest.raises(ValueError, match='True or False'):
        meshnn.AudioModel.identify(H3, allow_unknown_config='yes')


def test_a_forced_model_loads_with_its_own_loader_or_refuses():
    m = meshnn.AudioModel.load(LTX23, model='ltx-audio-decoder', threads=1)
    assert (m.model, m.variant) == ('ltx-audio-decoder', 'ltx-2.3')
    # An LTX checkpoint as the vocoder: BigVGAN's own loader says what is wrong with it.
    with pytest.raises((ValueError, KeyError)):
        meshnn.AudioModel.load(LTX23, model='nvidia-bigvgan')
    with pytest.raises(ValueError, match='registered: '):
        meshnn.AudioModel.load(LTX23, model='no-such-model')


def test_random_weights_are_seeded_and_only_where_a_model_has_them(rng):
    a = meshnn.AudioModel.random('ltx-audio-decoder', seed=3, threads=1)
    assert a.variant == 'ltx-2.3' and a.parameters > 0 and a.config['audio_vae']
    assert a.stage_precisions == {'vae': 'fp32', 'vocoder': 'fp32', 'bwe': 'fp32'}
    b = meshnn.AudioModel.random('ltx-audio-decoder', seed=3, threads=1)
    c = meshnn.AudioModel.random('ltx-audio-decoder', seed=4, threads=1)
    z = rng.standard_normal((1, 8, 2, 16)).astype(np.float32)
    ya = a(z, mesh='1x1')
    assert np.array_equal(ya, b(z, mesh='1x1')) and not np.array_equal(ya, c(z, mesh='1x1'))
    with pytest.raises(ValueError, match='no random weights'):
        meshnn.AudioModel.random('nvidia-bigvgan', seed=0)
    with pytest.raises(ValueError, match='registered'):
        meshnn.AudioModel.random('no-such-model', seed=0)


def test_encode_stream_equals_encode_on_random_cuts(h3, rng):
    wave = rng.uniform(-0.5, 0.5, (2, 1, 40 * 9 + 17)).astype(np.float32)
    mean, logs = h3.encode(wave, log_std=True, mesh='1x1')
    assert np.array_equal(mean, h3.encode(wave, mesh='1x1'))
    with h3.encode_stream(threads=1) as s:
        assert (s.sample_rate, s.samples_per_frame, s.mesh) == (h3.sample_rate, 40, '1x1')
        assert s.lookahead_samples > 0 and s.lookahead_ms > 0
        s.push(np.ascontiguousarray(wave[:, :, :50]))
        s.reset()  # drops that input: the cuts below start afresh
        for trial in range(3):
            cuts = np.sort(rng.choice(np.arange(1, wave.shape[2]), size=5, replace=False))
            bounds = [0, *cuts, wave.shape[2]]
            got = [s.push(wave[:, :, a:b]) for a, b in zip(bounds, bounds[1:])]  # strided
            got.append(s.flush())
            m = np.concatenate([g[0] for g in got], axis=2)
            lg = np.concatenate([g[1] for g in got], axis=2)
            assert m.shape == mean.shape, (trial, cuts)
            assert np.abs(m - mean).max() <= 1e-5 and np.abs(lg - logs).max() <= 1e-5, cuts
    assert 'closed' in repr(s)
    with pytest.raises(ValueError, match='has no encoder'):
        meshnn.AudioModel.load(LTX23).encode_stream()


def test_latent_statistics_round_trip_against_float64(h3, rng):
    assert h3.has_latent_statistics
    c = h3.input_spec.shape[1]
    mu = np.asarray(h3.latents_mean, np.float64).reshape(1, c, 1)
    sd = np.asarray(h3.latents_std, np.float64).reshape(1, c, 1)
    assert mu.size == c and sd.size == c and (sd > 0).all()
    z = rng.standard_normal((2, c, 7)).astype(np.float32)
    n = h3.normalize_latents(z)
    assert np.abs(n - (z - mu) / sd).max() <= 1e-5 * (1 + np.abs(n).max())
    back = h3.denormalize_latents(n)
    assert np.abs(back - z).max() <= 1e-5 * (1 + np.abs(z).max())
    bad = z.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match='non-finite|NaN'):
        h3.normalize_latents(bad)
    with pytest.raises(RuntimeError, match='non-finite'):
        h3.denormalize_latents(np.full_like(z, 3e38))  # std > 1: overflows float32
    ltx = meshnn.AudioModel.load(LTX23)
    assert not ltx.has_latent_statistics and ltx.latents_mean == []
    with pytest.raises(ValueError, match='no latent statistics'):
        ltx.normalize_latents(z)


def test_chunked_runs_and_stage_streams(rng):
    m = meshnn.AudioModel.load(LTX23, threads=1)
    z = rng.standard_normal((1, 8, 7, 16)).astype(np.float32)
    one = m(z, mesh='1x1')
    chunked = m(z, chunk_frames=3)
    assert chunked.shape == one.shape and np.abs(chunked - one).max() <= 1e-5
    mel = rng.uniform(-5, 1, (1, 2, 9, 64)).astype(np.float32)
    with m.stage_stream('vocoder') as s:
        y = np.concatenate([s.push(mel[:, :, :4]), s.push(mel[:, :, 4:]), s.flush()], axis=2)
    ltx = meshnn.LtxAudioDecoder.from_checkpoint(LTX23, threads=1)
    with ltx.stream_vocoder() as s:
        ref = np.concatenate([s.push(mel), s.flush()], axis=2)
    assert y.shape == ref.shape and np.abs(y - ref).max() <= 1e-5
    with pytest.raises(ValueError, match="'vocoder' only"):
        m.stage_stream('vae')
    h3 = meshnn.AudioModel.load(H3)
    with pytest.raises(ValueError, match='does not run in chunks'):
        h3(rng.standard_normal((1, 8, 4)).astype(np.float32), chunk_frames=2)
    with pytest.raises(ValueError, match='stream entering'):
        h3.stage_stream('vocoder')
    with pytest.raises(ValueError, match='parameters'):
        h3.parameters  # noqa: B018 - the property raises


def test_config_precisions_and_copy_synthesis(bigvgan, rng):
    m = meshnn.AudioModel.load(BIGVGAN, precision='bf16', threads=1)
    assert m.variant == 'bigvgan' and m.has_wave_input and not m.has_encoder
    assert m.stage_precisions == {'vocoder': 'bf16'}
    assert m.config == bigvgan.h and m.config.num_mels == bigvgan.num_mels
    wav = rng.uniform(-0.5, 0.5, 24 * 256).astype(np.float32)
    mel = m.input_from_wave(wav)
    assert mel.shape == (1, bigvgan.num_mels, 24)
    assert np.array_equal(mel, bigvgan.mel_spectrogram(wav))
    h3 = meshnn.AudioModel.load(H3)
    with open(os.path.join(H3, 'config.json'), encoding='utf-8') as f:
        assert h3.config == json.load(f)
    assert h3.stage_precisions == {} and h3.variant == 'minimax-h3'
    with pytest.raises(ValueError, match='does not compute its input from a wave'):
        h3.input_from_wave(wav)
    with pytest.raises(ValueError, match='backend'):
        h3(rng.standard_normal((1, 8, 4)).astype(np.float32), backend='cuda')


def test_typed_classes_are_facades_over_one_audio_model():
    vae = meshnn.MiniMaxH3AudioVAE.from_pretrained(H3)
    assert isinstance(vae.audio_model, meshnn.AudioModel)
    assert vae.audio_model.model == 'minimax-h3-audio-vae'
    assert meshnn.LtxAudioDecoder.from_checkpoint(LTX23).audio_model.model == 'ltx-audio-decoder'
    assert meshnn.BigVGAN.from_pretrained(BIGVGAN).audio_model.model == 'nvidia-bigvgan'
    compiled = [n for n in dir(meshnn._meshnn) if not n.startswith('_')]
    for typed in ('LtxAudioDecoder', 'BigVganVocoder', 'MiniMaxH3AudioVae', 'StreamingVocoder'):
        assert typed not in compiled
