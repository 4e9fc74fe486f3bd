#!/usr/bin/python3
"""Fixture for the io/ tests: tensors whose values the C++ test recomputes without numpy.

Writes <out>/io_roundtrip.safetensors. Values are arange-based so that they are exact in every
dtype (bf16 values are multiples of 1/8 below 32, exactly representable):
  f32   (2, 3, 4)  arange(24) * 0.25 - 3
  bf16  (4, 8)     arange(32) * 0.125 - 2
  f16   (5,)       arange(5) * 0.5 - 1
  f64   (3, 3)     arange(9) / 3
  i64   (6,)       arange(6) * 1_000_000_007 - 2**40
  i32   (2, 2)     arange(4) * -7 + 3
  u8    (7,)       arange(7) * 37 % 256
  bool  (5,)       arange(5) % 2 == 1
plus __metadata__ {"format": "pt", "generator": "gen_io.py"}.

Also .npy files written by numpy.save, to check our reader and that our writer is byte-identical:
  io_sample_f32.npy  (2, 3) f32  arange(6) * 0.5 - 1
  io_sample_i64.npy  (5,)   i64  arange(5) * 3 - 7
  io_sample_f64.npy  ()     f64  2.5
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def main(out):
    tensors = {
        'a.f32': torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) * 0.25 - 3,
        'b.bf16': (torch.arange(32, dtype=torch.float32) * 0.125 - 2).to(torch.bfloat16).reshape(4, 8),
        'c.f16': torch.arange(5, dtype=torch.float16) * 0.5 - 1,
        'd.f64': (torch.arange(9, dtype=torch.float64) / 3).reshape(3, 3),
        'e.i64': torch.arange(6, dtype=torch.int64) * 1_000_000_007 - 2**40,
        'f.i32': (torch.arange(4, dtype=torch.int32) * -7 + 3).reshape(2, 2),
        'g.u8': (torch.arange(7, dtype=torch.int64) * 37 % 256).to(torch.uint8),
        'h.bool': torch.arange(5) % 2 == 1,
    }
    st.save(os.path.join(out, 'io_roundtrip.safetensors'), tensors,
            {'format': 'pt', 'generator': 'gen_io.py'})
    np.save(os.path.join(out, 'io_sample_f32.npy'), (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3))
    np.save(os.path.join(out, 'io_sample_i64.npy'), np.arange(5, dtype=np.int64) * 3 - 7)
    np.save(os.path.join(out, 'io_sample_f64.npy'), np.array(2.5, dtype=np.float64))


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'tests/fixtures')
