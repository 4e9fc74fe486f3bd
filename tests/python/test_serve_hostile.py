"""`meshnn serve` against the third hostile round (issue 35): one stream frame definition per model
(stereo MiniMax-H3 over the WebSocket and `--frames-from`), one item / channel bound on every
route, drains that answer every open request, bounded options, client errors for absurd inputs,
HTTP semantics (q-values, codings, HEAD, escaped paths), no scratch files, and the example
client. Each test failed before its fix."""
import asyncio
import io
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import wave

import numpy as np
import pytest

import meshnn
from conftest import cli_path, fixture, run_cli
from test_serve import VOC, LTX23, Server, npy_bytes, post, raw, status_of

requests = pytest.importorskip('requests')
websockets = pytest.importorskip('websockets')

H3 = fixture('minimax_h3_tiny')


def h3_server(*args):
    return Server(*args, models=[f'h3={H3}', f'voc={VOC}', f'ltx={LTX23}'])


def decode_npy(s, model, x):
    r = post(s, model, npy_bytes(x), Accept='application/x-npy')
    assert r.status_code == 200, r.text
    return np.load(io.BytesIO(r.content))


async def stream(url, frames, cuts):
    """frames (n, F) sent in messages cut at `cuts`, then a flush → (f32 PCM bytes, done);
    `url` carries its query (items=N)."""
    async with websockets.connect(f'{url}&format=f32le', max_size=None) as ws:
        edges = [0, *cuts, len(frames)]
        for a, b in zip(edges[:-1], edges[1:]):
            await ws.send(np.ascontiguousarray(frames[a:b]).tobytes())
        await ws.send(json.dumps({'type': 'flush'}))
        out = []
        while True:
            m = await ws.recv()
            if isinstance(m, str):
                return b''.join(out), json.loads(m)
            out.append(m)


def item_major_frames(z):
    """(B, C, T) → frames (T, B·C): frame t = z[:, :, t], item after item."""
    return np.ascontiguousarray(z.transpose(2, 0, 1).reshape(z.shape[2], -1))


async def ws_error(url, payload):
    """Sends one message, returns (the error frame, the close code)."""
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(payload)
        m = json.loads(await ws.recv())
        with pytest.raises(websockets.ConnectionClosed) as e:
            await ws.recv()
        return m, e.value.code


# ---- finding 2: one stream frame definition -----------------------------------------------------

def test_h3_stereo_stream_equals_decode_over_websocket_and_frames_from(tmp_path, rng):
    s = h3_server()
    try:
        z = rng.standard_normal((2, 8, 11)).astype(np.float32)  # stereo: two items
        one = decode_npy(s, 'h3', z)  # (2, 11·800)
        url = f'{s.ws}/v1/models/h3/stream'
        pcm, done = asyncio.run(stream(url + '?items=2', item_major_frames(z), [1, 4, 9]))
        assert done['type'] == 'done' and done['items'] == 2
        got = np.frombuffer(pcm, np.float32).reshape(-1, 2).T  # interleaved L R
        assert got.shape == one.shape and done['samples'] == one.shape[1]
        np.testing.assert_allclose(got, one, rtol=0, atol=1e-5)  # the stream contract
        # Mono frames (C values) on a stereo stream: refused, never decoded as something else.
        m, code = asyncio.run(ws_error(url + '?items=2', z[0].T[:3].tobytes()))
        assert m['type'] == 'error' and code == 1007
        assert '2 items' in m['message'] and 'whole number of frames' in m['message'], m
        # Item counts the model cannot take are refused before the upgrade.
        for bad in ('items=65', 'items=0', 'items=two'):
            assert requests.get(f'{s.url}/v1/models/h3/stream?{bad}', headers={
                'Connection': 'Upgrade', 'Upgrade': 'websocket', 'Sec-WebSocket-Version': '13',
                'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ=='}).status_code == 400, bad
        r = requests.get(f'{s.url}/v1/models/ltx/stream?items=2', headers={
            'Connection': 'Upgrade', 'Upgrade': 'websocket', 'Sec-WebSocket-Version': '13',
            'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ=='})
        assert r.status_code == 400 and 'one item' in r.json()['error']['message']
        # The CLI reads the same frames: --items 2 from raw float32 equals /decode; without
        # --items the raw frames are mono (one item), as the WebSocket's default.
        (tmp_path / 'st.raw').write_bytes(item_major_frames(z).tobytes())
        base = ['audio-decode', '--checkpoint', H3, '--stream', '--threads', 1, '--quiet']
        run_cli(*base, '--frames-from', tmp_path / 'st.raw', '--items', 2, '--out',
                tmp_path / 'st.wav')
        samples, _ = meshnn.read_wav(tmp_path / 'st.wav')  # (C, T)
        np.testing.assert_allclose(samples, one, rtol=0, atol=1e-5)
        (tmp_path / 'mono.raw').write_bytes(item_major_frames(z[:1]).tobytes())
        run_cli(*base, '--frames-from', tmp_path / 'mono.raw', '--out', tmp_path / 'mono.wav')
        mono, _ = meshnn.read_wav(tmp_path / 'mono.wav')
        np.testing.assert_allclose(mono, decode_npy(s, 'h3', z[:1]), rtol=0, atol=1e-5)
        # A .npy and a disagreeing --items are refused.
        np.save(tmp_path / 'z.npy', z)
        r = subprocess.run([cli_path(), *map(str, base), '--latent', tmp_path / 'z.npy',
                            '--items', '1', '--out', tmp_path / 'x.wav'],
                           capture_output=True, text=True)
        assert r.returncode == 1 and 'holds 2 item' in r.stderr, r.stderr
    finally:
        assert s.stop() == 0


