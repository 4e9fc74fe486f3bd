"""`meshnn serve` end to end: the real server on a free loopback port, talked to by real clients
(requests, websockets, raw sockets for what those refuse to send). One-shot answers equal the CLI
bit for bit, streams equal one shot, every error status comes from a real request, the fault cases
leave the server healthy, and a bounded load test checks each answer against its own input."""
import asyncio
import io
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave

import numpy as np
import pytest

import meshnn
from conftest import cli_path, fixture, run_cli

requests = pytest.importorskip('requests')
websockets = pytest.importorskip('websockets')

VOC = fixture('bigvgan_v2_24k_small.safetensors')
LTX23 = fixture('ltx23_small.safetensors')
LTX2 = fixture('ltx2_small.safetensors')
KEY = 'test-key-0123456789'


class Server:
    """A `meshnn serve` process on 127.0.0.1 and a free port; stderr (the access log) kept."""

    def __init__(self, *args, env=None, models=None, host='127.0.0.1', prefix=()):
        """`host`: --host; `prefix`: a command the server runs under (`ip netns exec NS`)."""
        cli = cli_path()
        if not os.path.isfile(cli):
            pytest.skip(f'the meshnn CLI is not built ({cli})')
        self.dir = tempfile.mkdtemp(prefix='meshnn_serve_test_')
        port_file = os.path.join(self.dir, 'port')
        self.log_path = os.path.join(self.dir, 'stderr.log')
        models = models or [f'voc={VOC}', f'ltx={LTX23}', f'ltx2={LTX2}']
        cmd = [*prefix, cli, 'serve', '--host', host, '--port', '0', '--port-file', port_file,
               '--threads-per-worker', '1']
        for m in models:
            cmd += ['--model', m]
        self.log = open(self.log_path, 'w')
        # TMPDIR: ours, so that anything the server writes there is found (and removed with it).
        env = dict(os.environ if env is None else env, TMPDIR=self.dir)
        self.proc = subprocess.Popen(cmd + list(map(str, args)), stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env)
        t0 = time.time()
        while not os.path.exists(port_file):
            assert self.proc.poll() is None, f'server exited: {self.stderr()}'
            assert time.time() - t0 < 60, 'server did not start'
            time.sleep(0.02)
        self.port = int(open(port_file).read())
        self.url = f'http://127.0.0.1:{self.port}'
        self.ws = f'ws://127.0.0.1:{self.port}'

    def stderr(self):
        self.log.flush()
        return open(self.log_path).read()

    def rss_kb(self):
        with open(f'/proc/{self.proc.pid}/status') as f:
            return int(re.search(r'VmRSS:\s+(\d+)', f.read()).group(1))

    def sigterm(self):
        self.proc.send_signal(signal.SIGTERM)
        self.signalled = True

    def stop(self, timeout=60):
        if self.proc.poll() is None and not getattr(self, 'signalled', False):
            self.sigterm()
        rc = self.proc.wait(timeout=timeout)
        self.log.close()
        for n in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, n))
        os.rmdir(self.dir)
        return rc


@pytest.fixture(scope='module')
def srv():
    s = Server('--workers', 2, '--max-queue', 64, '--max-request-mb', 1, '--max-audio-seconds', 20,
               '--header-timeout', 1.5, '--body-timeout', 1.5, '--idle-timeout', 5)
    yield s
    assert s.stop() == 0, s.stderr()


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def post(srv, model, body, action='decode', ctype='application/x-npy', **headers):
    return requests.post(f'{srv.url}/v1/models/{model}/{action}', data=body,
                         headers={'Content-Type': ctype, **headers}, timeout=60)


def raw(port, data, timeout=10, shut=False):
    """Sends bytes on a fresh connection, returns everything the server sends before closing."""
    with socket.create_connection(('127.0.0.1', port), timeout=timeout) as s:
        out = b''
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except OSError:  # the server may close first (that is what some tests check)
            pass
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                out += b
                if b'\r\n\r\n' in out and not shut:
                    head, _, body = out.partition(b'\r\n\r\n')
                    m = re.search(rb'content-length: (\d+)', head.lower())
                    if m and len(body) >= int(m.group(1)):
                        break
        except (socket.timeout, ConnectionResetError):
            pass
        return out


def status_of(resp_bytes):
    m = re.match(rb'HTTP/1\.1 (\d+)', resp_bytes)
    return int(m.group(1)) if m else None


def cli_wav(tmp_path, kind, x):
    """The CLI's WAV bytes for input x (threads 1, as the test server's workers)."""
    src = tmp_path / 'in.npy'
    out = tmp_path / 'cli.wav'
    if kind == 'voc-wav':
        meshnn.write_wav(tmp_path / 'in.wav', x, 24000)
        run_cli('vocode', '--checkpoint', VOC, '--wav', tmp_path / 'in.wav', '--out', out,
                '--threads', 1, '--quiet')
    elif kind == 'voc':
        np.save(src, x)
        run_cli('vocode', '--checkpoint', VOC, '--mel', src, '--out', out, '--threads', 1, '--quiet')
    else:
        np.save(src, x)
        run_cli('audio-decode', '--checkpoint', LTX23 if kind == 'ltx' else LTX2, '--latent', src,
                '--out', out, '--threads', 1, '--quiet')
    return out.read_bytes()


def wav_float_data(b):
    """The float32 samples of a WAV's data chunk."""
    i = b.index(b'data')
    n = struct.unpack('<I', b[i + 4:i + 8])[0]
    return np.frombuffer(b[i + 8:i + 8 + n], np.float32)


