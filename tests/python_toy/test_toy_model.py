"""Python's generic AudioModel over a model defined outside src/models: the toy audio VAE of
tests/support/toy_model, registered in a test build of the module (build/python_toy). The calls
every model gets, with no Python line of the toy's own: identify, load, decode on one device and a
1x2 mesh, a stream on random cuts, encode with the log std, an encode stream; and the decode equals
the toy CLI's WAV (meshnn-toy audio-decode)."""
import os
import subprocess
import struct

import numpy as np
import pytest

import meshnn

BIN = os.environ.get('MESHNN_BINARY_DIR', '')


@pytest.fixture(scope='module')
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp('toy') / 'model'
    subprocess.run([os.path.join(BIN, 'write-toy-folder'), str(d), '17'], check=True)
    return d


@pytest.fixture(scope='module')
def toy(folder):
    return meshnn.AudioModel.load(folder, threads=1)


@pytest.fixture
def rng():
    return np.random.default_rng(int.from_bytes(os.urandom(4), 'little'))


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def read_f32_wav(path):
    """(channels, samples) of a float32 WAV, walking its RIFF chunks."""
    b = open(path, 'rb').read()
    pos, channels = 12, 1
    while pos + 8 <= len(b):
        tag, size = b[pos:pos + 4], struct.unpack('<I', b[pos + 4:pos + 8])[0]
        if tag == b'fmt ':
            channels = struct.unpack('<H', b[pos + 10:pos + 12])[0]
        elif tag == b'data':
            return np.frombuffer(b[pos + 8:pos + 8 + size], '<f4').reshape(-1, channels).T
        pos += 8 + size + (size & 1)
    raise ValueError('no data chunk')


def test_the_toy_is_registered_identified_and_loaded(folder, toy):
    assert 'toy-audio-vae' in meshnn.AudioModel.registered()
    assert meshnn.AudioModel.identify(folder) == 'toy-audio-vae'
    assert toy.model == 'toy-audio-vae'
    assert toy.has_encoder and toy.can_stream and toy.parameters > 0


def test_decode_on_a_mesh_and_as_a_stream_equal_one_shot(toy, rng):
    C = toy.input_spec['shape'][1]
    z = (0.5 * rng.standard_normal((2, C, 23))).astype(np.float32)
    one = toy(z, mesh='1x1')
    assert one.shape[0] == 2 and np.all(np.isfinite(one)) and np.std(one) > 0
    assert rel_l2(toy(z, mesh='1x2', threads=1), one) <= 2e-6
    cuts = sorted(rng.choice(np.arange(1, 23), size=4, replace=False))
    bounds = [0, *cuts, 23]
    with toy.stream() as s:
        got = [s.push(z[:, :, a:b]) for a, b in zip(bounds, bounds[1:])]
        got.append(s.flush())
    assert rel_l2(np.concatenate(got, axis=-1), one) <= 1e-5


def test_encode_and_the_encode_stream_agree(toy, rng):
    hop = toy.output_samples(1)
    wave = (0.3 * rng.standard_normal((2, 1, 40 * hop + 7))).astype(np.float32)
    mean, logs = toy.encode(wave, log_std=True)
    assert mean.shape[0] == 2 and logs.shape == mean.shape
    with toy.encode_stream() as s:
        parts = [s.push(wave[:, :, :5 * hop + 3]), s.push(wave[:, :, 5 * hop + 3:]), s.flush()]
    assert rel_l2(np.concatenate([p[0] for p in parts], axis=-1), mean) <= 1e-5
    assert rel_l2(np.concatenate([p[1] for p in parts], axis=-1), logs) <= 1e-5


def test_decode_equals_the_toy_cli(folder, toy, rng, tmp_path):
    C = toy.input_spec['shape'][1]
    z = (0.5 * rng.standard_normal((1, C, 19))).astype(np.float32)
    np.save(tmp_path / 'z.npy', z)
    subprocess.run([os.path.join(BIN, 'meshnn-toy'), 'audio-decode', '--checkpoint', str(folder),
                    '--latent', str(tmp_path / 'z.npy'), '--out', str(tmp_path / 'y.wav'),
                    '--threads', '1', '--mesh', '1x1', '--quiet'], check=True)
    cli = read_f32_wav(tmp_path / 'y.wav')
    ours = toy(z, mesh='1x1').reshape(cli.shape)
    np.testing.assert_array_equal(ours, cli)
