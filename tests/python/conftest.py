"""Shared fixtures of the Python module's tests (run by CTest as `python_module`, or by hand:
PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python)."""
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get('MESHNN_SOURCE_DIR', os.path.abspath(os.path.join(HERE, '..', '..')))
BUILD = os.environ.get('MESHNN_BINARY_DIR', os.path.join(SRC, 'build'))
FIXTURES = os.path.join(SRC, 'tests', 'fixtures')
TOOLS = os.path.join(SRC, 'tools')

try:
    import meshnn  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(BUILD, 'python'))
    import meshnn  # noqa: F401


def fixture(name):
    return os.path.join(FIXTURES, name)


def cli_path():
    return os.environ.get('MESHNN_CLI', os.path.join(BUILD, 'meshnn'))


def run_cli(*args):
    cli = cli_path()
    if not os.path.isfile(cli):
        pytest.skip(f'the meshnn CLI is not built ({cli})')
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f'meshnn {" ".join(map(str, args))} failed:\n{r.stdout}\n{r.stderr}'
    return r


def import_torch():
    """torch, or skip (an error instead when MESHNN_REQUIRE_TORCH=1, as `make test` sets)."""
    try:
        import torch
        return torch
    except ImportError:
        if os.environ.get('MESHNN_REQUIRE_TORCH') == '1':
            raise
        pytest.skip('torch is not importable (install python3-torch)')


def psnr_db(got, ref):
    """Peak signal-to-noise ratio of got against ref, peak = max |ref|."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    mse = np.mean((got - ref) ** 2)
    peak = np.max(np.abs(ref))
    return float('inf') if mse == 0 else 10 * np.log10(peak ** 2 / mse)


@pytest.fixture
def rng(request):
    # Fresh random inputs per test, reproducible from the test's name.
    return np.random.default_rng(abs(hash(request.node.name)) % (2 ** 32))


@pytest.fixture(scope='session')
def bigvgan():
    return meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'))


@pytest.fixture(scope='session')
def ltx23():
    return meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx23_small.safetensors'))


@pytest.fixture(scope='session')
def ltx2():
    return meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx2_small.safetensors'))


@pytest.fixture(scope='session')
def bigvgan_folder(tmp_path_factory):
    """NVIDIA's folder layout (config.json + bigvgan_generator.pt + our .safetensors), small
    random weights written by tools/make_checkpoint.py (needs torch)."""
    import_torch()
    out = tmp_path_factory.mktemp('bigvgan_folder')
    subprocess.run([sys.executable, os.path.join(TOOLS, 'make_checkpoint.py'), 'bigvgan', str(out),
                    '--config', 'bigvgan_v2_24khz_100band_256x', '--small', '--pt', '--no-check',
                    '--seed', '7'], check=True, capture_output=True)
    return out
