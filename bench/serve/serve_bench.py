#!/usr/bin/python3
"""`meshnn serve` against the same calls in process, in one invocation (docs/serve.md, Benchmarks):

  1. overhead of a 1 s BigVGAN vocode over HTTP (one worker) against BigVGAN.__call__ in process,
     the same threads (median of --reps each);
  2. requests per second and p50 / p99 latency at 1, 2, 4, 16 concurrent clients for a 0.25 s
     vocode (--workers workers);
  3. the WebSocket stream's first-audio latency (first frame sent → first PCM received) against
     the in-process stream's (first push → first non-empty output), 8-frame pushes.

  bench/serve/serve_bench.py [--model DIR_OR_FILE] [--threads N] [--workers W] [--reps R]

--model: a BigVGAN folder or checkpoint; default a seeded random BigVGAN v2 24 kHz at the real
size, made by tools/make_checkpoint.py in a temp folder (needs torch). Prints a Markdown table
and the load average (the machine may be shared)."""
import argparse
import faulthandler
import asyncio
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import requests
import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get('MESHNN_BINARY_DIR', os.path.join(SRC, 'build'))
sys.path.insert(0, os.path.join(BUILD, 'python'))
import meshnn  # noqa: E402


def start_server(cli, model, workers, threads, tmp):
    port_file = os.path.join(tmp, f'port{workers}')
    p = subprocess.Popen([cli, 'serve', '--model', f'voc={model}', '--port', '0', '--port-file',
                          port_file, '--workers', str(workers), '--threads-per-worker',
                          str(threads), '--max-queue', '64', '--no-access-log'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(port_file):
        if p.poll() is not None:
            sys.exit('server failed to start')
        time.sleep(0.05)
    return p, int(open(port_file).read())


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def post(sess, port, body):
    r = sess.post(f'http://127.0.0.1:{port}/v1/models/voc/vocode', data=body,
                  headers={'Content-Type': 'application/x-npy', 'Accept': 'application/x-npy'})
    assert r.status_code == 200, r.text
    return r.content


def median_times(fs, reps):
    """Median seconds of each callable, the calls interleaved (a shared machine's load hits all)."""
    ts = [[] for _ in fs]
    for _ in range(reps):
        for f, t in zip(fs, ts):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in ts]


def load_level(port, body, clients, per_client):
    lat = []
    lock = threading.Lock()

    def client():
        with requests.Session() as s:
            for _ in range(per_client):
                t0 = time.perf_counter()
                post(s, port, body)
                with lock:
                    lat.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    ts = [threading.Thread(target=client) for _ in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]  # noqa: E731
    return len(lat) / wall, q(0.5), q(0.99)


async def ws_first_audio(port, frames, push):
    """First frame sent → first PCM received; every frame is sent at once, as in process."""
    async with websockets.connect(f'ws://127.0.0.1:{port}/v1/models/voc/stream?format=f32le',
                                  max_size=None) as ws:
        t0 = time.perf_counter()

        async def send():
            for i in range(0, len(frames), push):
                await ws.send(frames[i:i + push].tobytes())
            await ws.send(json.dumps({'type': 'flush'}))
        sender = asyncio.ensure_future(send())
        first = None
        while True:
            m = await ws.recv()
            if not isinstance(m, bytes):
                break
            if first is None:
                first = time.perf_counter() - t0
        await sender
        return first


def in_process_first(voc, frames, threads):
    """First frame pushed → first samples out of an in-process stream, pushes of 8 frames."""
    st = voc.stream(threads=threads)
    t0 = time.perf_counter()
    first = None
    for i in range(0, len(frames), 8):
        y = st.push(np.ascontiguousarray(frames[i:i + 8].T[None]))
        if first is None and y.shape[2] > 0:
            first = time.perf_counter() - t0
    st.flush()
    return first


def single_worker_rows(cli, model, voc, mel1, a, tmp):
    """One worker with all the threads against the same calls in process: 1 s vocode over HTTP,
    first audio of a stream over WebSocket → table rows."""
    rows = []
    # 1. one worker with all the threads against the same call in process.
    p, port = start_server(cli, model, 1, a.threads, tmp)
    try:
        with requests.Session() as s:
            body = npy(mel1)
            want = voc(mel1)
            got = np.load(io.BytesIO(post(s, port, body)))
            assert np.array_equal(got, want[0]), 'HTTP and in-process outputs differ'
            voc(mel1)  # warm
            t_in, t_http = median_times([lambda: voc(mel1), lambda: post(s, port, body)], a.reps)
        rows.append(('1 s vocode, in process (median)', f'{t_in * 1e3:.1f} ms'))
        rows.append(('1 s vocode, HTTP (median)', f'{t_http * 1e3:.1f} ms'))
        rows.append(('HTTP overhead', f'{100 * (t_http / t_in - 1):+.1f} %'))

        # 3. first audio, stream: in process vs WebSocket (same single worker).
        frames = np.ascontiguousarray(mel1[0].T)
        in_process_first(voc, frames, a.threads)
        asyncio.run(ws_first_audio(port, frames, 8))
        fi, fw = [], []
        for _ in range(a.reps):
            fi.append(in_process_first(voc, frames, a.threads))
            fw.append(asyncio.run(ws_first_audio(port, frames, 8)))
        f_in, f_ws = statistics.median(fi), statistics.median(fw)
        rows.append(('stream first audio, in process (median)', f'{f_in * 1e3:.1f} ms'))
        rows.append(('stream first audio, WebSocket (median)', f'{f_ws * 1e3:.1f} ms'))
        rows.append(('WebSocket / in process', f'{f_ws / f_in:.2f}x ({(f_ws - f_in) * 1e3:+.1f} ms)'))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
    return rows


def load_rows(cli, model, mel_q, a, tmp):
    """2. throughput and latency at 1, 2, 4, 16 clients, --workers workers sharing the cores."""
    rows = []
    p, port = start_server(cli, model, a.workers, max(1, a.threads // a.workers), tmp)
    try:
        body = npy(mel_q)
        load_level(port, body, 1, 2)  # warm every worker's runner
        load_level(port, body, a.workers, 2)
        for c in (1, 2, 4, 16):
            rps, p50, p99 = load_level(port, body, c, a.per_client)
            rows.append((f'0.25 s vocode, {c} client{"s" if c > 1 else ""}',
                         f'{rps:.1f} req/s, p50 {p50 * 1e3:.0f} ms, p99 {p99 * 1e3:.0f} ms'))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
    return rows


def main():
    if os.environ.get("MESHNN_BENCH_TRACE"):
        faulthandler.dump_traceback_later(int(os.environ["MESHNN_BENCH_TRACE"]))
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--per-client', type=int, default=8)
    a = ap.parse_args()
    cli = os.environ.get('MESHNN_CLI', os.path.join(BUILD, 'meshnn'))
    tmp = tempfile.mkdtemp(prefix='meshnn_serve_bench_')
    model = a.model
    if not model:
        model = os.path.join(tmp, 'bigvgan')
        subprocess.run([sys.executable, os.path.join(SRC, 'tools', 'make_checkpoint.py'), 'bigvgan',
                        model, '--config', 'bigvgan_v2_24khz_100band_256x', '--no-check'],
                       check=True, stdout=subprocess.DEVNULL)
    voc = meshnn.BigVGAN.from_pretrained(model, threads=a.threads, mesh='1x1')
    sr, hop, M = voc.sample_rate, voc.h['hop_size'], voc.num_mels
    rng = np.random.default_rng(0)
    mel1 = rng.uniform(-8, 1, (1, M, sr // hop)).astype(np.float32)            # 1 s
    mel_q = rng.uniform(-8, 1, (1, M, sr // hop // 4)).astype(np.float32)      # 0.25 s
    print(f'model {model}: {sr} Hz, hop {hop}; load average {os.getloadavg()}', flush=True)
    rows = single_worker_rows(cli, model, voc, mel1, a, tmp)
    rows += load_rows(cli, model, mel_q, a, tmp)
    print(f'\n| measurement ({a.threads} threads; load test {a.workers} workers) | value |')
    print('|---|---|')
    for k, v in rows:
        print(f'| {k} | {v} |')
    print(f'\nload average after: {os.getloadavg()}')
    subprocess.run(['rm', '-rf', tmp])


if __name__ == '__main__':
    main()
