#!/usr/bin/python3
"""Seeded random GR00T action-head adapter checkpoints (Isaac-GR00T key names).

    make_gr00t_checkpoint.py --version n1.5 --out ckpt.safetensors [--seed 0] [--bf16]
                             [--small]   # reduced dims (the golden fixtures' config)
                             [--head]    # the whole action head (DiT, action encoder / decoder,
                                         # position embedding, future tokens), not only the adapter
                             [--embodiments E]  # fewer per-embodiment slices (default: the config's)

Only the tensors the adapter reads are written: `action_head.vlln.*`,
`action_head.vl_self_attention.transformer_blocks.{i}.*` (N1.5 / N1.7),
`action_head.model.transformer_blocks.{i}.attn1.to_k/to_v.*` of the cross blocks and
`action_head.state_encoder.layer{1,2}.{W,b}`. The config goes into the safetensors metadata
("config", JSON in Isaac-GR00T field names, and "gr00t_version"), which meshnn reads with the
checkpoint's values winning over the version defaults.

With --head every action-head tensor is written too (tools/gr00t_ref/action_head.py:
head_weight_shapes), and the config gains the head fields (action_dim, action_horizon,
num_target_vision_tokens, max_seq_len, num_inference_timesteps, num_timestep_buckets).

The configs, key lists, random init and the PyTorch reference live in tools/gr00t_ref/ (one
package for the goldens, benchmarks and this writer).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'goldens'))
import st  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gr00t_ref import action_head as ah  # noqa: E402
from gr00t_ref.adapter import VERSIONS, default_config, random_checkpoint, small_config  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--version', choices=VERSIONS, required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--bf16', action='store_true', help='store the weights as bf16 (N1.6 / N1.7 head dtype)')
    ap.add_argument('--small', action='store_true', help='reduced dims (the golden fixtures\' config)')
    ap.add_argument('--head', action='store_true', help='write the whole action head, not only the adapter')
    ap.add_argument('--embodiments', type=int, default=None, help='max_num_embodiments override')
    a = ap.parse_args()
    c = small_config(a.version) if a.small else default_config(a.version)
    if a.embodiments:
        c['max_num_embodiments'] = a.embodiments
    if a.head:
        ah.add_head_config(c, small=a.small)
    W = random_checkpoint(c, a.seed, head=a.head)
    if a.bf16:
        W = {k: v.to(torch.bfloat16) for k, v in W.items()}
    st.save(a.out, W, {'config': json.dumps(c, sort_keys=True), 'gr00t_version': a.version,
                       'format': 'pt'})
    print(f'{a.out}: {len(W)} tensors, {sum(v.numel() for v in W.values())} parameters')


if __name__ == '__main__':
    main()
