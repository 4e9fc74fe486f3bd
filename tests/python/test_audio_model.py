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


def test_unknown_config_field_is_refused_naming_the_flag_and_loads_with_it(tmp_path):
    """A MiniMax-H3 folder whose config.json carries a field meshnn does not know: AudioModel.load,
    MiniMaxH3AudioVAE.from_pretrained and `audio-encode` refuse it by name and load it with
    allow_unknown_config=True / --allow-unknown-config (the same weights, the same output)."""
    import json
    import shutil
    from conftest import run_cli
    folder = tmp_path / 'h3'
    shutil.copytree(fixture('minimax_h3_tiny'), folder)
    cfg = json.loads((folder / 'config.json').read_text())
    cfg['meshnn_future_field'] = 1
    (folder / 'config.json').write_text(json.dumps(cfg))
    for load in (lambda **k: meshnn.AudioModel.load(folder, **k),
                 lambda **k: meshnn.MiniMaxH3AudioVAE.from_pretrained(folder, **k)):
        with pytest.raises(ValueError, match=r"meshnn_future_field.*--allow-unknown-config"):
            load()
        with pytest.raises(ValueError, match='must be True or False'):
            load(allow_unknown_config='yes')
    z = np.random.default_rng(3).standard_normal((2, 8, 4)).astype(np.float32)
    with meshnn.AudioModel.load(folder, allow_unknown_config=True, threads=1) as lenient, \
            meshnn.AudioModel.load(fixture('minimax_h3_tiny'), threads=1) as strict:
        assert np.array_equal(lenient(z, mesh='1x1'), strict(z, mesh='1x1'))
    wav = tmp_path / 'in.wav'
    meshnn.write_wav(wav, np.random.default_rng(4).uniform(-0.5, 0.5, 1600).astype(np.float32),
                     32000)
    r = run_cli('audio-encode', '--checkpoint', folder, '--wav', wav, '--out',
                tmp_path / 'z.npy', '--allow-unknown-config')
    assert 'meshnn_future_field' in r.stderr
