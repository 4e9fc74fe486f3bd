"""examples/python/ run end to end on small checkpoints (what docs/python.md shows)."""
import json
import os
import subprocess
import sys

import numpy as np

import meshnn
from conftest import SRC, fixture, import_torch

EX = os.path.join(SRC, 'examples', 'python')


def run(script, *args):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([os.path.dirname(os.path.dirname(meshnn.__file__)),
                                         env.get('PYTHONPATH', '')])
    r = subprocess.run([sys.executable, os.path.join(EX, script), *map(str, args)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, f'{script} failed:\n{r.stdout}\n{r.stderr}'
    return r.stdout


def test_vocode_wav_example(bigvgan_folder, tmp_path):
    sr = json.load(open(bigvgan_folder / 'config.json'))['sampling_rate']
    t = np.arange(sr // 2) / sr
    meshnn.write_wav(tmp_path / 'in.wav', (0.4 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), sr)
    out = run('vocode_wav.py', bigvgan_folder, tmp_path / 'in.wav', tmp_path / 'out.wav')
    assert 'real-time factor' in out
    y, sr_out = meshnn.read_wav(tmp_path / 'out.wav')
    assert sr_out == sr and y.shape[0] == 1 and y.shape[1] > 0


def test_decode_ltx_latent_example(tmp_path):
    np.save(tmp_path / 'lat.npy', np.random.default_rng(5).standard_normal((8, 10, 16), np.float32))
    out = run('decode_ltx_latent.py', tmp_path / 'out.wav', '--checkpoint',
              fixture('ltx23_small.safetensors'), '--latent', tmp_path / 'lat.npy')
    assert 'ltx-2.3' in out
    y, sr = meshnn.read_wav(tmp_path / 'out.wav')
    assert sr == 48000 and y.shape[0] == 2


def test_timing_example():
    import_torch()
    out = run('timing_vs_pytorch.py', 'bigvgan', fixture('bigvgan_v2_24k_small.safetensors'),
              '--seconds', '0.3', '--repeat', '1')
    res = json.loads(out.strip().splitlines()[-1])
    assert res['psnr_db'] >= 100
