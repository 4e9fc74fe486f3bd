#!/usr/bin/python3
"""torch.save fixtures for the weights-only .pt reader (src/io/torch_checkpoint.cc).

Usage: gen_torch_checkpoints.py OUT_DIR. Writes:
  bigvgan_nvidia_folder/config.json            NVIDIA's folder as BigVGAN._save_pretrained writes it:
  bigvgan_nvidia_folder/bigvgan_generator.pt   json.dump(h, indent=4) and torch.save({'generator':
                                               state_dict}), the generator of
                                               bigvgan_v2_24k_small.safetensors (weight_g / weight_v,
                                               values and dtypes as stored there: bf16 parameters, f32
                                               filters), so both load to the same bits
  torch_checkpoint/dtypes.pt                   a flat state dict: every dtype the reader takes, a
                                               transposed (strided) tensor, a storage offset, two
                                               tensors on one storage, a Parameter, a 0-d and an empty
                                               tensor; values are closed formulas the C++ test checks
The generator weights are read from OUT_DIR/bigvgan_v2_24k_small.safetensors when gen_bigvgan.py
wrote it there, else from tests/fixtures/.
"""
import collections
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import st  # noqa: E402

SMALL = 'bigvgan_v2_24k_small.safetensors'
GOLDEN_PREFIXES = ('input.', 'output', 'bigvgan.')


def state_dict(items):
    """An OrderedDict carrying `_metadata` like nn.Module.state_dict() (pickled with BUILD)."""
    sd = collections.OrderedDict(items)
    sd._metadata = collections.OrderedDict({'': {'version': 1}})
    return sd


def nvidia_folder(out_dir):
    src = os.path.join(out_dir, SMALL)
    if not os.path.isfile(src):
        src = os.path.join(HERE, '..', '..', 'tests', 'fixtures', SMALL)
    tensors, meta = st.load(src)  # BF16 comes back as float32 (exact): cast back to the stored dtype
    with open(src, 'rb') as f:
        header = json.loads(f.read(struct.unpack('<Q', f.read(8))[0]))
    gen = [(k, torch.from_numpy(v).to(torch.bfloat16 if header[k]['dtype'] == 'BF16' else torch.float32))
           for k, v in sorted(tensors.items()) if not k.startswith(GOLDEN_PREFIXES)]
    folder = os.path.join(out_dir, 'bigvgan_nvidia_folder')
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(json.loads(meta['config']), f, indent=4)
    torch.save({'generator': state_dict(gen)}, os.path.join(folder, 'bigvgan_generator.pt'))


def dtypes_file(out_dir):
    base = torch.arange(12, dtype=torch.float64).reshape(3, 4) * 0.5 - 1.0  # -1, -0.5, …, 4.5
    shared = torch.arange(10, dtype=torch.float32) * 0.25
    items = [
        ('f32', base.float()),
        ('f16', base.half()),
        ('bf16', base.bfloat16()),
        ('f64', base.clone()),
        ('i64', torch.arange(-3, 3, dtype=torch.int64)),
        ('i32', torch.arange(-3, 3, dtype=torch.int32)),
        ('u8', torch.arange(250, 256, dtype=torch.uint8)),
        ('bool', torch.tensor([True, False, True])),
        ('transposed', base.float().t()),          # (4, 3), strides (1, 4)
        ('shared.head', shared[:4]),               # one storage: offset 0
        ('shared.tail', shared[6:]),               # offset 6
        ('param', torch.nn.Parameter(torch.full((2, 2), 1.5))),
        ('scalar', torch.tensor(7.25)),
        ('empty', torch.zeros(0, 3)),
    ]
    folder = os.path.join(out_dir, 'torch_checkpoint')
    os.makedirs(folder, exist_ok=True)
    torch.save(state_dict(items), os.path.join(folder, 'dtypes.pt'))


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: gen_torch_checkpoints.py OUT_DIR')
    out_dir = sys.argv[1]
    nvidia_folder(out_dir)
    dtypes_file(out_dir)
    for f in ('bigvgan_nvidia_folder/bigvgan_generator.pt', 'torch_checkpoint/dtypes.pt'):
        print(f'  {f} {os.path.getsize(os.path.join(out_dir, f)) / 1024:.0f} KiB')


if __name__ == '__main__':
    main()