# ---- finding 4: one item / channel bound, audio seconds count channels ---------------------------

def test_encode_channel_bound_and_audio_seconds_count_channels(tmp_path, rng):
    s = h3_server('--max-audio-seconds', 0.02)  # the tiny H3: hop 40, 800 latents per second
    try:
        w = rng.uniform(-0.5, 0.5, (65, 400)).astype(np.float32)  # 65 channels
        meshnn.write_wav(str(tmp_path / 'many.wav'), w, 32000)
        r = post(s, 'h3', (tmp_path / 'many.wav').read_bytes(), action='encode', ctype='audio/wav')
        assert r.status_code == 400 and '65 channels' in r.json()['error']['message'], r.text
        cli = subprocess.run([cli_path(), 'audio-encode', '--checkpoint', H3, '--wav',
                              tmp_path / 'many.wav', '--out', tmp_path / 'z.npy'],
                             capture_output=True, text=True)
        assert cli.returncode == 1 and '65 channels' in cli.stderr, cli.stderr
        # 12.5 ms per channel: mono passes, stereo (25 ms of audio in all) is over 20 ms.
        z = rng.standard_normal((2, 8, 10)).astype(np.float32)
        assert post(s, 'h3', npy_bytes(z[:1])).status_code == 200
        r = post(s, 'h3', npy_bytes(z))
        assert r.status_code == 413 and 'channels' in r.json()['error']['message'], r.text
        w2 = rng.uniform(-0.5, 0.5, (2, 400)).astype(np.float32)
        meshnn.write_wav(str(tmp_path / 'st.wav'), w2, 32000)
        r = post(s, 'h3', (tmp_path / 'st.wav').read_bytes(), action='encode', ctype='audio/wav')
        assert r.status_code == 413, r.text
    finally:
        assert s.stop() == 0


# ---- finding 5: drains answer every open request ------------------------------------------------

def open_partial_post(port):
    """A decode request whose body never completes: open on the server until it is answered."""
    c = socket.create_connection(('127.0.0.1', port), timeout=30)
    c.sendall(b'POST /v1/models/voc/decode HTTP/1.1\r\nHost: x\r\nContent-Type: '
              b'application/x-npy\r\nContent-Length: 100000\r\n\r\n' + b'\x93NUMPY')
    return c


def read_answer(c):
    out = b''
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    c.close()
    return out


def upgrade_and_wait(ws_url, result):
    async def run():
        async with websockets.connect(ws_url, max_size=None) as ws:
            m = await ws.recv()  # the server speaks first only when it stops
            result['msg'] = json.loads(m)
            try:
                await ws.recv()
            except websockets.ConnectionClosed as e:
                result['code'] = e.code
    return asyncio.run(run())


