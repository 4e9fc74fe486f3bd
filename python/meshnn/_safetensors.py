"""A minimal safetensors writer (numpy only; Debian has no python3-safetensors)."""
import json
import struct

import numpy as np

_DT = {np.dtype('float32'): 'F32', np.dtype('float64'): 'F64', np.dtype('int64'): 'I64',
       np.dtype('int32'): 'I32', np.dtype('uint8'): 'U8', np.dtype('float16'): 'F16'}


def save_safetensors(path, tensors, metadata=None):
    """tensors: {name: numpy array}; metadata: {str: str}."""
    header, off, blobs = {}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder('<'), copy=False)
        if a.dtype not in _DT:
            raise ValueError(f'{name}: dtype {a.dtype} cannot be written')
        n = a.nbytes
        header[name] = {'dtype': _DT[a.dtype], 'shape': list(a.shape), 'data_offsets': [off, off + n]}
        blobs.append(a)
        off += n
    if metadata:
        header['__metadata__'] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for a in blobs:
            f.write(a.tobytes())


_NP = {'F32': np.float32, 'F64': np.float64, 'I64': np.int64, 'I32': np.int32, 'U8': np.uint8,
       'F16': np.float16, 'BOOL': np.bool_, 'I8': np.int8, 'I16': np.int16}


def load_safetensors(path):
    """→ ({name: numpy array}, metadata). BF16 is upcast to float32 exactly."""
    with open(path, 'rb') as f:
        data = f.read()
    (n,) = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop('__metadata__', {}) or {}
    base = 8 + n
    out = {}
    for name, d in header.items():
        a, b = d['data_offsets']
        raw = data[base + a:base + b]
        if d['dtype'] == 'BF16':
            u = np.frombuffer(raw, dtype='<u2').astype(np.uint32) << 16
            arr = u.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_NP[d['dtype']]).newbyteorder('<')).copy()
        out[name] = arr.reshape(d['shape'])
    return out, meta
