"""Tensors across the Python ↔ meshnn boundary.

In: numpy arrays go to the extension as they are; CPU torch tensors become numpy arrays over the
same memory through DLPack (no copy; a non-contiguous tensor is made contiguous first, one copy),
anything else with __dlpack__ too, the rest via numpy.asarray (buffer protocol /
__array_interface__). The extension then requires float32 (ValueError otherwise: a dtype is never
converted silently) and copies a strided array once into a C-contiguous buffer of its own.
Out: the extension's arrays own meshnn's buffer. One rule for every call: torch in → torch out,
numpy in → numpy out (wants_torch); as_torch=True / False overrides it. A torch output wraps the
same buffer (torch.from_numpy, no copy).
"""
import collections.abc
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
        x = x.detach()
        if not x.is_contiguous():
            x = x.contiguous()  # a slice or a transpose, as torch modules take them (one copy)
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
        try:
            return np.from_dlpack(x)
        except (AttributeError, TypeError, BufferError, RuntimeError):
            return x.numpy()
    if isinstance(x, collections.abc.Mapping):
        raise ValueError(f'{name}: expected an array (float32 numpy array or CPU torch tensor), '
                         f'got a {type(x).__name__} with keys {sorted(map(str, x))[:8]}')
    if hasattr(x, '__dlpack__') and not isinstance(x, (list, tuple)):
        try:
            return np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError):
            pass
    return np.asarray(x)


def is_torch(x):
    """True for a torch.Tensor (without importing torch)."""
    return type(x).__module__.split('.')[0] == 'torch'


def wants_torch(x, as_torch):
    """The output kind for input x: as_torch when given (True / False), else torch iff x is."""
    if as_torch is None:
        return is_torch(x)
    if not isinstance(as_torch, bool):
        raise ValueError(f'as_torch must be None, True or False, got {as_torch!r}')
    return as_torch


def out(arr, as_torch):
    """numpy array from the extension → itself, or a torch tensor sharing its buffer."""
    if not as_torch:
        return arr
    import torch
    return torch.from_numpy(arr)
