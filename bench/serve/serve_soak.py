#!/usr/bin/python3
"""Mixed-load soak of `meshnn serve` (issue 21's 10-minute run; by hand, not in CI):

  bench/serve/serve_soak.py [--seconds 600]

Runs the server on the small fixture models (tests/fixtures) on a free loopback port, then for
--seconds: 3 one-shot clients (each answer compared with the expected bytes of its own input), 1
WebSocket client (each stream compared with the one-shot output), 1 client sending bad requests
(each must get its 4xx), 1 client that disconnects mid-request and mid-stream. Samples the server's
RSS every 5 s; fails on a crash, a wrong or missing answer, or RSS growth over 5 % after the first
minute (the warm-up: runner pools and allocator arenas fill)."""
import argparse
import asyncio
import io
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import requests
import websockets

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get('MESHNN_BINARY_DIR', os.path.join(SRC, 'build'))
FIX = os.path.join(SRC, 'tests', 'fixtures')


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def start_server(tmp):
    """The server on the fixture models → (process, port)."""
    pf = os.path.join(tmp, 'port')
    log = open(os.path.join(tmp, 'server.log'), 'w')
    proc = subprocess.Popen([os.path.join(BUILD, 'meshnn'), 'serve', '--port', '0', '--port-file', pf,
                             '--model', f'voc={FIX}/bigvgan_v2_24k_small.safetensors',
                             '--model', f'ltx={FIX}/ltx23_small.safetensors',
                             '--model', f'ltx2={FIX}/ltx2_small.safetensors', '--workers', '2',
                             '--threads-per-worker', '1', '--max-queue', '32',
                             '--header-timeout', '2', '--body-timeout', '2', '--no-access-log'],
                            stdout=subprocess.DEVNULL, stderr=log)
    while not os.path.exists(pf):
        assert proc.poll() is None
        time.sleep(0.05)
    return proc, int(open(pf).read())


def make_cases(url):
    """12 random inputs over the three models with their expected answers:
    (model, input, body, expected wav bytes, expected f32 planar)."""
    rng = np.random.default_rng(7)
    cases = []
    for k in range(12):
        model = ['voc', 'ltx', 'ltx2'][k % 3]
        x = (rng.standard_normal((100, int(rng.integers(5, 40)))) if model == 'voc'
             else rng.standard_normal((8, int(rng.integers(2, 16)), 16))).astype(np.float32)
        body = npy(x)
        h = {'Content-Type': 'application/x-npy'}
        wav = requests.post(f'{url}/v1/models/{model}/decode', data=body, headers=h).content
        f32 = np.load(io.BytesIO(requests.post(f'{url}/v1/models/{model}/decode', data=body,
                                               headers={**h, 'Accept': 'application/x-npy'}).content))
        cases.append((model, x, body, wav, f32))
    return cases


