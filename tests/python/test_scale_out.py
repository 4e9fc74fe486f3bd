"""Replicas behind HAProxy on loopback (examples/scale_out/, docs/scale_out.md): 3 `meshnn serve`
replicas, a bounded mixed load of decodes and WebSocket streams, one replica SIGKILLed and one
drained with SIGTERM mid-load. Every 2xx answer equals the answer for the same input computed
before the chaos, byte for byte; every other answer is a retryable status (502 / 503 / 504); no
request hangs; a stream either completes equal to its one-shot answer or ends visibly (an error
frame or a closed connection). Also measures the aggregate throughput of 1 vs 3 replicas.
Skipped without Debian's haproxy."""
import asyncio
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import SRC, cli_path, fixture

requests = pytest.importorskip('requests')
websockets = pytest.importorskip('websockets')

LAUNCH = os.path.join(SRC, 'examples', 'scale_out', 'launch.py')
MODELS = [f'voc={fixture("bigvgan_v2_24k_small.safetensors")}',
          f'ltx={fixture("ltx23_small.safetensors")}']
RETRYABLE = {502, 503, 504}


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


class Cluster:
    """launch.py with n replicas (1 worker, 1 thread each) on a free frontend port."""

    def __init__(self, tmp_path, n):
        haproxy = shutil.which('haproxy') or ('/usr/sbin/haproxy'
                                              if os.path.exists('/usr/sbin/haproxy') else None)
        if not haproxy:
            pytest.skip('haproxy is not installed (Debian package haproxy)')
        if not os.path.isfile(cli_path()):
            pytest.skip(f'the meshnn CLI is not built ({cli_path()})')
        self.state_path = str(tmp_path / f'state{n}_{time.monotonic_ns()}.json')
        cmd = [sys.executable, LAUNCH, '--replicas', str(n), '--port', '0', '--cli', cli_path(),
               '--haproxy', haproxy, '--state', self.state_path,
               '--serve-arg=--threads-per-worker=1', '--serve-arg=--workers=1',
               '--serve-arg=--drain-timeout=20']
        for m in MODELS:
            cmd += ['--model', m]
        self.log = self.state_path.replace('.json', '.log')
        with open(self.log, 'w') as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log,
                                         start_new_session=True)
        t0 = time.time()
        while not os.path.exists(self.state_path):
            assert self.proc.poll() is None, 'launch.py exited: ' + open(self.log).read()
            assert time.time() - t0 < 120, 'the cluster did not start'
            time.sleep(0.05)
        self.state = json.load(open(self.state_path))
        self.url = self.state['url']
        self.ws = self.url.replace('http://', 'ws://')
        # Every replica is in the pool (two good health checks) before the load starts.
        self.wait_servers_up(n)

    def stats(self):
        """HAProxy's `show stat` rows by server name (backend row as 'BACKEND')."""
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.state['stats_socket'])
            s.sendall(b'show stat\n')
            data = b''
            while chunk := s.recv(65536):
                data += chunk
        lines = data.decode().splitlines()
        head = lines[0].lstrip('# ').split(',')
        rows = [dict(zip(head, line.split(','))) for line in lines[1:] if line]
        return {r['svname']: r for r in rows if r['pxname'] == 'replicas'}

    def wait_servers_up(self, n, timeout=20):
        t0 = time.time()
        while sum(r['status'] == 'UP' for k, r in self.stats().items() if k != 'BACKEND') < n:
            assert time.time() - t0 < timeout, self.stats()
            time.sleep(0.05)

    def replica(self, i):
        return self.state['replicas'][i]

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise
        finally:
            for r in self.state['replicas']:  # nothing left behind, whatever happened
                try:
                    os.kill(r['pid'], signal.SIGKILL)
                except ProcessLookupError:
                    pass
            shutil.rmtree(self.state['work'], ignore_errors=True)
        return rc