# ---- endpoints ---------------------------------------------------------------------------------

def test_health_ready_models(srv):
    assert requests.get(f'{srv.url}/healthz').json() == {'status': 'ok'}
    assert requests.get(f'{srv.url}/readyz').json() == {'status': 'ready'}
    models = {m['name']: m for m in requests.get(f'{srv.url}/v1/models').json()['models']}
    assert set(models) == {'voc', 'ltx', 'ltx2'}
    assert models['ltx']['kind'] == 'ltx-2.3' and models['ltx2']['kind'] == 'ltx-2'
    assert models['ltx']['output'] == {'sample_rate': 48000, 'channels': 2}
    assert models['voc']['output']['sample_rate'] == 24000 and models['voc']['output']['channels'] == 1
    assert models['voc']['input']['frame_size'] == 100
    assert models['ltx']['input']['frame_size'] == 128
    assert all(m['precision'] == 'fp32' for m in models.values())


@pytest.mark.parametrize('kind', ['voc', 'voc-wav', 'ltx', 'ltx2'])
def test_one_shot_equals_cli(srv, tmp_path, rng, kind):
    if kind == 'voc':
        x = rng.standard_normal((100, 37)).astype(np.float32)
        r = post(srv, 'voc', npy_bytes(x), action='vocode')
    elif kind == 'voc-wav':
        x = (0.3 * rng.standard_normal(30 * 256)).astype(np.float32)
        buf = tmp_path / 'body.wav'
        meshnn.write_wav(buf, x, 24000)
        r = post(srv, 'voc', buf.read_bytes(), ctype='audio/wav')
    else:
        x = rng.standard_normal((1, 8, 11, 16)).astype(np.float32)
        r = post(srv, kind, npy_bytes(x))
    assert r.status_code == 200, r.text
    assert r.headers['Content-Type'] == 'audio/wav'
    assert r.headers['X-Request-Id']
    assert r.content == cli_wav(tmp_path, kind, x)


def test_accept_npy_and_l16(srv, rng):
    x = rng.standard_normal((8, 9, 16)).astype(np.float32)
    wav = post(srv, 'ltx', npy_bytes(x)).content
    got = np.load(io.BytesIO(post(srv, 'ltx', npy_bytes(x), Accept='application/x-npy').content))
    assert got.dtype == np.float32 and got.shape[0] == 2
    np.testing.assert_array_equal(got.T.reshape(-1), wav_float_data(wav))  # WAV is interleaved
    r = post(srv, 'ltx', npy_bytes(x), Accept='audio/L16')
    assert r.headers['Content-Type'] == 'audio/L16; rate=48000; channels=2'
    l16 = np.frombuffer(r.content, '>i2').astype(np.float64) / 32768
    assert l16.size == got.size
    assert np.abs(l16 - np.clip(got.T.reshape(-1), -1, 1)).max() < 2 / 32768


# ---- streaming ---------------------------------------------------------------------------------

async def stream(url, frames, cuts, fmt='f32le', flush=True):
    """Sends frames (n, C) in messages cut at `cuts`, then a flush; returns (pcm bytes, done)."""
    async with websockets.connect(f'{url}?format={fmt}', max_size=None) as ws:
        edges = [0, *cuts, len(frames)]
        out = []
        for a, b in zip(edges[:-1], edges[1:]):
            await ws.send(np.ascontiguousarray(frames[a:b]).tobytes())
        if flush:
            await ws.send(json.dumps({'type': 'flush'}))
        while True:
            m = await ws.recv()
            if isinstance(m, str):
                return b''.join(out), json.loads(m)
            out.append(m)


def random_cuts(rng, n):
    return sorted(set(rng.integers(1, n, size=min(6, n - 1)).tolist()))


@pytest.mark.parametrize('model', ['voc', 'ltx'])
def test_stream_equals_one_shot(srv, rng, model):
    if model == 'voc':
        x = rng.standard_normal((100, 50)).astype(np.float32)
        frames = x.T
    else:
        x = rng.standard_normal((8, 10, 16)).astype(np.float32)
        frames = x.transpose(1, 0, 2).reshape(10, 128)  # frame t = latent[:, t, :], (c, f) order
    one = np.load(io.BytesIO(post(srv, model, npy_bytes(x), Accept='application/x-npy').content))
    pcm, done = asyncio.run(stream(f'{srv.ws}/v1/models/{model}/stream', frames,
                                   random_cuts(rng, len(frames))))
    got = np.frombuffer(pcm, np.float32).reshape(-1, one.shape[0]).T
    assert done['type'] == 'done' and done['samples'] == one.shape[1] == got.shape[1]
    assert done['first_audio_ms'] >= 0 and done['rtf'] > 0
    np.testing.assert_allclose(got, one, rtol=0, atol=1e-5)  # the streaming API's f32 rounding
    s16, done16 = asyncio.run(stream(f'{srv.ws}/v1/models/{model}/stream', frames, [3], 's16le'))
    assert done16['samples'] == one.shape[1] and len(s16) == 2 * one.size


