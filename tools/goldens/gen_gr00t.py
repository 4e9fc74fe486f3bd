#!/usr/bin/python3
"""Goldens for the GR00T VL adapter (tests/models/gr00t_adapter_test.cc): one fixture per version,
gr00t_adapter_<n1_5|n1_6|n1_7>.safetensors, holding a reduced-dim random checkpoint (Isaac-GR00T
key names, config in the metadata), the inputs and every tap / output of the PyTorch reference
(tools/gr00t_ref/adapter.py: adapter_forward, written from the adapter's specification; docs/gr00t.md).

The reference runs in float64 on the f32 weights and inputs and is stored as f32, so the test's
tolerance measures our f32 error against the exact result. Small on purpose: 40 tokens, dim 48,
4 VL-SA blocks, 2 or 4 cross blocks, 4 embodiments (~0.4 MB per file).

usage: gen_gr00t.py OUT_DIR
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import st  # noqa: E402
from gr00t_ref import adapter as g  # noqa: E402

S = 40
# text [0, 5) | image [5, 29) | text [29, 40); N1.7 also has a padding token (type 2) at 38.
TYPES = [0] * 5 + [1] * 24 + [0] * 11


def make(version, out_dir, seed):
    torch.manual_seed(seed)
    c = g.small_config(version)
    W = g.random_checkpoint(c, seed)
    types = list(TYPES)
    if version == 'n1.7':
        types[38] = 2
    token_types = torch.tensor(types, dtype=torch.int64)
    D = c['backbone_embedding_dim']
    gen = torch.Generator().manual_seed(seed + 1)
    features = torch.randn(S, D, generator=gen, dtype=torch.float32) * 2 + 0.5
    # One state narrower than max_state_dim (zero padding is part of the contract).
    d = c['max_state_dim'] - (3 if version == 'n1.6' else 0)
    state = torch.randn(d, generator=gen, dtype=torch.float32)
    embodiment = 2
    W64 = {k: v.double() for k, v in W.items()}
    ref = g.adapter_forward(c, W64, features.double(), token_types, state.double(), embodiment)
    tensors = dict(W)
    tensors['input.features'] = features.unsqueeze(0)
    tensors['input.token_types'] = token_types
    tensors['input.state'] = state.reshape(1, 1, d)
    for k, v in ref.items():
        t = v.float()
        if t.dim() == 2 and not k.startswith('vl_set.'):
            t = t.unsqueeze(0)  # token-order taps (1, S, D)
        tensors['golden.' + k] = t.contiguous()
    md = {'config': json.dumps(c, sort_keys=True), 'gr00t_version': version,
          'embodiment': str(embodiment), 'generator': 'tools/goldens/gen_gr00t.py'}
    path = os.path.join(out_dir, 'gr00t_adapter_' + version.replace('.', '_') + '.safetensors')
    st.save(path, tensors, md)
    print(f'{path}: {os.path.getsize(path)} bytes')


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for i, v in enumerate(g.VERSIONS):
        make(v, out_dir, 1000 + i)


if __name__ == '__main__':
    main()