def inputs(seed):
    """8 decode inputs: 4 BigVGAN mels, 4 LTX latents, each (model, body)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(4):
        out.append(('voc', npy(rng.standard_normal((100, 40 + 7 * k)).astype(np.float32))))
        out.append(('ltx', npy(rng.standard_normal((8, 8 + 2 * k, 16)).astype(np.float32))))
    return out


def post(session, url, model, body, timeout=60):
    return session.post(f'{url}/v1/models/{model}/decode', data=body, timeout=timeout,
                        headers={'Content-Type': 'application/x-npy',
                                 'Accept': 'application/x-npy'})


def load(url, work, expected, seconds, clients, tally):
    """`clients` threads post random inputs from `work` for `seconds`; tally the outcomes."""
    deadline = time.time() + seconds
    lock = threading.Lock()

    def client(k):
        s = requests.Session()
        rng = np.random.default_rng(100 + k)
        while time.time() < deadline:
            i = int(rng.integers(len(work)))
            model, body = work[i]
            try:
                r = post(s, url, model, body)
            except requests.RequestException as e:  # a hang would be a timeout here
                with lock:
                    tally['exceptions'].append(repr(e))
                continue
            with lock:
                if 200 <= r.status_code < 300:
                    tally['ok'] += 1
                    if expected is not None and r.content != expected[i]:
                        tally['wrong'] += 1
                elif r.status_code in RETRYABLE:
                    tally['retryable'][r.status_code] = tally['retryable'].get(r.status_code, 0) + 1
                else:
                    tally['other'].append((r.status_code, r.text[:200]))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 90)
        assert not t.is_alive(), 'a client hung'


def new_tally():
    return {'ok': 0, 'wrong': 0, 'retryable': {}, 'other': [], 'exceptions': []}


async def one_stream(ws_url, frames, expected, pause):
    """A slow LTX stream: 'done' (checked against the one-shot answer) or 'ended' (visibly)."""
    try:
        async with websockets.connect(f'{ws_url}/v1/models/ltx/stream?format=f32le',
                                      max_size=None, open_timeout=10) as ws:
            pcm = []
            for t in range(len(frames)):
                await ws.send(frames[t:t + 1].tobytes())
                await asyncio.sleep(pause)
                while True:  # this push's answer (or nothing), without blocking forever
                    try:
                        m = await asyncio.wait_for(ws.recv(), timeout=0.05)
                    except asyncio.TimeoutError:
                        break
                    if isinstance(m, str):
                        return 'ended', json.loads(m)
                    pcm.append(m)
            await ws.send(json.dumps({'type': 'flush'}))
            while True:
                m = await asyncio.wait_for(ws.recv(), timeout=30)
                if isinstance(m, str):
                    msg = json.loads(m)
                    if msg.get('type') != 'done':
                        return 'ended', msg
                    got = np.frombuffer(b''.join(pcm), np.float32).reshape(-1, 2).T
                    assert msg['samples'] == expected.shape[1] == got.shape[1], 'truncated'
                    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
                    return 'done', msg
                pcm.append(m)
    except websockets.exceptions.ConnectionClosed as e:
        return 'ended', repr(e)
    except (OSError, websockets.exceptions.InvalidStatus) as e:  # refused at connect
        return 'refused', repr(e)


def throughput(tmp_path, n, work, seconds=6, clients=6):
    c = Cluster(tmp_path, n)
    try:
        tally = new_tally()
        t0 = time.time()
        load(c.url, work, None, seconds, clients, tally)
        rate = tally['ok'] / (time.time() - t0)
        assert not tally['other'] and not tally['exceptions'], tally
    finally:
        assert c.close() == 0
    return rate, tally


def test_kill_and_drain_under_load(tmp_path):
    work = inputs(7)
    rate1, _ = throughput(tmp_path, 1, work)
    c = Cluster(tmp_path, 3)
    try:
        # The answers before any chaos (every replica computes the same bytes).
        s = requests.Session()
        expected = [post(s, c.url, m, b).content for m, b in work]
        rng = np.random.default_rng(8)
        latent = rng.standard_normal((8, 24, 16)).astype(np.float32)
        frames = latent.transpose(1, 0, 2).reshape(24, 128)
        one = np.load(io.BytesIO(post(s, c.url, 'ltx', npy(latent)).content))
        tally = new_tally()
        t0 = time.time()
        loader = threading.Thread(target=load, args=(c.url, work, expected, 8, 6, tally))
        loader.start()

        async def streams():
            return await asyncio.gather(*[one_stream(c.ws, frames, one, 0.15) for _ in range(6)])

        stream_results = []
        streamer = threading.Thread(target=lambda: stream_results.extend(asyncio.run(streams())))
        streamer.start()
        time.sleep(1.5)
        os.kill(c.replica(0)['pid'], signal.SIGKILL)  # mid-load, with streams open on it
        time.sleep(1.5)
        os.kill(c.replica(1)['pid'], signal.SIGTERM)  # drained: leaves the pool, finishes
        loader.join(timeout=120)
        streamer.join(timeout=120)
        assert not loader.is_alive() and not streamer.is_alive(), 'the load hung'
        elapsed = time.time() - t0
        st = c.stats()
        retries = int(st['BACKEND']['wretr'] or 0) + int(st['BACKEND']['wredis'] or 0)
        kinds = [r[0] for r in stream_results]
        print(f'\nscale-out: 1 replica {rate1:.1f} answers/s; chaos run with 3 replicas: '
              f'{tally["ok"]} answers ({tally["ok"] / elapsed:.1f}/s), retries {retries} '
              f'(wretr {st["BACKEND"]["wretr"]}, wredis {st["BACKEND"]["wredis"]}), retryable '
              f'statuses {tally["retryable"]}, other {len(tally["other"])}, client errors '
              f'{len(tally["exceptions"])}; streams {kinds}')
        assert tally['wrong'] == 0, tally
        assert not tally['other'], tally['other']
        assert not tally['exceptions'], tally['exceptions']
        assert tally['ok'] > 0
        assert len(stream_results) == 6 and set(kinds) <= {'done', 'ended', 'refused'}, \
            stream_results
        assert 'done' in kinds, stream_results  # streams on the surviving replicas complete
        # The killed replica is out of the pool, the drained one left it and exited 0.
        assert st['r1']['status'].startswith('DOWN') and st['r2']['status'].startswith('DOWN')
        assert c.proc.poll() is None
    finally:
        c.close()
    rate3, _ = throughput(tmp_path, 3, work)
    print(f'scale-out: aggregate throughput 1 replica {rate1:.1f}/s, 3 replicas {rate3:.1f}/s '
          f'({os.cpu_count()} cores)')
