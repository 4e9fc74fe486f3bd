"""meshnn.MiniMaxH3AudioVAE and the CLI (audio-decode on an H3 folder, audio-encode) against the
golden of tools/minimax_h3 (fixture minimax_h3_tiny: hop 40)."""
import os
import sys

import numpy as np
import pytest

import meshnn
from conftest import FIXTURES, TOOLS, import_torch, run_cli

sys.path.insert(0, os.path.join(TOOLS, 'goldens'))
import st  # noqa: E402

FOLDER = os.path.join(FIXTURES, 'minimax_h3_tiny')


@pytest.fixture(scope='module')
def golden():
    return st.load(os.path.join(FIXTURES, 'minimax_h3_tiny_io.safetensors'))[0]


@pytest.fixture(scope='module')
def vae():
    return meshnn.MiniMaxH3AudioVAE.from_pretrained(FOLDER, threads=2)


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - b) / np.linalg.norm(b))


def test_decode_encode_match_the_reference(vae, golden):
    assert vae.sampling_rate == 32000 and vae.hop_length == 40 and len(vae.latents_mean) == 8
    y = vae.decode(golden['decode.latents']).sample
    assert isinstance(y, np.ndarray) and y.shape == (2, 1, 480)
    assert rel(y, golden['decode.output']) < 1e-5
    dist = vae.encode(golden['encode.wave']).latent_dist
    assert dist.mode().shape == (2, 8, 11)
    assert rel(dist.mode(), golden['encode.mean']) < 1e-5
    assert rel(dist.log_std, golden['encode.logs']) < 1e-5
    assert np.allclose(dist.std, np.exp(golden['encode.logs']), rtol=1e-4)
    z = vae.normalize(dist.mode())
    assert np.allclose(vae.denormalize(z), dist.mode(), atol=1e-5)


def test_torch_in_torch_out(vae, golden):
    torch = import_torch()
    y = vae.decode(torch.from_numpy(golden['decode.latents'])).sample
    assert isinstance(y, torch.Tensor) and tuple(y.shape) == (2, 1, 480)
    (dist,) = vae.encode(torch.from_numpy(golden['encode.wave']), return_dict=False)
    assert isinstance(dist.mode(), torch.Tensor)
    assert rel(dist.mode().numpy(), golden['encode.mean']) < 1e-5


def test_bad_inputs_raise(vae):
    with pytest.raises(ValueError):
        vae.decode(np.zeros((1, 7, 3), np.float32))
    with pytest.raises(ValueError):
        vae.encode(np.zeros((1, 2, 80), np.float32))
    with pytest.raises(FileNotFoundError):
        meshnn.MiniMaxH3AudioVAE.from_pretrained(os.path.join(FIXTURES, 'no_such_folder'))


def test_cli_decode_and_encode(vae, golden, tmp_path):
    lat = tmp_path / 'z.npy'
    np.save(lat, golden['decode.latents'])
    wav = tmp_path / 'y.wav'
    run_cli('audio-decode', '--checkpoint', FOLDER, '--latent', lat, '--out', wav, '--quiet')
    audio, sr = meshnn.read_wav(str(wav))
    audio = np.asarray(audio)
    assert sr == 32000 and audio.shape == (2, 480)  # one WAV channel per batch item
    assert rel(audio[:, None, :], golden['decode.output']) < 1e-5
    # audio-encode: one batch item per WAV channel; --log-std; --normalize.
    src = tmp_path / 'x.wav'
    meshnn.write_wav(str(src), golden['encode.wave'][:, 0, :], 32000)
    out, logs, normed = tmp_path / 'm.npy', tmp_path / 'l.npy', tmp_path / 'n.npy'
    run_cli('audio-encode', '--checkpoint', FOLDER, '--wav', src, '--out', out, '--log-std', logs,
            '--quiet')
    assert rel(np.load(out), golden['encode.mean']) < 1e-5
    assert rel(np.load(logs), golden['encode.logs']) < 1e-5
    run_cli('audio-encode', '--checkpoint', FOLDER, '--wav', src, '--out', normed, '--normalize',
            '--quiet')
    assert np.allclose(np.load(normed), vae.normalize(np.load(out)), atol=1e-5)


def test_cli_encode_refuses_a_log_std_output_onto_its_input(tmp_path):
    import subprocess
    from conftest import cli_path
    src = tmp_path / 'x.wav'
    rng = np.random.default_rng(5)
    meshnn.write_wav(str(src), rng.uniform(-0.5, 0.5, (1, 100)).astype(np.float32), 32000)
    before = src.read_bytes()
    r = subprocess.run([cli_path(), 'audio-encode', '--checkpoint', FOLDER, '--wav', str(src),
                        '--out', str(tmp_path / 'm.npy'), '--log-std', str(src), '--quiet'],
                       capture_output=True, text=True)
    assert r.returncode != 0 and 'same file as the input' in r.stderr, r.stderr
    assert src.read_bytes() == before
    assert not (tmp_path / 'm.npy').exists()


