#!/usr/bin/python3
"""Inputs and the difference check of tools/bit_identity.sh.

  bit_identity_inputs.py GR00T_FIXTURE      writes the seeded inputs into the current folder
  bit_identity_inputs.py --diff A B         prints max |A - B| of two .npy or float32 WAV files;
                                            exit 1 when the shapes differ or it is above 1e-6
"""
import json
import struct
import sys
import wave

import numpy as np


def write_inputs(gr00t_fixture):
    r = np.random.default_rng(7)
    np.save('ltx_latent.npy', r.standard_normal((1, 8, 100, 16)).astype(np.float32))  # 4 s
    np.save('mel.npy', (r.standard_normal((100, 375)) - 5).astype(np.float32))  # 4 s, 24 kHz
    np.save('h3_latent.npy', r.standard_normal((2, 32, 160)).astype(np.float32))  # 4 s stereo
    t = np.arange(4 * 32000) / 32000.0  # MiniMax-H3 runs at 32 kHz
    x = np.stack([0.3 * np.sin(2 * np.pi * 220 * t), 0.2 * np.sin(2 * np.pi * 330 * t)], 1)
    x = x + 0.01 * r.standard_normal(x.shape)
    with wave.open('stereo.wav', 'wb') as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(32000)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype('<i2').tobytes())
    # The GR00T fixture carries its inputs (input.*) beside the weights.
    b = open(gr00t_fixture, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    head = json.loads(b[8:8 + n])
    for k in ('features', 'token_types', 'state', 'noise'):
        e = head['input.' + k]
        lo, hi = e['data_offsets']
        dt = {'F32': '<f4', 'I64': '<i8'}[e['dtype']]
        np.save(k + '.npy', np.frombuffer(b[8 + n + lo:8 + n + hi], dt).reshape(e['shape']))
    with open('embodiment', 'w') as f:
        f.write(head['__metadata__']['embodiment'])


def load(path):
    if path.endswith('.npy'):
        return np.load(path).astype(np.float64)
    # A float32 WAV (format 3), which the wave module does not read: walk the RIFF chunks.
    b = open(path, 'rb').read()
    pos, channels = 12, 1
    while pos + 8 <= len(b):
        tag, size = b[pos:pos + 4], struct.unpack('<I', b[pos + 4:pos + 8])[0]
        body = b[pos + 8:pos + 8 + size]
        if tag == b'fmt ':
            channels = struct.unpack('<H', body[2:4])[0]
        elif tag == b'data':
            return np.frombuffer(body, '<f4').reshape(-1, channels).astype(np.float64)
        pos += 8 + size + (size & 1)
    raise ValueError(path + ': no data chunk')


def main():
    if sys.argv[1] == '--diff':
        a, b = load(sys.argv[2]), load(sys.argv[3])
        if a.shape != b.shape:
            print(f'    shapes differ: {a.shape} vs {b.shape}')
            return 1
        d = float(np.max(np.abs(a - b))) if a.size else 0.0
        print(f'    max |diff| {d:.3g} over {a.size} values')
        return 0 if d <= 1e-6 else 1
    write_inputs(sys.argv[1])
    return 0


if __name__ == '__main__':
    sys.exit(main())
