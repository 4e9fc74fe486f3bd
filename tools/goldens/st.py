#!/usr/bin/python3
"""Minimal safetensors writer/reader for golden fixtures (Debian has no python3-safetensors).

Tensors are written in sorted key order with 8-byte-aligned offsets, so regenerating a fixture
from the same seed reproduces the file byte for byte (checked by `make goldens-check`).
"""
import json
import struct

import numpy as np

_DT = {np.dtype('float32'): 'F32', np.dtype('float64'): 'F64', np.dtype('int64'): 'I64',
       np.dtype('int32'): 'I32', np.dtype('uint8'): 'U8', np.dtype('bool'): 'BOOL',
       np.dtype('float16'): 'F16'}
_NP = {v: k for k, v in _DT.items()}


def _to_numpy(t):
    try:
        import torch
        if isinstance(t, torch.Tensor):
            if t.dtype == torch.bfloat16:
                return ('BF16', t.contiguous().view(torch.int16).numpy().view(np.uint16))
            t = t.detach().contiguous().numpy()
    except ImportError:
        pass
    a = np.ascontiguousarray(t)
    return (_DT[a.dtype], a)


def save(path, tensors, metadata=None):
    """tensors: dict name -> torch.Tensor | np.ndarray; metadata: dict str -> str."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        dt, a = _to_numpy(tensors[name])
        b = a.astype(a.dtype.newbyteorder('<')).tobytes()
        header[name] = {'dtype': dt, 'shape': list(a.shape), 'data_offsets': [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header['__metadata__'] = {str(k): str(v) for k, v in sorted(metadata.items())}
    h = json.dumps(header, separators=(',', ':'), sort_keys=True).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load(path):
    """Returns (dict name -> np.ndarray, metadata dict). BF16 is returned as float32."""
    with open(path, 'rb') as f:
        data = f.read()
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop('__metadata__', {})
    base = 8 + n
    out = {}
    for name, info in header.items():
        s, e = info['data_offsets']
        raw = data[base + s:base + e]
        if info['dtype'] == 'BF16':
            a = (np.frombuffer(raw, dtype='<u2').astype(np.uint32) << 16).view(np.float32)
        else:
            a = np.frombuffer(raw, dtype=_NP[info['dtype']].newbyteorder('<'))
        out[name] = a.reshape(info['shape']).copy()
    return out, meta
