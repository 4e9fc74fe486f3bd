"""Every ```python block of docs/python.md and docs/models.md runs as written, against the tiny
fixture models, so a docs example cannot rot again (issue 35: the H3 stream examples pushed
slices the module refused).

The convention (also stated in docs/python.md, "Examples and tests"): the blocks of one page run
in order in one namespace, in a temporary folder where each placeholder path of the docs is the
fixture of that kind (PLACEHOLDERS below), and the names the prose leaves to the reader (`latents`,
`features`, `play`, ...) are stand-ins of the shapes the fixture models take (stand_ins below).
Blocks that import torch are skipped without torch (an error under MESHNN_REQUIRE_TORCH=1).
"""
import contextlib
import io
import json
import os
import re

import numpy as np
import pytest

import meshnn
from conftest import SRC, fixture
from meshnn._safetensors import load_safetensors

PAGES = ['docs/python.md', 'docs/models.md']
FENCE = re.compile(r'^```python\s*$')


def python_blocks(page):
    """page → [(first line number, code)] of its ```python blocks."""
    lines = open(os.path.join(SRC, page), encoding='utf-8').read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            j = i + 1
            while not lines[j].startswith('```'):
                j += 1
            blocks.append((i + 2, '\n'.join(lines[i + 1:j])))
            i = j
        i += 1
    return blocks


def link(src, dst):
    os.makedirs(os.path.dirname(dst) or '.', exist_ok=True)
    os.symlink(src, dst)


def lay_out_placeholders(root):
    """The docs' placeholder paths under root, each the tiny fixture of its kind."""
    bv = fixture('bigvgan_v2_24k_small.safetensors')
    _, meta = load_safetensors(bv)
    folder = os.path.join(root, 'bigvgan_v2_24khz_100band_256x')
    os.makedirs(folder)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        f.write(meta['config'])
    link(bv, os.path.join(folder, 'bigvgan_generator.safetensors'))
    rng = np.random.default_rng(35)
    sr = json.loads(meta['config'])['sampling_rate']
    meshnn.write_wav(os.path.join(root, 'speech_24k_mono.wav'),
                     rng.uniform(-0.5, 0.5, (1, sr // 10)).astype(np.float32), sr)
    link(fixture('ltx23_small.safetensors'), os.path.join(root, 'ltx-2.3-audio.safetensors'))
    np.save(os.path.join(root, 'audio_latent.npy'),
            rng.standard_normal((1, 8, 6, 16)).astype(np.float32))
    h3 = fixture('minimax_h3_tiny')
    link(h3, os.path.join(root, 'MiniMax-H3', 'audio_vae'))
    link(h3, os.path.join(root, 'path', 'to', 'checkpoint-or-folder'))
    head = fixture('gr00t_head_n1_6.safetensors')
    link(head, os.path.join(root, 'action_head.safetensors'))
    t, _ = load_safetensors(head)
    np.save(os.path.join(root, 'token_types.npy'), t['input.token_types'])
    np.save(os.path.join(root, 'backbone_features.npy'), t['input.features'])
    np.save(os.path.join(root, 'state.npy'), t['input.state'])
    return t


def stand_ins(gr00t_inputs):
    """Names the docs leave to the reader, shaped for the fixtures (H3 tiny: 8 latent channels,
    hop 40; GR00T N1.6 head fixture)."""
    rng = np.random.default_rng(13)
    ns = {}
    ns['latents'] = rng.standard_normal((2, 8, 12)).astype(np.float32)
    ns['x'] = rng.standard_normal((1, 8, 10)).astype(np.float32)
    ns['wave'] = rng.uniform(-0.5, 0.5, (1, 1, 400)).astype(np.float32)
    ns['noise'] = gr00t_inputs['input.noise']
    ns['text'] = 'a sentence'
    played = ns['played'] = []
    ns['play'] = played.append

    def acoustic_model(text):
        import torch
        g = torch.Generator().manual_seed(len(text))
        return torch.rand((1, ns['vocoder'].num_mels, 12), generator=g) * 6 - 5

    def frames_as_they_come():
        mel = rng.uniform(-5, 1, (1, ns['vocoder'].num_mels, 20)).astype(np.float32)
        for a in range(0, 20, 7):
            yield mel[:, :, a:a + 7]

    ns['acoustic_model'] = acoustic_model
    ns['frames_as_they_come'] = frames_as_they_come
    return ns


def has_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        if os.environ.get('MESHNN_REQUIRE_TORCH') == '1':
            raise
        return False


@pytest.mark.parametrize('page', PAGES)
def test_docs_python_blocks_run_as_written(page, tmp_path, monkeypatch):
    blocks = python_blocks(page)
    assert blocks, f'{page}: no python blocks found'
    inputs = lay_out_placeholders(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    ns = stand_ins(inputs)
    ns['__name__'] = '__docs__'
    torch_ok = has_torch()
    ran = 0
    for line, code in blocks:
        if 'import torch' in code and not torch_ok:
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, f'{page}:{line}', 'exec'), ns)
        except Exception as e:  # noqa: BLE001 - reported with the block's place
            pytest.fail(f'{page}, the python block at line {line} fails as written: '
                        f'{type(e).__name__}: {e}')
        ran += 1
    assert ran >= (len(blocks) if torch_ok else 1)
    if page == 'docs/python.md':
        # The stream blocks ran: samples came out of each push and flush.
        assert ns['played'] and all(np.asarray(p).dtype == np.float32 for p in ns['played'])


def test_the_h3_stream_example_equals_one_shot(tmp_path, monkeypatch):
    """docs/models.md's H3 stream block (pushes of z[:, :, t:t + 4], strided slices) gives what
    the one-shot decode gives, to f32 rounding."""
    (_, code), = [(n, c) for n, c in python_blocks('docs/models.md') if 'vae.stream()' in c]
    inputs = lay_out_placeholders(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    ns = stand_ins(inputs)
    exec(compile(code, 'docs/models.md', 'exec'), ns)
    got = np.concatenate(ns['parts'], axis=2)
    want = ns['vae'].decode(np.ascontiguousarray(ns['z'])).sample
    assert got.shape == want.shape and np.abs(got - want).max() <= 4e-6