def test_stream_errors(srv, rng):
    url = f'{srv.ws}/v1/models/voc/stream'

    async def expect_error(payload, code=1007):
        async with websockets.connect(url, max_size=None) as ws:
            await ws.send(payload)
            m = json.loads(await ws.recv())
            # The code of the one error table (every case here is the client's input: 400).
            assert m['type'] == 'error' and m['message'] and m['code'] == 'bad_request'
            with pytest.raises(websockets.ConnectionClosed) as e:
                await ws.recv()
            assert e.value.code == code
            return m['message']

    nan = rng.standard_normal((4, 100)).astype(np.float32)
    nan[2, 7] = np.nan
    assert 'non-finite' in asyncio.run(expect_error(nan.tobytes()))
    assert 'whole number of frames' in asyncio.run(expect_error(b'\x00' * 7))
    assert 'JSON' in asyncio.run(expect_error('not json'))
    assert 'unknown type' in asyncio.run(expect_error('{"type": "rewind"}'))

    async def oversized():  # one message over --max-request-mb (1 MiB): close 1009
        async with websockets.connect(url, max_size=None) as ws:
            # The server may close as soon as it reads the frame header, before the client has
            # written the whole message: then the send itself sees the close.
            with pytest.raises(websockets.ConnectionClosed) as e:
                await ws.send(b'\x00' * (1 << 21))
                await ws.recv()
            return e.value.code
    assert asyncio.run(oversized()) == 1009

    async def bad_format():
        with pytest.raises(websockets.InvalidStatusCode) as e:
            async with websockets.connect(url + '?format=mp3'):
                pass
        return e.value.status_code
    assert asyncio.run(bad_format()) == 400
    # Binary garbage that is not WebSocket framing at all, after a real handshake.
    req = (f'GET /v1/models/voc/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n'
           f'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
           f'Sec-WebSocket-Version: 13\r\n\r\n').encode()
    out = raw(srv.port, req + bytes(rng.integers(0, 256, 4096, dtype=np.uint8)), shut=True)
    assert status_of(out) == 101
    assert requests.get(f'{srv.url}/healthz').status_code == 200


# ---- every error status from a real request -----------------------------------------------------

def test_error_statuses(srv, rng, tmp_path):
    def err(r, status, code=None):
        assert r.status_code == status, r.text
        e = r.json()['error']
        assert e['message'] and (code is None or e['code'] == code)
        return e['message']

    lat = rng.standard_normal((8, 6, 16)).astype(np.float32)
    err(post(srv, 'nope', npy_bytes(lat)), 404, 'not_found')
    err(requests.get(f'{srv.url}/v2/anything'), 404)
    assert 'no encoder' in err(post(srv, 'ltx', npy_bytes(lat), action='encode'), 404)
    assert '/decode' in err(post(srv, 'ltx', npy_bytes(lat), action='vocode'), 404)
    r = requests.get(f'{srv.url}/v1/models/ltx/decode')
    err(r, 405, 'method_not_allowed')
    assert r.headers['Allow'] == 'POST'
    err(requests.post(f'{srv.url}/healthz', data=b'x'), 405)
    err(post(srv, 'ltx', npy_bytes(lat), ctype='text/plain'), 415, 'unsupported_media_type')
    err(post(srv, 'ltx', b'RIFF', ctype='audio/wav'), 415)
    err(post(srv, 'ltx', npy_bytes(lat), Accept='text/html'), 406)
    err(requests.get(f'{srv.url}/v1/models/ltx/stream'), 426)
    # 400 with the CLI's own message for the same input.
    bad = lat.copy()
    bad[3, 2, 5] = np.nan
    msg = err(post(srv, 'ltx', npy_bytes(bad)), 400, 'bad_request')
    np.save(tmp_path / 'bad.npy', bad)
    cli = subprocess.run([cli_path(), 'audio-decode', '--checkpoint', LTX23, '--latent',
                          tmp_path / 'bad.npy', '--out', tmp_path / 'o.wav'],
                         capture_output=True, text=True)
    assert cli.returncode == 1
    assert msg.split(': ', 1)[1] in cli.stderr  # the same message after the input's name
    err(post(srv, 'ltx', npy_bytes(lat[:, :, :8])), 400)  # wrong shape
    err(post(srv, 'ltx', npy_bytes(lat.astype(np.float16))), 400)  # dtype rule
    err(post(srv, 'voc', npy_bytes(rng.standard_normal((80, 9)).astype(np.float32))), 400)
    err(post(srv, 'voc', b'RIFF....WAVEjunk', ctype='audio/wav'), 400)
    # 413: a body over --max-request-mb, and an input over --max-audio-seconds.
    err(post(srv, 'voc', b'\x00' * (1 << 20) + b'x' * 10), 413)
    long = rng.standard_normal((8, 600, 16)).astype(np.float32)  # 24 s > 20 s
    err(post(srv, 'ltx', npy_bytes(long)), 413)
    err(post(srv, 'voc', npy_bytes(np.zeros((100, 2000), np.float32) + 0.5)), 413)
    # 411: a POST with neither Content-Length nor a chunked body (requests always sends one).
    out = raw(srv.port, b'POST /v1/models/voc/vocode HTTP/1.1\r\nHost: x\r\n'
                        b'Content-Type: application/x-npy\r\n\r\n')
    assert status_of(out) == 411
    assert b'"length_required"' in out


