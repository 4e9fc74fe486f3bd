"""meshnn.AudioModel: the registry finds each fixture's model; run / encode / stream give exactly
what the typed classes give."""
import numpy as np
import pytest

import meshnn
from conftest import fixture


def test_registered_models_in_load_order():
    assert meshnn.AudioModel.registered() == ['minimax-h3-audio-vae', 'ltx-audio-decoder',
                                              'nvidia-bigvgan']


def test_ltx_checkpoint_runs_as_the_typed_decoder():
    path = fixture('ltx23_small.safetensors')
    with meshnn.AudioModel.load(path, threads=1) as m:
        assert m.model == 'ltx-audio-decoder'
        assert m.input_spec.layout == '(1, 8, T, 16)' and m.input_spec.frames_per_second == 25.0
        assert m.output_spec.sample_rate == 48000 and not m.has_encoder and m.can_stream
        z = np.random.default_rng(7).standard_normal((1, 8, 6, 16)).astype(np.float32)
        y = m(z, mesh='1x1')
        ref = meshnn.LtxAudioDecoder.from_checkpoint(path, threads=1)(z, mesh='1x1')
        assert np.array_equal(y, ref) and y.shape[2] == m.output_samples(6)
        s = m.stream()
        parts = [np.ascontiguousarray(z[:, :, :2]), np.ascontiguousarray(z[:, :, 2:])]
        streamed = np.concatenate([s.push(parts[0]), s.push(parts[1]), s.flush()], axis=2)
        assert np.max(np.abs(streamed - y)) < 1e-5
        with pytest.raises(ValueError, match='has no encoder'):
            m.encode(y)
    with pytest.raises(ValueError, match='closed'):
        m(z)


def test_minimax_h3_folder_decodes_and_encodes_as_the_typed_vae():
    folder = fixture('minimax_h3_tiny')
    m = meshnn.AudioModel.load(folder, threads=1)
    assert m.model == 'minimax-h3-audio-vae' and m.has_encoder
    vae = meshnn.MiniMaxH3AudioVAE.from_pretrained(folder, threads=1)
    z = np.random.default_rng(8).standard_normal((2, m.input_spec.shape[1], 4)).astype(np.float32)
    w = m(z)
    assert np.array_equal(w, vae.decode(z).sample)
    assert np.array_equal(m.encode(w), vae.encode(w).latent_dist.mode())


def test_an_unknown_file_says_why_each_model_refused_it(tmp_path):
    junk = tmp_path / 'junk.bin'
    junk.write_bytes(b'not a checkpoint of any kind')
    with pytest.raises(ValueError) as e:
        meshnn.AudioModel.load(junk)
    for name in meshnn.AudioModel.registered():
        assert name + ': ' in str(e.value)
