"""safetensors / .pt loading helpers on top of tools/goldens/st.py (no python3-safetensors in Debian)."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'goldens'))
import st  # noqa: E402


def load_safetensors(path):
    """→ (dict name → torch.float32 tensor, metadata). BF16 is upcast exactly."""
    arrs, meta = st.load(path)
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrs.items()}, meta


def save_safetensors(path, tensors, metadata=None):
    st.save(path, tensors, metadata or {})


def to_bf16(t):
    """Round-to-nearest-even f32 → bf16 (torch's rounding)."""
    return t.detach().float().to(torch.bfloat16)