def test_mesh_and_stream_through_the_core(vae, golden):
    """The compiled AudioModel under the class (mesh option: stereo split 1x2, time split 2x1,
    both 2x2) and its decode stream (latents pushed frame by frame) equal one device to f32
    rounding."""
    core = vae.audio_model._core
    z = golden['decode.latents']
    one = core.run(z, threads=1, mesh='1x1')
    for mesh in ('1x2', '2x1', '2x2'):
        y = core.run(z, threads=1, mesh=mesh)
        assert y.shape == one.shape and rel(y, one) < 1e-6, mesh
        assert np.abs(y - one).max() <= 4e-6, mesh
        mean, logs = core.encode(golden['encode.wave'], threads=1, mesh=mesh)
        assert rel(mean, golden['encode.mean']) < 1e-5 and rel(logs, golden['encode.logs']) < 1e-5
    s = core.stream(mesh='1x1', threads=1)
    assert s.samples_per_frame == 40 and s.lookahead_frames > 0
    parts = [s.push(np.ascontiguousarray(z[:, :, t:t + 1])) for t in range(z.shape[2])]
    parts.append(s.flush())
    assert all(p.shape[:2] == (2, 1) for p in parts)
    y = np.concatenate(parts, axis=2)
    assert y.shape == one.shape and np.abs(y - one).max() <= 4e-6
    with pytest.raises(ValueError):
        s.push(np.zeros((2, 7, 1), np.float32))


def test_cli_mesh_and_stream(golden, tmp_path):
    lat = tmp_path / 'z.npy'
    np.save(lat, golden['decode.latents'])
    ref = golden['decode.output'][:, 0, :]
    for args in (['--mesh', '1x2', '--threads', '1'], ['--mesh', '2x1', '--threads', '1'],
                 ['--stream', '--push-frames', '1'], ['--stream', '--mesh', '1x2']):
        wav = tmp_path / 'y.wav'
        run_cli('audio-decode', '--checkpoint', FOLDER, '--latent', lat, '--out', wav, '--quiet',
                *args)
        audio, sr = meshnn.read_wav(str(wav))
        audio = np.asarray(audio)
        assert sr == 32000 and audio.shape == (2, 480), args
        assert rel(audio, ref) < 1e-5, args
    src = tmp_path / 'x.wav'
    meshnn.write_wav(str(src), golden['encode.wave'][:, 0, :], 32000)
    out = tmp_path / 'm.npy'
    run_cli('audio-encode', '--checkpoint', FOLDER, '--wav', src, '--out', out, '--mesh', '2x2',
            '--threads', '1', '--quiet')
    assert rel(np.load(out), golden['encode.mean']) < 1e-5


def test_high_level_mesh_streams_and_parts(golden):
    """The diffusers-shaped class takes mesh=, streams both directions (pushes of odd sizes equal
    one shot) and loads one half when asked (the other half then raises)."""
    z, wave = golden['decode.latents'], golden['encode.wave']
    split = meshnn.MiniMaxH3AudioVAE.from_pretrained(FOLDER, threads=1, mesh='1x2')
    assert rel(split.decode(z).sample, golden['decode.output']) < 1e-5
    assert rel(split.encode(wave).latent_dist.mode(), golden['encode.mean']) < 1e-5
    for mesh in ('1x1', '1x2'):
        with split.stream(mesh=mesh, threads=1) as s:
            parts = [s.push(np.ascontiguousarray(z[:, :, t:t + 3])) for t in range(0, 12, 3)]
            y = np.concatenate(parts + [s.flush()], axis=2)
        assert rel(y, golden['decode.output']) < 1e-5, mesh
        with split.encode_stream(mesh=mesh, threads=1) as e:
            assert e.samples_per_frame == 40 and e.lookahead_samples > 0
            got = [e.push(np.ascontiguousarray(wave[:, :, a:a + 37]))
                   for a in range(0, wave.shape[2], 37)]
            got.append(e.flush())
            assert all(m.shape[:2] == (2, 8) and m.shape == l.shape for m, l in got)
            mean = np.concatenate([m for m, _ in got], axis=2)
            logs = np.concatenate([l for _, l in got], axis=2)
        assert mean.shape == (2, 8, 11), mesh
        assert rel(mean, golden['encode.mean']) < 1e-5 and rel(logs, golden['encode.logs']) < 1e-5
    dec = meshnn.MiniMaxH3AudioVAE.from_pretrained(FOLDER, threads=1, parts='decoder')
    assert rel(dec.decode(z).sample, golden['decode.output']) < 1e-5
    with pytest.raises(ValueError, match='encoder was not loaded'):
        dec.encode(wave)
    enc = meshnn.MiniMaxH3AudioVAE.from_pretrained(FOLDER, threads=1, parts='encoder')
    with pytest.raises(ValueError, match='decoder was not loaded'):
        enc.decode(z)
    with pytest.raises(ValueError, match='parts'):
        meshnn.MiniMaxH3AudioVAE.from_pretrained(FOLDER, parts='vocoder')
    enc.close()
    with pytest.raises(ValueError, match='closed'):
        enc.encode(wave)


def test_cli_encode_stream(golden, tmp_path):
    src = tmp_path / 'x.wav'
    meshnn.write_wav(str(src), golden['encode.wave'][:, 0, :], 32000)
    for args in (['--push-samples', '1'], ['--push-samples', '53', '--mesh', '1x2']):
        out, logs = tmp_path / 'm.npy', tmp_path / 'l.npy'
        run_cli('audio-encode', '--checkpoint', FOLDER, '--wav', src, '--out', out, '--log-std',
                logs, '--stream', '--quiet', *args)
        assert rel(np.load(out), golden['encode.mean']) < 1e-5, args
        assert rel(np.load(logs), golden['encode.logs']) < 1e-5, args