@pytest.mark.parametrize('how', ['deadline', 'second_signal'])
def test_drain_answers_503_to_open_requests(how):
    import threading
    s = Server('--drain-timeout', 1.5 if how == 'deadline' else 120, '--body-timeout', 60,
               models=[f'voc={VOC}'])
    ws_result = {}
    t = threading.Thread(target=upgrade_and_wait,
                         args=(f'{s.ws}/v1/models/voc/stream', ws_result))
    t.start()
    c = open_partial_post(s.port)
    time.sleep(0.5)
    t0 = time.time()
    s.sigterm()
    time.sleep(0.3)
    # While draining, the listener answers: /readyz 503, new work 503 (not a refused connection).
    r = requests.get(f'{s.url}/readyz', timeout=5)
    assert r.status_code == 503 and r.json()['error']['code'] == 'draining'
    assert requests.get(f'{s.url}/healthz', timeout=5).status_code == 200
    r = post(s, 'voc', npy_bytes(np.ones((100, 4), np.float32)))
    assert r.status_code == 503 and r.json()['error']['code'] == 'draining'
    if how == 'second_signal':
        s.proc.send_signal(signal.SIGTERM)
    out = read_answer(c)
    t.join(30)
    assert status_of(out) == 503 and b'"draining"' in out, out[:300]
    assert ws_result.get('msg', {}).get('type') == 'error', ws_result
    rc = s.proc.wait(30)
    assert time.time() - t0 < 20
    log = s.stderr()
    assert rc == 4, log  # requests were cut: docs/serve.md, "Stopping"
    assert 'POST /v1/models/voc/decode model=voc status=503' in log, log
    assert 'GET /v1/models/voc/stream model=voc status=503' in log, log
    assert s.stop() == 4


# ---- findings 7, 8: bounded options ------------------------------------------------------------

@pytest.mark.parametrize('opt,value', [
    ('--request-timeout', 'nan'), ('--request-timeout', 'inf'), ('--idle-timeout', 'nan'),
    ('--drain-timeout', 'nan'), ('--drain-timeout', '-1'), ('--max-audio-seconds', 'nan'),
    ('--max-audio-seconds', '1e300'), ('--cache-max-age', 'inf'), ('--max-request-mb', 'nan'),
    ('--header-timeout', '0'), ('--workers', '0'), ('--workers', '100000'), ('--max-queue', '0'),
    ('--io-threads', '0'), ('--max-connections', '-3')])
