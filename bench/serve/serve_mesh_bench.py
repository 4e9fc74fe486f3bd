#!/usr/bin/python3
"""One replica with 2 workers against one MPI 1x2 mesh server (docs/serve.md, "Which to choose
when"), for LTX-2.3 decodes of --seconds (default 1 and 10 s) at the real architecture:

  - latency of one request alone (median of --reps, requests one after the other; one warm-up
    request first, of the first length);
  - latency per request and requests per minute with 2 clients at once (each sends --reps).

  bench/serve/serve_mesh_bench.py [--checkpoint LTX23.safetensors] [--seconds 1 10] [--reps 3]

--checkpoint: default a seeded random LTX-2.3 at the real size (tools/make_checkpoint.py, needs
torch) in a temp folder. Both servers get the machine's cores: 2 workers x cores/2 threads, or 2
ranks x cores/2 threads. Prints a Markdown table and the load average (the machine may be
shared)."""
import argparse
import io
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get('MESHNN_BINARY_DIR', os.path.join(SRC, 'build'))
CLI = os.environ.get('MESHNN_CLI', os.path.join(BUILD, 'meshnn'))


def start(cmd, env, tmp):
    port_file = os.path.join(tmp, 'port')
    if os.path.exists(port_file):
        os.unlink(port_file)
    log = open(os.path.join(tmp, 'server.log'), 'a')
    p = subprocess.Popen(cmd + ['--port', '0', '--port-file', port_file, '--no-access-log',
                                '--request-timeout', '3600'],
                         stdout=subprocess.DEVNULL, stderr=log, env=env, start_new_session=True)
    t0 = time.time()
    while not os.path.exists(port_file):
        if p.poll() is not None or time.time() - t0 > 300:
            raise SystemExit(f'server did not start: {open(log.name).read()}')
        time.sleep(0.05)
    return p, f'http://127.0.0.1:{int(open(port_file).read())}'


def decode(url, body):
    t = time.perf_counter()
    r = requests.post(f'{url}/v1/models/ltx/decode', data=body,
                      headers={'Content-Type': 'application/x-npy'}, timeout=900)
    assert r.status_code == 200, r.text
    return time.perf_counter() - t


def measure(url, body, reps, warm):
    if warm:
        decode(url, body)  # warm-up (first-call set-up, page cache)
    alone = statistics.median(decode(url, body) for _ in range(reps))
    lat, lock = [], threading.Lock()

    def client():
        for _ in range(reps):
            s = decode(url, body)
            with lock:
                lat.append(s)
    t = time.perf_counter()
    ts = [threading.Thread(target=client) for _ in range(2)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    wall = time.perf_counter() - t
    return alone, statistics.median(lat), 60 * len(lat) / wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--checkpoint')
    ap.add_argument('--seconds', type=float, nargs='+', default=[1, 10])
    ap.add_argument('--reps', type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='meshnn_mesh_bench_')
    try:
        ckpt = a.checkpoint
        if not ckpt:
            ckpt = os.path.join(tmp, 'ltx23.safetensors')
            subprocess.run(['/usr/bin/python3', os.path.join(SRC, 'tools', 'make_checkpoint.py'),
                            'ltx23', ckpt, '--seed', '1', '--no-check'], check=True,
                           stdout=subprocess.DEVNULL)
        cores = os.cpu_count()
        half = max(1, cores // 2)
        env = dict(os.environ, OMPI_MCA_btl='^ofi,openib', OMPI_MCA_mtl='^ofi,psm')
        setups = {
            f'1 replica, 2 workers x {half} threads':
                [CLI, 'serve', '--model', f'ltx={ckpt}', '--workers', '2',
                 '--threads-per-worker', str(half)],
            f'MPI 1x2 mesh, 2 ranks x {half} threads':
                [shutil.which('mpiexec.openmpi'), '--allow-run-as-root', '--oversubscribe', '-np',
                 '2', CLI, 'serve', '--backend', 'mpi', '--mesh', '1x2', '--model', f'ltx={ckpt}',
                 '--threads-per-worker', str(half)],
        }
        rng = np.random.default_rng(0)
        rows = []
        for name, cmd in setups.items():
            p, url = start(cmd, env, tmp)
            try:
                for i, s in enumerate(a.seconds):
                    frames = int(round(25 * s))
                    b = io.BytesIO()
                    np.save(b, rng.standard_normal((1, 8, frames, 16)).astype(np.float32))
                    alone, both, rpm = measure(url, b.getvalue(), a.reps, i == 0)
                    rows.append((name, s, alone, both, rpm))
                    print(f'{name}: {s:g} s: alone {alone:.2f} s, 2 clients {both:.2f} s/request, '
                          f'{rpm:.1f} requests/min', file=sys.stderr, flush=True)
            finally:
                if name.startswith('MPI'):
                    # SIGTERM to the ranks, not mpiexec (its SIGTERM kills the ranks after 1 s);
                    # the followers ignore it, rank 0 drains and stops them.
                    for k in subprocess.run(['pgrep', '-P', str(p.pid)], capture_output=True,
                                            text=True).stdout.split():
                        os.kill(int(k), signal.SIGTERM)
                else:
                    os.kill(p.pid, signal.SIGTERM)
                if p.wait(timeout=120) != 0:
                    raise SystemExit(f'{name}: the server exited non-zero')
        print('| set-up | audio | one request alone | 2 clients: latency / request | 2 clients: '
              'requests / min |')
        print('|---|---|---|---|---|')
        for name, s, alone, both, rpm in rows:
            print(f'| {name} | {s:g} s | {alone:.2f} s | {both:.2f} s | {rpm:.1f} |')
        print(f'\nload average {os.getloadavg()[0]:.1f} on {cores} cores')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