class Load:
    """The soak's clients, each run on its own thread until `stop`; they count into `stats` and
    append what went wrong to `errors`."""

    def __init__(self, port, cases, stop):
        self.port, self.url, self.cases, self.stop = port, f'http://127.0.0.1:{port}', cases, stop
        self.stats = {'ok': 0, 'streams': 0, 'bad': 0, 'disconnects': 0}
        self.errors = []
        self.lock = threading.Lock()

    def count(self, k):
        with self.lock:
            self.stats[k] += 1

    def one_shot(self, seed):
        r = random.Random(seed)
        with requests.Session() as s:
            while time.time() < self.stop:
                model, _, body, wav, _ = r.choice(self.cases)
                resp = s.post(f'{self.url}/v1/models/{model}/decode', data=body,
                              headers={'Content-Type': 'application/x-npy'}, timeout=60)
                if resp.status_code != 200 or resp.content != wav:
                    self.errors.append(('one-shot', model, resp.status_code))
                self.count('ok')

    async def streams(self):
        r = random.Random(3)
        while time.time() < self.stop:
            model, x, _, _, f32 = r.choice(self.cases)
            frames = x.T if model == 'voc' else x.transpose(1, 0, 2).reshape(x.shape[1], 128)
            frames = np.ascontiguousarray(frames)
            async with websockets.connect(f'ws://127.0.0.1:{self.port}/v1/models/{model}/stream'
                                          '?format=f32le', max_size=None) as ws:
                i = 0
                while i < len(frames):
                    n = r.randint(1, 9)
                    await ws.send(frames[i:i + n].tobytes())
                    i += n
                await ws.send(json.dumps({'type': 'flush'}))
                out = []
                while True:
                    m = await ws.recv()
                    if isinstance(m, str):
                        break
                    out.append(m)
            got = np.frombuffer(b''.join(out), np.float32).reshape(-1, f32.shape[0]).T
            if got.shape != f32.shape or np.abs(got - f32).max() > 1e-5:
                self.errors.append(('stream', model))
            self.count('streams')

    def bad_request(self, r, kind, body):
        """One bad request of `kind` (0 … 3) → (response, the status it must get)."""
        url = self.url
        if kind == 0:
            return requests.post(f'{url}/v1/models/ltx/decode', data=body[:len(body) // 2],
                                 headers={'Content-Type': 'application/x-npy'}), 400
        if kind == 1:
            return requests.post(f'{url}/v1/models/ltx/decode', data=body,
                                 headers={'Content-Type': 'text/plain'}), 415
        if kind == 2:
            return requests.post(f'{url}/v1/models/nope/decode', data=body), 404
        nan = self.cases[1][1].copy()
        nan.flat[r.randrange(nan.size)] = np.nan
        return requests.post(f'{url}/v1/models/ltx/decode', data=npy(nan),
                             headers={'Content-Type': 'application/x-npy'}), 400

    def bad(self):
        r = random.Random(5)
        body = self.cases[1][2]
        while time.time() < self.stop:
            kind = r.randrange(5)
            if kind == 4:
                with socket.create_connection(('127.0.0.1', self.port)) as s:
                    s.sendall(bytes(r.getrandbits(8) for _ in range(300)) + b'\r\n\r\n')
                    s.recv(4096)
                self.count('bad')
                time.sleep(0.02)
                continue
            resp, want = self.bad_request(r, kind, body)
            if resp.status_code != want:
                self.errors.append(('bad', kind, resp.status_code))
            self.count('bad')
            time.sleep(0.02)

    def disconnects(self):
        r = random.Random(9)
        big = npy(np.random.default_rng(1).standard_normal((8, 120, 16)).astype(np.float32))
        head = (b'POST /v1/models/ltx/decode HTTP/1.1\r\nHost: x\r\nContent-Type: '
                b'application/x-npy\r\nContent-Length: %d\r\n\r\n' % len(big))
        while time.time() < self.stop:
            s = socket.create_connection(('127.0.0.1', self.port))
            s.sendall(head + big[:r.randrange(len(big))] if r.random() < 0.3 else head + big)
            time.sleep(r.random() * 0.3)
            s.close()
            self.count('disconnects')
            time.sleep(0.5)

    def threads(self):
        ts = [threading.Thread(target=self.one_shot, args=(k,)) for k in range(3)]
        ts += [threading.Thread(target=lambda: asyncio.run(self.streams())),
               threading.Thread(target=self.bad), threading.Thread(target=self.disconnects)]
        return ts


def rss(pid):
    with open(f'/proc/{pid}/status') as f:
        return int(re.search(r'VmRSS:\s+(\d+)', f.read()).group(1))


def watch(proc, load, ts):
    """Samples the server's RSS (and allocator cache) every 5 s while the clients run →
    [(seconds since start, RSS kB)]."""
    t0 = time.time()
    for t in ts:
        t.start()
    samples = []
    while any(t.is_alive() for t in ts):
        time.sleep(5)
        if proc.poll() is not None:
            load.errors.append(('server exited', proc.returncode))
            break
        samples.append((time.time() - t0, rss(proc.pid)))
        try:
            m = re.search(r'^meshnn_alloc_cache_bytes (\d+)$',
                          requests.get(f'{load.url}/metrics', timeout=10).text, re.M)
            cache = f'{int(m.group(1)) / 2**20:.1f}'
        except (requests.RequestException, AttributeError):
            cache = '?'
        print(f'{samples[-1][0]:6.0f} s  RSS {samples[-1][1] / 1024:.1f} MiB  cache {cache} MiB  '
              f'{load.stats}', flush=True)
    for t in ts:
        t.join()
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=float, default=600)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='meshnn_soak_')
    proc, port = start_server(tmp)
    cases = make_cases(f'http://127.0.0.1:{port}')
    load = Load(port, cases, time.time() + a.seconds)
    samples = watch(proc, load, load.threads())
    warm = [r for t, r in samples if t >= min(60, a.seconds / 2)]
    growth = (warm[-1] / warm[0] - 1) * 100 if len(warm) > 1 else 0
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=60)
    errors = load.errors
    print(f'done: {load.stats}; RSS after warm-up {warm[0] / 1024:.1f} → {warm[-1] / 1024:.1f} MiB '
          f'({growth:+.2f} %); errors {len(errors)} {errors[:5]}; exit code {rc}; '
          f'load average {os.getloadavg()}')
    ok = not errors and growth < 5 and rc == 0
    subprocess.run(['rm', '-rf', tmp])
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
