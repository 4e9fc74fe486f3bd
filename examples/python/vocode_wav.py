#!/usr/bin/python3
"""Copy synthesis through BigVGAN with meshnn: WAV → BigVGAN's log-mel front end (computed by
meshnn, as `meshnn vocode --wav` does) → vocoder → WAV.

  vocode_wav.py MODEL IN.wav OUT.wav [--mesh auto|RxC] [--threads N] [--as-torch]

MODEL: NVIDIA's folder (config.json + bigvgan_generator.pt, or bigvgan_generator.safetensors) or
a .safetensors file. IN.wav: mono at the model's sample rate.
"""
import argparse
import sys
import time

import meshnn


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('wav_in')
    ap.add_argument('wav_out')
    ap.add_argument('--mesh', default='auto')
    ap.add_argument('--threads', type=int, default=None)
    a = ap.parse_args(argv)

    vocoder = meshnn.BigVGAN.from_pretrained(a.model, mesh=a.mesh, threads=a.threads)
    samples, sr = meshnn.read_wav(a.wav_in)  # (C, T) float32
    if sr != vocoder.sample_rate or samples.shape[0] != 1:
        sys.exit(f'{a.wav_in}: need mono at {vocoder.sample_rate} Hz, got {samples.shape[0]} '
                 f'channel(s) at {sr} Hz')
    mel = vocoder.mel_spectrogram(samples[0].copy())  # (1, num_mels, frames)
    t0 = time.perf_counter()
    wav = vocoder(mel)                                   # (1, 1, frames · hop_length)
    secs = time.perf_counter() - t0
    meshnn.write_wav(a.wav_out, wav, vocoder.sample_rate)
    audio_s = wav.shape[-1] / vocoder.sample_rate
    print(f'{a.wav_out}: {audio_s:.2f} s at {vocoder.sample_rate} Hz from {mel.shape[-1]} mel frames; '
          f'vocoder {secs:.3f} s (real-time factor {secs / audio_s:.3f})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
