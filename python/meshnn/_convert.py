"""Tensors across the Python ↔ meshnn boundary.

In: numpy arrays go to the extension as they are; CPU torch tensors become numpy arrays over the
same memory through DLPack (no copy), anything else with __dlpack__ too, the rest via
numpy.asarray (buffer protocol / __array_interface__). The extension then requires float32 and
C-contiguous data and raises ValueError otherwise (it never copies silently).
Out: the extension's arrays own meshnn's buffer; as_torch=True wraps that buffer (no copy).
"""
import sys

import numpy as np


def _torch_module():
    # Only look at torch if the caller already imported it: `import meshnn` never loads torch.
    return sys.modules.get('torch')


def as_array(x, name):
    """x: numpy array, torch tensor or array-like → numpy array over the same memory if possible."""
    if isinstance(x, np.ndarray):
        return x
    torch = _torch_module()
    if torch is not None and isinstance(x, torch.Tensor):
        if x.device.type != 'cpu':
            raise ValueError(f'{name}: tensor is on {x.device}; meshnn runs on the CPU (use .cpu())')
        if x.dtype != torch.float32:
            raise ValueError(f'{name}: expected float32, got {x.dtype} (convert with .float())')
        if not x.is_contiguous():
            raise ValueError(f'{name}: expected a C-contiguous tensor (use x.contiguous())')
        x = x.detach()
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
        try:
            return np.from_dlpack(x)
        except (AttributeError, TypeError, BufferError, RuntimeError):
            return x.numpy()
    if hasattr(x, '__dlpack__') and not isinstance(x, (list, tuple)):
        try:
            return np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError):
            pass
    return np.asarray(x)


def out(arr, as_torch):
    """numpy array from the extension → itself, or a torch tensor sharing its buffer."""
    if not as_torch:
        return arr
    import torch
    return torch.from_numpy(arr)
