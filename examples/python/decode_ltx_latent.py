#!/usr/bin/python3
"""Decode an LTX-2.3 (or LTX-2) audio latent to a stereo WAV with meshnn.

  decode_ltx_latent.py --checkpoint LTX.safetensors --latent LATENT.npy OUT.wav
  decode_ltx_latent.py --random-seconds 2 OUT.wav       # random LTX-2.3 weights and latent

  [--mesh auto|RxC] [--precision fp32|bf16|bf16x2|bf16x3] [--threads N] [--chunk-frames N]

The latent is (1, 8, T, 16) or (8, T, 16) float32 (25 frames per second), as ltx-core's
decode_audio takes it; the output is (1, 2, samples) at 48 kHz (24 kHz for LTX-2).
"""
import argparse
import sys
import time

import numpy as np

import meshnn


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out')
    ap.add_argument('--checkpoint')
    ap.add_argument('--latent')
    ap.add_argument('--random-seconds', type=float, default=None)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--mesh', default='auto')
    ap.add_argument('--precision', default='fp32')
    ap.add_argument('--threads', type=int, default=None)
    ap.add_argument('--chunk-frames', type=int, default=None)
    a = ap.parse_args(argv)

    if a.checkpoint:
        decoder = meshnn.LtxAudioDecoder.from_checkpoint(a.checkpoint, mesh=a.mesh,
                                                         precision=a.precision, threads=a.threads)
    else:
        decoder = meshnn.LtxAudioDecoder.random_ltx23(a.seed, mesh=a.mesh, precision=a.precision,
                                                      threads=a.threads)
    if a.latent:
        latent = np.load(a.latent).astype(np.float32)
        if latent.ndim == 3:
            latent = latent[None]
    else:
        frames = max(1, round(25 * (a.random_seconds or 1.0)))
        latent = np.random.default_rng(a.seed + 1).standard_normal((1, 8, frames, 16), np.float32)

    def progress(done, total, stage):
        print(f'  [{done}/{total}] {stage}', file=sys.stderr)

    t0 = time.perf_counter()
    audio = decoder(latent, progress=progress, chunk_frames=a.chunk_frames)  # (1, 2, samples)
    secs = time.perf_counter() - t0
    meshnn.write_wav(a.out, audio, decoder.sample_rate)
    audio_s = audio.shape[-1] / decoder.sample_rate
    print(f'{a.out}: {decoder.version}, {audio_s:.2f} s of {decoder.sample_rate} Hz stereo; decode '
          f'{secs:.3f} s (real-time factor {secs / audio_s:.3f})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