def test_bounded_options_refused(opt, value):
    r = subprocess.run([cli_path(), 'serve', '--port', '0', '--model', f'voc={VOC}', opt, value],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and opt in r.stderr, (r.returncode, r.stderr)


def test_unwritable_port_file_is_an_error(tmp_path):
    r = subprocess.run([cli_path(), 'serve', '--port', '0', '--model', f'voc={VOC}',
                        '--port-file', str(tmp_path / 'no' / 'such' / 'port')],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and '--port-file' in r.stderr, r.stderr


def test_worker_thread_that_cannot_start_is_a_clean_error():
    # 256 workers need 2 GiB of thread stacks; the address space allows far less.
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
    r = subprocess.run([cli_path(), 'serve', '--port', '0', '--model', f'voc={VOC}',
                        '--workers', '256', '--threads-per-worker', '1'], capture_output=True,
                       text=True, timeout=60, preexec_fn=limit)
    assert r.returncode == 1, (r.returncode, r.stderr)  # not SIGABRT (-6)
    assert 'cannot start worker thread' in r.stderr, r.stderr


# ---- finding 10: absurd inputs are the client's, with the cause --------------------------------

def test_absurd_inputs_answer_4xx_with_the_cause(tmp_path, rng):
    s = h3_server()
    try:
        mel = np.full((100, 8), 3e38, np.float32)
        r = post(s, 'voc', npy_bytes(mel))
        assert r.status_code == 422, r.text
        e = r.json()['error']
        assert e['code'] == 'unprocessable' and 'non-finite' in e['message'], e
        loud = np.full(4000, 1e30, np.float32)
        meshnn.write_wav(str(tmp_path / 'loud.wav'), loud, 32000)
        r = post(s, 'h3', (tmp_path / 'loud.wav').read_bytes(), action='encode', ctype='audio/wav')
        assert r.status_code in (400, 422) and 'internal' not in r.text, r.text
        # The same table over the WebSocket: the cause in the error frame, not "internal error".
        m, code = asyncio.run(ws_error(f'{s.ws}/v1/models/voc/stream', mel.tobytes() * 8))
        assert m['type'] == 'error' and 'non-finite' in m['message'] and code == 1007, (m, code)
        assert requests.get(f'{s.url}/healthz').status_code == 200
    finally:
        assert s.stop() == 0


# ---- finding 12: HTTP semantics ------------------------------------------------------------------

def test_http_accept_codings_head_and_escaped_paths(rng):
    s = Server(models=[f'voc={VOC}'])
    try:
        body = npy_bytes(rng.standard_normal((100, 6)).astype(np.float32))
        r = post(s, 'voc', body, Accept='audio/wav;q=0, application/x-npy')
        assert r.status_code == 200 and r.headers['Content-Type'] == 'application/x-npy'
        r = post(s, 'voc', body, Accept='application/x-npy;q=0.5, audio/L16;q=0.9')
        assert r.headers['Content-Type'].startswith('audio/L16')
        assert post(s, 'voc', body, Accept='audio/wav;q=0').status_code == 406
        assert post(s, 'voc', body, Accept='*/*;q=0').status_code == 406
        # Unsupported codings are refused, not parsed as if absent.
        head = (b'POST /v1/models/voc/decode HTTP/1.1\r\nHost: x\r\nContent-Type: '
                b'application/x-npy\r\n')
        chunk = b'%x\r\n%s\r\n0\r\n\r\n' % (len(body), body)
        out = raw(s.port, head + b'Transfer-Encoding: gzip, chunked\r\n\r\n' + chunk)
        assert status_of(out) == 501, out[:200]
        out = raw(s.port, head + b'Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n'
                  % len(body) + body)
        assert status_of(out) == 415, out[:200]
        # HEAD: GET's status and headers, no body; 405 without a body where GET is not allowed.
        for path in ('/healthz', '/v1/models'):
            get = requests.get(s.url + path)
            out = raw(s.port, b'HEAD %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
                      % path.encode(), shut=True)
            head_part, _, rest = out.partition(b'\r\n\r\n')
            assert status_of(out) == 200 and rest == b'', out
            assert b'content-length: %d' % len(get.content) in head_part.lower()
        out = raw(s.port, b'HEAD /v1/models/voc/decode HTTP/1.1\r\nHost: x\r\n'
                  b'Connection: close\r\n\r\n', shut=True)
        assert status_of(out) == 405 and out.partition(b'\r\n\r\n')[2] == b''
        # Escaped paths are decoded before routing.
        r = requests.get(f'{s.url}/v1/models/%76oc')
        assert r.status_code == 200 and r.json()['name'] == 'voc'
        r = post(s, '%76%6Fc', body)
        assert r.status_code == 200 and r.headers['Content-Type'] == 'audio/wav'
        for bad in (b'v%zzc', b'a%2Fb', b'v%0', b'%00'):  # raw: requests would re-quote them
            out = raw(s.port, b'GET /v1/models/%s HTTP/1.1\r\nHost: x\r\n\r\n' % bad)
            assert status_of(out) == 400, (bad, out[:200])
    finally:
        assert s.stop() == 0


# ---- finding 6: no scratch folder --------------------------------------------------------------

def test_wav_answers_leave_nothing_in_tmpdir(rng):
    s = Server(models=[f'voc={VOC}'])
    try:
        r = post(s, 'voc', npy_bytes(rng.standard_normal((100, 9)).astype(np.float32)))
        assert r.status_code == 200 and r.content[:4] == b'RIFF'
        assert sorted(os.listdir(s.dir)) == ['port', 'stderr.log'], os.listdir(s.dir)
    finally:
        assert s.stop() == 0


# ---- finding 14: the example client --------------------------------------------------------------

def test_example_client_same_path_and_stereo_h3_stream(tmp_path, rng):
    ex = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples', 'serve',
                      'client.py')
    s = h3_server()
    try:
        z = rng.standard_normal((2, 8, 9)).astype(np.float32)
        np.save(tmp_path / 'z.npy', z)
        before = (tmp_path / 'z.npy').read_bytes()
        base = [sys.executable, ex, '--url', s.url, '--model', 'h3']
        r = subprocess.run(base + [tmp_path / 'z.npy', tmp_path / 'z.npy'], capture_output=True,
                           text=True)
        assert r.returncode != 0 and 'overwrite' in r.stderr, r.stderr
        assert (tmp_path / 'z.npy').read_bytes() == before
        r = subprocess.run(base + [tmp_path / 'z.npy', tmp_path / 'st.wav', '--stream',
                                   '--push-frames', '2'], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        one = decode_npy(s, 'h3', z)
        with wave.open(str(tmp_path / 'st.wav')) as w:
            assert w.getnchannels() == 2 and w.getnframes() == one.shape[1]
            got = np.frombuffer(w.readframes(w.getnframes()), '<i2').reshape(-1, 2).T / 32768
        assert np.abs(got - np.clip(one, -1, 1)).max() < 2 / 32768
    finally:
        assert s.stop() == 0
