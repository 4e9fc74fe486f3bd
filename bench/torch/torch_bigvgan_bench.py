#!/usr/bin/python3
"""PyTorch baseline for NVIDIA BigVGAN (tools/ltx_audio/bigvgan.py, seeded random weights, weight
norm folded), the counterpart of `meshnn-bench vocode`.

  torch_bigvgan_bench.py --config bigvgan_v2_24khz_100band_256x --mel M.npy [--threads 2]
                         [--repeat 3] [--warmup 1] [--seed 0] [--upsample-impl stuffed|convt]
                         [--out Y.npy]

--mel: (1, num_mels, frames) f32 .npy. The weights are those `make_checkpoint.py bigvgan --seed S`
writes. Prints one JSON line: median / all wall times, peak RSS.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
from ltx_audio import configs as C, model as M, randinit as R  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--config', default='bigvgan_v2_24khz_100band_256x')
    ap.add_argument('--mel', required=True)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--upsample-impl', choices=['convt', 'stuffed'], default='stuffed')
    ap.add_argument('--out')
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    M.set_upsample_impl(a.upsample_impl)
    model = R.random_bigvgan(C.bigvgan_config(a.config), a.seed)
    model.remove_weight_norm()
    mel = torch.from_numpy(np.load(a.mel).astype(np.float32))
    times, y = [], None
    with torch.inference_mode():
        for i in range(a.warmup + a.repeat):
            s = time.perf_counter()
            y = model(mel)
            if i >= a.warmup:
                times.append(time.perf_counter() - s)
    if a.out:
        np.save(a.out, y.float().numpy())
    print(json.dumps({'median_s': statistics.median(times), 'times_s': times, 'torch': torch.__version__,
                      'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
