"""Concurrency (two decoders used from two Python threads at once give the serial results; the GIL
is released during compute) and memory (RSS flat over 1000 small calls)."""
import os
import threading

import numpy as np

import meshnn
from conftest import fixture


def run_together(fns):
    """Runs every fn on its own thread, released together by a barrier → their results."""
    barrier = threading.Barrier(len(fns))
    results, errors = [None] * len(fns), []

    def body(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except BaseException as e:  # noqa: B902 - reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i, f)) for i, f in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def test_two_decoders_two_threads_equal_serial(rng):
    a = meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx23_small.safetensors'))
    b = meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx2_small.safetensors'))
    la = rng.standard_normal((1, 8, 20, 16)).astype(np.float32)
    lb = rng.standard_normal((1, 8, 24, 16)).astype(np.float32)
    serial = [a(la), b(lb)]
    for _ in range(3):
        par = run_together([lambda: a(la), lambda: b(lb)])
        for s, p in zip(serial, par):
            np.testing.assert_array_equal(p, s)


def test_one_model_two_threads_equal_serial(ltx23, bigvgan, rng):
    l1 = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
    l2 = rng.standard_normal((1, 8, 9, 16)).astype(np.float32)
    m1 = rng.standard_normal((1, bigvgan.num_mels, 40)).astype(np.float32)
    serial = [ltx23(l1), ltx23(l2), bigvgan(m1)]
    par = run_together([lambda: ltx23(l1), lambda: ltx23(l2), lambda: bigvgan(m1)])
    for s, p in zip(serial, par):
        np.testing.assert_array_equal(p, s)


def test_gil_is_released_during_compute(ltx23, rng):
    """While a decode runs on another thread, this thread keeps running Python code. With the
    GIL held for the whole compute it would get only a few switch intervals in."""
    lat = rng.standard_normal((1, 8, 40, 16)).astype(np.float32)
    ltx23(lat)  # warm
    started = threading.Event()

    def work():
        started.set()
        for _ in range(3):
            ltx23(lat)

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    # Three decodes of 40 frames take well over 50 ms; a loop that held back by the GIL for
    # that long would count at most a few thousand spins (5 ms switch interval).
    assert spins > 200000, spins


def rss_bytes():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def test_rss_flat_over_1000_small_calls(bigvgan, rng):
    mel = rng.standard_normal((1, bigvgan.num_mels, 8)).astype(np.float32)  # 8 KB out per call
    bad = mel.astype(np.float64)
    nan = mel.copy()
    nan[0, 0, 0] = np.nan

    def calls(n):
        for i in range(n):
            y = bigvgan(mel, mesh='1x1', threads=1)
            assert y.shape[-1] == 8 * bigvgan.hop_length
            if i % 10 == 0:  # error paths too
                for x in (bad, nan):
                    try:
                        bigvgan(x)
                    except ValueError:
                        pass

    calls(200)  # warm: runner pool, allocator arenas
    before = rss_bytes()
    calls(1000)
    grown = rss_bytes() - before
    # A leaked output alone would be 8 MB over 1000 calls.
    assert grown < 2 * 2 ** 20, f'RSS grew by {grown / 2 ** 20:.1f} MB over 1000 calls'
