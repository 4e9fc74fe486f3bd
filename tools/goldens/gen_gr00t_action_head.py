#!/usr/bin/python3
"""Goldens for the GR00T action head (tests/models/gr00t_action_head_test.cc): one fixture per
version, gr00t_head_<n1_5|n1_6|n1_7>.safetensors, holding a reduced-dim random checkpoint of the
whole head (adapter + DiT + action encoder / decoder, Isaac-GR00T key names, config in the
metadata), the inputs (backbone features, token types, state, embodiment, the initial noise) and
the PyTorch reference's outputs: the velocity of every Euler step and the final actions
(tools/gr00t_ref/action_head.py on top of gr00t_ref/adapter.py: adapter_forward).

The reference runs in float64 on the f32 weights and inputs and is stored as f32. N1.6 also has a
3-step run (buckets 0, 333, 666) under `golden3.`.

usage: gen_gr00t_action_head.py OUT_DIR
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
from gr00t_ref import action_head as ah  # noqa: E402

S = 40
TYPES = [0] * 5 + [1] * 24 + [0] * 11


def make(version, out_dir, seed):
    c = ah.add_head_config(g.small_config(version), small=True)
    # fewer / narrower VL-SA blocks than the adapter fixtures: the head is what is tested here
    c['vl_self_attention_cfg'].update(num_layers=2 if version != 'n1.6' else 0, ff_inner_dim=96)
    W = g.random_checkpoint(c, seed, head=True)
    types = list(TYPES)
    if version == 'n1.7':
        types[38] = 2
    token_types = torch.tensor(types, dtype=torch.int64)
    D = c['backbone_embedding_dim']
    gen = torch.Generator().manual_seed(seed + 1)
    features = torch.randn(S, D, generator=gen, dtype=torch.float32) * 2 + 0.5
    d = c['max_state_dim'] - (3 if version == 'n1.6' else 0)
    state = torch.randn(d, generator=gen, dtype=torch.float32)
    noise = torch.randn(c['action_horizon'], c['action_dim'], generator=gen, dtype=torch.float32)
    embodiment = 2
    W64 = {k: v.double() for k, v in W.items()}
    ad = g.adapter_forward(c, W64, features.double(), token_types, state.double(), embodiment)
    vl = ad['dit_encoder_hidden_states']
    tensors = dict(W)
    tensors['input.features'] = features.unsqueeze(0)
    tensors['input.token_types'] = token_types
    tensors['input.state'] = state.reshape(1, 1, d)
    tensors['input.noise'] = noise.unsqueeze(0)
    runs = [('golden.', 4)] + ([('golden3.', 3)] if version == 'n1.6' else [])
    for pre, steps in runs:
        x, vels = ah.get_action(c, W64, vl, token_types, ad['state_features'], embodiment, noise.double(), steps)
        # the cached-K/V variant is the same computation
        x2, _ = ah.get_action(c, W64, vl, token_types, ad['state_features'], embodiment, noise.double(), steps,
                              cache_kv=True)
        assert torch.allclose(x, x2, rtol=0, atol=1e-12)
        tensors[pre + 'actions'] = x.float().unsqueeze(0).contiguous()
        for k, v in enumerate(vels):
            tensors[f'{pre}velocity.{k}'] = v.float().unsqueeze(0).contiguous()
    md = {'config': json.dumps(c, sort_keys=True), 'gr00t_version': version,
          'embodiment': str(embodiment), 'generator': 'tools/goldens/gen_gr00t_action_head.py'}
    path = os.path.join(out_dir, 'gr00t_head_' + version.replace('.', '_') + '.safetensors')
    st.save(path, tensors, md)
    print(f'{path}: {os.path.getsize(path)} bytes')


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for i, v in enumerate(g.VERSIONS):
        make(v, out_dir, 2000 + i)


if __name__ == '__main__':
    main()