def test_api_key_and_exposure(tmp_path):
    env = dict(os.environ, MESHNN_API_KEY=KEY)
    s = Server(models=[f'voc={VOC}'], env=env)
    try:
        mel = npy_bytes(np.random.default_rng(5).standard_normal((100, 8)).astype(np.float32))
        assert requests.get(f'{s.url}/healthz').status_code == 200  # probes need no key
        for h in [{}, {'Authorization': 'Bearer wrong'}, {'X-API-Key': KEY[:-1]}]:
            r = requests.post(f'{s.url}/v1/models/voc/vocode', data=mel,
                              headers={'Content-Type': 'application/x-npy', **h})
            assert r.status_code == 401 and r.json()['error']['code'] == 'unauthorized'
        assert requests.get(f'{s.url}/v1/models').status_code == 401
        assert requests.get(f'{s.url}/metrics').status_code == 401
        for h in [{'Authorization': f'Bearer {KEY}'}, {'X-API-Key': KEY}]:
            r = requests.post(f'{s.url}/v1/models/voc/vocode', data=mel,
                              headers={'Content-Type': 'application/x-npy', **h})
            assert r.status_code == 200
    finally:
        assert s.stop() == 0
    # A non-loopback bind without a key is refused before anything is bound.
    r = subprocess.run([cli_path(), 'serve', '--host', '0.0.0.0', '--port', '0', '--model',
                        f'voc={VOC}'], capture_output=True, text=True, timeout=30,
                       env={k: v for k, v in os.environ.items() if k != 'MESHNN_API_KEY'})
    assert r.returncode != 0 and '--api-key' in r.stderr


# ---- WebSocket upgrades and their Origin (cross-site WebSocket hijacking) ---------------------------

def upgrade_request(path, host, origin=None):
    """A WebSocket upgrade as a browser sends it (Origin set), for the answers websockets hides."""
    head = (f'GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n'
            'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
            'Sec-WebSocket-Version: 13\r\n')
    if origin is not None:
        head += f'Origin: {origin}\r\n'
    return (head + '\r\n').encode()


async def stream_from(url, frames, origin=None):
    """A whole stream (frames, then the flush) from a page of `origin` (None: no Origin header,
    as non-browser clients connect); returns (PCM bytes, the done message)."""
    async with websockets.connect(url, origin=origin, max_size=None) as ws:
        await ws.send(frames.tobytes())
        await ws.send(json.dumps({'type': 'flush'}))
        out = []
        while isinstance(m := await ws.recv(), bytes):
            out.append(m)
        return b''.join(out), json.loads(m)


def test_websocket_origin_is_checked(rng):
    s = Server('--api-key', KEY, '--cors-origin', 'http://app.example', models=[f'voc={VOC}'])
    try:
        host = f'127.0.0.1:{s.port}'
        path = f'/v1/models/voc/stream?api_key={KEY}'
        frames = rng.standard_normal((12, 100)).astype(np.float32)  # 12 mel frames
        one = post(s, 'voc', npy_bytes(frames.T.copy()), Authorization=f'Bearer {KEY}',
                   Accept='application/x-npy')
        want = np.load(io.BytesIO(one.content)).shape[1]
        # Another site's page is refused with the key in hand, and without it (403 before 401):
        # another host or port, the same host by another name, no scheme of a page, look-alikes.
        for origin in ['http://evil.example', f'http://127.0.0.1:{s.port + 1}',
                       f'http://localhost:{s.port}', 'null', f'ws://{host}', host,
                       f'http://{host}.evil.example', f'http://{host}@evil.example',
                       f'http://{host}/', 'https://app.example', 'http://app.example:80x']:
            for p in (path, '/v1/models/voc/stream'):
                out = raw(s.port, upgrade_request(p, host, origin))
                assert status_of(out) == 403, (origin, out[:200])
                err = json.loads(out.partition(b'\r\n\r\n')[2])['error']
                assert err['code'] == 'forbidden', err
                assert f"origin '{origin}'" in err['message'] and '--cors-origin' in err['message']
        with pytest.raises(websockets.InvalidStatusCode) as e:
            asyncio.run(stream_from(s.ws + path, frames, 'http://evil.example'))
        assert e.value.status_code == 403
        # The page's own origin (its host:port is the Host header; case and the default port do
        # not matter), an origin --cors-origin lists, and a client that sends no Origin stream.
        for origin in [None, f'http://{host}', f'HTTP://{host.upper()}', 'http://app.example']:
            pcm, done = asyncio.run(stream_from(s.ws + path, frames, origin))
            assert done['type'] == 'done' and done['samples'] == want, (origin, done)
            assert len(pcm) == 2 * want
        for h, origin in [('Meshnn.Example', 'http://meshnn.example:80'),
                          ('meshnn.example:443', 'https://MESHNN.example')]:
            out = raw(s.port, upgrade_request(path, h, origin), shut=True)
            assert status_of(out) == 101, (h, origin, out[:200])
        # Each refusal logged as any other (status 403, the key redacted).
        log = s.stderr()
        refused = re.findall(r'GET /v1/models/voc/stream\S* model=- status=403', log)
        assert len(refused) == 23, log[-2000:]
        assert KEY not in log
        doc = requests.get(f'{s.url}/openapi.json').json()
        assert '403' in doc['paths']['/v1/models/{name}/stream']['get']['responses']
    finally:
        assert s.stop() == 0, s.stderr()
    # --cors-origin '*': any page may stream (the key still applies).
    s = Server('--cors-origin', '*', models=[f'voc={VOC}'])
    try:
        frames = rng.standard_normal((12, 100)).astype(np.float32)
        _, done = asyncio.run(stream_from(f'{s.ws}/v1/models/voc/stream', frames,
                                          'http://evil.example'))
        assert done['type'] == 'done'
    finally:
        assert s.stop() == 0, s.stderr()


def test_queue_full_503_and_timeout_504(rng):
    s = Server('--workers', 1, '--max-queue', 1, models=[f'ltx={LTX23}'])
    try:
        body = npy_bytes(rng.standard_normal((8, 120, 16)).astype(np.float32))
        results = []

        def one():
            results.append(post(s, 'ltx', body))
        ts = [threading.Thread(target=one) for _ in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        codes = sorted(r.status_code for r in results)
        assert 503 in codes and 200 in codes and set(codes) <= {200, 503}, codes
        busy = next(r for r in results if r.status_code == 503)
        assert busy.headers['Retry-After'] == '1' and busy.json()['error']['code'] == 'overloaded'
        ok = [r.content for r in results if r.status_code == 200]
        assert all(c == ok[0] for c in ok)
    finally:
        assert s.stop() == 0
    s = Server('--request-timeout', 0.05, models=[f'ltx={LTX23}'])
    try:
        r = post(s, 'ltx', npy_bytes(rng.standard_normal((8, 200, 16)).astype(np.float32)))
        assert r.status_code == 504 and r.json()['error']['code'] == 'timeout'
        assert requests.get(f'{s.url}/healthz').status_code == 200
    finally:
        assert s.stop() == 0


# ---- faults --------------------------------------------------------------------------------------

def test_malformed_http_and_chunked(srv, rng):
    assert status_of(raw(srv.port, b'GARBAGE\r\n\r\n')) == 400
    assert status_of(raw(srv.port, bytes(rng.integers(0, 256, 2000, dtype=np.uint8)))) in (400, None)
    assert status_of(raw(srv.port, b'GET / HTTP/1.1\r\n' + b'X-A: ' + b'a' * 20000 + b'\r\n\r\n')) == 431
    # A chunked body is read whole and gives the same answer as a sized one.
    mel = rng.standard_normal((100, 12)).astype(np.float32)
    body = npy_bytes(mel)
    chunks = b''.join(b'%x\r\n%s\r\n' % (len(body[i:i + 1000]), body[i:i + 1000])
                      for i in range(0, len(body), 1000)) + b'0\r\n\r\n'
    head = (b'POST /v1/models/voc/vocode HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-npy\r\n'
            b'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n')
    out = raw(srv.port, head + chunks)
    assert status_of(out) == 200
    assert out.partition(b'\r\n\r\n')[2] == post(srv, 'voc', body).content
    assert status_of(raw(srv.port, head + b'zz\r\nxx\r\n')) == 400  # a bad chunk size
    assert requests.get(f'{srv.url}/healthz').status_code == 200


def test_lying_and_truncated_npy(srv, rng):
    lat = rng.standard_normal((8, 6, 16)).astype(np.float32)
    b = npy_bytes(lat)
    lying = b.replace(b'(8, 6, 16)', b'(8, 9999, 16)')
    for body in [lying, b[:len(b) // 2], b[:20], b'\x93NUMPY\x01\x00\xff\xff', b'']:
        r = post(srv, 'ltx', body)
        assert r.status_code == 400, (body[:40], r.text)
    assert requests.get(f'{srv.url}/healthz').status_code == 200


def test_slowloris_times_out(srv):
    t0 = time.time()
    with socket.create_connection(('127.0.0.1', srv.port), timeout=10) as s:
        s.sendall(b'POST /v1/models/voc/vocode HTTP/1.1\r\nHost: x\r\n')
        closed = False
        for _ in range(40):  # a header line every 0.25 s, never finished
            try:
                s.sendall(b'X-Slow: 1\r\n')
                # Meanwhile the server answers others.
                assert requests.get(f'{srv.url}/healthz', timeout=5).status_code == 200
                time.sleep(0.25)
                s.settimeout(0.01)
                if s.recv(1) == b'':
                    closed = True
                    break
            except socket.timeout:
                pass
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            finally:
                s.settimeout(10)
        assert closed, 'a header that never ends must time out'
    assert time.time() - t0 < 8  # --header-timeout 1.5 s
    # A body that stops halfway times out too (--body-timeout), holding no worker.
    with socket.create_connection(('127.0.0.1', srv.port), timeout=10) as s:
        s.sendall(b'POST /v1/models/voc/vocode HTTP/1.1\r\nHost: x\r\nContent-Type: '
                  b'application/x-npy\r\nContent-Length: 5000\r\n\r\n' + b'\x93NUMPY')
        assert s.recv(100) == b''


def test_connection_cap():
    s = Server('--max-connections', 2, models=[f'voc={VOC}'])
    try:
        held = [socket.create_connection(('127.0.0.1', s.port)) for _ in range(2)]
        probe = b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'
        # Once both held connections are accepted, a third one gets the canned 503.
        assert wait_for(lambda: status_of(raw(s.port, probe)) == 503)
        out = raw(s.port, probe)
        assert status_of(out) == 503 and b'Retry-After: 1' in out
        for h in held:
            h.close()
        assert wait_for(lambda: requests.get(f'{s.url}/healthz').status_code == 200)
        assert metric(s, 'meshnn_rejected_connections_total') >= 1
    finally:
        assert s.stop() == 0


def metric(srv, name):
    text = requests.get(f'{srv.url}/metrics').text
    m = re.search(rf'^{re.escape(name)} (\S+)$', text, re.M)
    return float(m.group(1))


def wait_for(cond, timeout=15):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.05)
    return False


def test_disconnect_frees_worker(srv, rng):
    body = npy_bytes(rng.standard_normal((8, 240, 16)).astype(np.float32))
    head = (b'POST /v1/models/ltx/decode HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-npy\r\n'
            b'Content-Length: %d\r\n\r\n' % len(body))
    for _ in range(3):
        s = socket.create_connection(('127.0.0.1', srv.port))
        s.sendall(head + body)
        time.sleep(0.1)
        s.close()
    assert wait_for(lambda: metric(srv, 'meshnn_busy_workers') == 0), 'workers still busy'
    assert wait_for(lambda: srv.stderr().count('decode model=ltx status=499') >= 3)

    async def leave_mid_stream():
        ws = await websockets.connect(f'{srv.ws}/v1/models/voc/stream')
        await ws.send(rng.standard_normal((64, 100)).astype(np.float32).tobytes())
        ws.transport.abort()  # no close frame
    asyncio.run(leave_mid_stream())
    assert wait_for(lambda: metric(srv, 'meshnn_open_streams') == 0)
    assert wait_for(lambda: metric(srv, 'meshnn_busy_workers') == 0)


def test_metrics(srv):
    requests.get(f'{srv.url}/healthz')
    text = requests.get(f'{srv.url}/metrics').text
    names = {l.split('{')[0].split(' ')[0] for l in text.splitlines() if l and l[0] != '#'}
    assert all(n.startswith('meshnn_') for n in names)
    for n in ['meshnn_requests_total', 'meshnn_request_duration_seconds_bucket', 'meshnn_queue_depth',
              'meshnn_busy_workers', 'meshnn_audio_seconds_total', 'meshnn_real_time_factor_bucket']:
        assert n in names, n
    assert re.search(r'meshnn_requests_total\{endpoint="healthz",status="200"\} [1-9]', text)


# ---- load -----------------------------------------------------------------------------------------

def test_load_16_clients_and_4_streams(srv, rng):
    inputs = [rng.standard_normal((100, int(n))).astype(np.float32)
              for n in rng.integers(6, 24, size=8)]
    bodies = [npy_bytes(x) for x in inputs]
    want = [post(srv, 'voc', b).content for b in bodies]
    one_f32 = [np.load(io.BytesIO(post(srv, 'voc', b, Accept='application/x-npy').content))
               for b in bodies]
    rss0 = srv.rss_kb()
    errors = []

    def client(seed):
        r = np.random.default_rng(seed)
        with requests.Session() as sess:
            for _ in range(50):
                i = int(r.integers(len(bodies)))
                resp = sess.post(f'{srv.url}/v1/models/voc/vocode', data=bodies[i],
                                 headers={'Content-Type': 'application/x-npy'}, timeout=120)
                if resp.status_code != 200 or resp.content != want[i]:
                    errors.append((i, resp.status_code))

    async def streams():
        async def one(k):
            i = k % len(inputs)
            for _ in range(3):
                pcm, done = await stream(f'{srv.ws}/v1/models/voc/stream', inputs[i].T,
                                         random_cuts(rng, inputs[i].shape[1]))
                got = np.frombuffer(pcm, np.float32)
                if got.size != one_f32[i].size or np.abs(got - one_f32[i][0]).max() > 1e-5:
                    errors.append(('stream', i))
        await asyncio.gather(*(one(k) for k in range(4)))

    ts = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    ts.append(threading.Thread(target=lambda: asyncio.run(streams())))
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:10]
    rss1 = srv.rss_kb()
    assert rss1 < rss0 * 1.25 + 30_000, (rss0, rss1)  # flat: no per-request growth
    assert metric(srv, 'meshnn_queue_depth') == 0


def test_sigterm_drains_in_flight(rng):
    s = Server('--workers', 1, models=[f'ltx={LTX23}'])
    body = npy_bytes(rng.standard_normal((8, 150, 16)).astype(np.float32))
    result = {}
    t = threading.Thread(target=lambda: result.update(r=post(s, 'ltx', body)))
    t.start()
    assert wait_for(lambda: metric(s, 'meshnn_busy_workers') == 1, 30)
    s.sigterm()
    t.join()
    assert result['r'].status_code == 200 and len(result['r'].content) > 1000
    log = s.stderr()
    assert s.stop() == 0
    assert 'draining' in log
    with pytest.raises(requests.ConnectionError):
        requests.get(f'{s.url}/healthz', timeout=2)


# ---- examples/serve ------------------------------------------------------------------------------

def test_examples(srv, tmp_path, rng):
    ex = os.path.join(os.path.dirname(cli_wav.__code__.co_filename), '..', '..', 'examples', 'serve')
    lat = rng.standard_normal((8, 7, 16)).astype(np.float32)
    np.save(tmp_path / 'lat.npy', lat)
    client = [sys.executable, os.path.join(ex, 'client.py'), '--url', srv.url, '--model', 'ltx',
              tmp_path / 'lat.npy']
    r = subprocess.run(client + [tmp_path / 'one.wav'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / 'one.wav').read_bytes() == post(srv, 'ltx', npy_bytes(lat)).content
    r = subprocess.run(client + [tmp_path / 'st.wav', '--stream', '--push-frames', '2'],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'first audio' in r.stdout
    with wave.open(str(tmp_path / 'st.wav')) as w:
        assert w.getnchannels() == 2 and w.getframerate() == 48000
        assert w.getnframes() == np.load(io.BytesIO(post(
            srv, 'ltx', npy_bytes(lat), Accept='application/x-npy').content)).shape[1]
    if shutil.which('curl'):
        r = subprocess.run(['bash', os.path.join(ex, 'curl.sh'), 'ltx', tmp_path / 'lat.npy',
                            tmp_path / 'c.wav', srv.url], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / 'c.wav').read_bytes() == (tmp_path / 'one.wav').read_bytes()
        assert (tmp_path / 'c.l16').stat().st_size == 2 * 2 * w.getnframes()


# ---- slow readers ----------------------------------------------------------------------------------

def ws_frame(payload, opcode=2):
    """One masked client WebSocket frame (RFC 6455 5.2), FIN set."""
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack('>H', n)
    else:
        head += bytes([0x80 | 127]) + struct.pack('>Q', n)
    mask = os.urandom(4)
    body = (np.frombuffer(payload, np.uint8) ^ np.resize(np.frombuffer(mask, np.uint8), n)).tobytes()
    return head + mask + body


def stalled_socket(port):
    """A connection with a tiny receive buffer whose owner never reads."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(('127.0.0.1', port))
    return s


def closed_by_server(s, timeout):
    """Reads (drops) what the server had sent; True once the server has closed its side."""
    s.settimeout(timeout)
    try:
        while s.recv(1 << 16):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_slow_reader_holds_no_worker(rng):
    # Loopback takes ~3 MB into the socket buffers before a write blocks: both answers are larger.
    s = Server('--workers', 2, '--write-timeout', 1.5, '--idle-timeout', 2,
               models=[f'ltx={LTX23}', f'voc={VOC}'])
    try:
        # One-shot: a 4.3 MB answer to a client that never reads. The worker is free once the
        # answer is computed; the write times out (--write-timeout) and the connection closes.
        body = npy_bytes(rng.standard_normal((8, 280, 16)).astype(np.float32))
        http_stall = stalled_socket(s.port)
        http_stall.sendall(b'POST /v1/models/ltx/decode HTTP/1.1\r\nHost: x\r\nContent-Type: '
                           b'application/x-npy\r\nContent-Length: %d\r\n\r\n' % len(body) + body)
        # Stream: 3.7 MB of f32 PCM (3600 mel frames) to a client that stops reading after the
        # handshake; the server reads its next message only once the last answer is written.
        ws_stall = stalled_socket(s.port)
        ws_stall.sendall(b'GET /v1/models/voc/stream?format=f32le HTTP/1.1\r\nHost: x\r\n'
                         b'Upgrade: websocket\r\nConnection: Upgrade\r\n'
                         b'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
                         b'Sec-WebSocket-Version: 13\r\n\r\n')
        head = b''
        while b'\r\n\r\n' not in head:  # a client sends frames after the 101 (RFC 6455 4.1)
            head += ws_stall.recv(1)
        assert status_of(head) == 101
        frames = rng.standard_normal((120, 100)).astype(np.float32).tobytes()
        ws_stall.settimeout(0.5)
        try:
            for _ in range(30):
                ws_stall.sendall(ws_frame(frames))
        except (socket.timeout, BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading: its write is stuck, as it should be
        # Once both answers are computed no worker is held, though neither has been taken.
        assert wait_for(lambda: metric(s, 'meshnn_busy_workers') == 0 and
                        metric(s, 'meshnn_queue_depth') == 0, 60)
        t0 = time.time()
        mel = rng.standard_normal((100, 16)).astype(np.float32)
        for _ in range(3):
            r = post(s, 'voc', npy_bytes(mel), Accept='application/x-npy')
            assert r.status_code == 200
        pcm, done = asyncio.run(stream(f'{s.ws}/v1/models/voc/stream', mel.T, [5]))
        assert done['samples'] == np.load(io.BytesIO(r.content)).shape[1]
        assert time.time() - t0 < 10
        # Both stalled connections are closed by the server within its deadlines.
        assert wait_for(lambda: metric(s, 'meshnn_open_streams') == 0, 10)
        assert wait_for(lambda: metric(s, 'meshnn_open_connections') <= 1, 10)
        assert closed_by_server(http_stall, 5) and closed_by_server(ws_stall, 5)
        http_stall.close()
        ws_stall.close()
        log = s.stderr()
        assert 'POST /v1/models/ltx/decode model=ltx status=499' in log, log
        assert 'GET /v1/models/voc/stream?format=f32le model=voc status=499' in log, log
    finally:
        assert s.stop() == 0


# ---- MiniMax-H3 --------------------------------------------------------------------------------

H3 = fixture('minimax_h3_tiny')


def test_minimax_h3_decode_encode_equal_cli(tmp_path, rng):
    s = Server(models=[f'h3={H3}', f'voc={VOC}'])
    try:
        models = {m['name']: m for m in requests.get(f'{s.url}/v1/models').json()['models']}
        h3 = models['h3']
        assert h3['kind'] == 'minimax-h3' and h3['endpoints'] == ['decode', 'encode', 'stream']
        assert h3['output']['sample_rate'] == 32000 and h3['input']['latent_channels'] == 8
        # /decode: (B, C, T) latents → a WAV with B channels, the CLI's bytes.
        z = rng.standard_normal((2, 8, 13)).astype(np.float32)
        np.save(tmp_path / 'z.npy', z)
        run_cli('audio-decode', '--checkpoint', H3, '--latent', tmp_path / 'z.npy', '--out',
                tmp_path / 'cli.wav', '--threads', 1, '--quiet')
        r = post(s, 'h3', npy_bytes(z))
        assert r.status_code == 200 and r.headers['Content-Type'] == 'audio/wav', r.text
        assert r.content == (tmp_path / 'cli.wav').read_bytes()
        one = post(s, 'h3', npy_bytes(z[0]), Accept='application/x-npy')  # (C, T): one channel
        assert np.load(io.BytesIO(one.content)).shape == (1, 13 * 40)
        l16 = post(s, 'h3', npy_bytes(z), Accept='audio/L16')
        assert l16.headers['Content-Type'] == 'audio/L16; rate=32000; channels=2'
        # /encode: a stereo WAV → (2, C, T) latents, the bytes audio-encode writes.
        w = rng.uniform(-0.5, 0.5, (2, 1000)).astype(np.float32)
        meshnn.write_wav(str(tmp_path / 'x.wav'), w, 32000)
        run_cli('audio-encode', '--checkpoint', H3, '--wav', tmp_path / 'x.wav', '--out',
                tmp_path / 'cli.npy', '--threads', 1, '--quiet')
        r = post(s, 'h3', (tmp_path / 'x.wav').read_bytes(), action='encode', ctype='audio/wav')
        assert r.status_code == 200 and r.headers['Content-Type'] == 'application/x-npy', r.text
        assert r.content == (tmp_path / 'cli.npy').read_bytes()
        assert np.load(io.BytesIO(r.content)).shape == (2, 8, 25)
        # Errors: the CLI's checks, and what this model does not have.
        assert post(s, 'h3', npy_bytes(z[:, :7])).status_code == 400  # 7 latent channels
        assert post(s, 'h3', npy_bytes(np.zeros((65, 8, 3), np.float32))).status_code == 400
        meshnn.write_wav(str(tmp_path / 'y.wav'), w, 24000)
        r = post(s, 'h3', (tmp_path / 'y.wav').read_bytes(), action='encode', ctype='audio/wav')
        assert r.status_code == 400 and '32000 Hz' in r.json()['error']['message']
        assert post(s, 'h3', npy_bytes(z), action='encode').status_code == 415
        assert post(s, 'h3', b'RIFF', ctype='audio/wav').status_code == 415
        assert post(s, 'h3', npy_bytes(z), action='vocode').status_code == 404
        assert post(s, 'voc', npy_bytes(z), action='encode').status_code == 404
        # The decoder streams one item (frames of C values), equal to its one-shot decode.
        one_z0 = np.load(io.BytesIO(one.content))
        pcm, done = asyncio.run(stream(f'{s.ws}/v1/models/h3/stream', z[0].T, [1, 5, 6]))
        assert done['type'] == 'done' and done['samples'] == one_z0.shape[1]
        np.testing.assert_allclose(np.frombuffer(pcm, np.float32)[None], one_z0, rtol=0, atol=1e-5)
    finally:
        assert s.stop() == 0


def test_cached_filters_run_from_private_memory(tmp_path):
    """The server moves the filter cache's entries into its own memory (MESHNN_FILTER_MEMORY's
    default under serve: background — loaded as the files' mappings, then copied in place by an
    idle thread, which /metrics reports): once settled none of its mappings is an entry file. A
    server told `private` copies at load, one told `mapped` keeps the files; all answer with the
    same bytes, before and after the copies."""
    cache = str(tmp_path / 'cache')
    base = dict(os.environ, MESHNN_FILTER_CACHE=cache, MESHNN_FILTER_CACHE_MIN_KB='0')
    base.pop('MESHNN_FILTER_MEMORY', None)
    latent = open(fixture('ltx23_small_latent.npy'), 'rb').read()

    def entry_maps(s):
        with open(f'/proc/{s.proc.pid}/maps') as f:
            return [l for l in f if cache in l]

    def gauge(s, name):
        text = requests.get(f'{s.url}/metrics').text
        return int(re.search(rf'^{name} (\d+)$', text, re.M).group(1))

    answers = {}
    for label, env in [('cold', base), ('warm', base),
                       ('private', dict(base, MESHNN_FILTER_MEMORY='private')),
                       ('mapped', dict(base, MESHNN_FILTER_MEMORY='mapped'))]:
        s = Server(models=[f'ltx={LTX23}'], env=env)
        try:
            r = post(s, 'ltx', latent)  # while the copies may still run
            assert r.status_code == 200, r.text
            answers[label] = r.content
            if label in ('cold', 'warm'):
                deadline = time.time() + 60
                while gauge(s, 'meshnn_filter_cache_copies_pending') and time.time() < deadline:
                    time.sleep(0.1)
                assert gauge(s, 'meshnn_filter_cache_copies_pending') == 0
                r = post(s, 'ltx', latent)
                assert r.status_code == 200, r.text
                assert r.content == answers[label]
            maps = entry_maps(s)
            private_bytes = gauge(s, 'meshnn_filter_cache_private_bytes')
            setting = re.search(r'^meshnn_filter_cache_memory\{setting="(\w+)"\} 1$',
                                requests.get(f'{s.url}/metrics').text, re.M).group(1)
            assert setting == {'cold': 'background', 'warm': 'background'}.get(label, label)
        finally:
            assert s.stop() == 0, s.stderr()
        if label == 'mapped':
            assert maps, 'a mapped server maps its entries'
            assert private_bytes == 0
        else:
            assert maps == [], maps
            assert private_bytes > 0
        assert any(n.endswith('.mfc') for n in os.listdir(os.path.join(cache, 'v1')))
    assert answers['cold'] == answers['warm'] == answers['private'] == answers['mapped']
