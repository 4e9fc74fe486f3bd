"""The page `meshnn serve` answers at /, in a real headless chromium (cdp.py): it loads, shows the
server's 401 as worded until the key is given, lists every served model, decodes an example and
an uploaded WAV, round-trips through an encoder, streams to the end with Web Audio, and shows a
bad upload's error. One screenshot per state under the test's temp folder. Also: /health, /ready,
/openapi.json against the routes the server answers, --cors-origin, the metric names, and
`meshnn verify --report / --plot`."""
import io
import json
import os
import re
import struct
import subprocess
import zlib

import numpy as np
import pytest

import meshnn
from cdp import Browser
from conftest import SRC, cli_path, fixture, run_cli
from test_serve import KEY, LTX23, VOC, Server

requests = pytest.importorskip('requests')

H3 = fixture('minimax_h3_tiny')


@pytest.fixture(scope='module')
def keyed():
    s = Server('--api-key', KEY, '--workers', 2, '--cors-origin', 'http://app.example',
               models=[f'voc={VOC}', f'ltx={LTX23}', f'h3={H3}'])
    yield s
    assert s.stop() == 0, s.stderr()


def auth():
    return {'Authorization': f'Bearer {KEY}'}


def wav_frames(body):
    """(frames, rate) of a WAV answer (the server writes float32 WAVs through libsndfile)."""
    i = body.index(b'fmt ')
    channels, rate = struct.unpack('<HI', body[i + 10:i + 16])
    bits = struct.unpack('<H', body[i + 22:i + 24])[0]
    d = body.index(b'data')
    n = struct.unpack('<I', body[d + 4:d + 8])[0]
    return n // (channels * bits // 8), rate


def expected_answer(srv, model, seconds, seed):
    """The WAV the page's example decode must give: the same request, made here."""
    x = requests.get(f'{srv.url}/v1/models/{model}/example?seconds={seconds}&seed={seed}',
                     headers=auth()).content
    r = requests.post(f'{srv.url}/v1/models/{model}/decode', data=x,
                      headers={**auth(), 'Content-Type': 'application/x-npy'})
    assert r.status_code == 200, r.text
    return r.content


def expected_frames(srv, model, seconds, seed):
    return wav_frames(expected_answer(srv, model, seconds, seed))


def card(model, what):
    return f'document.querySelector(\'[data-model="{model}"]\'){what}'


def click(b, model, button):
    b.evaluate(card(model, f'.querySelector(".{button}").click()'))


def wait_state(b, model, states, timeout=120):
    states = json.dumps(states)
    b.wait_for(f'{states}.includes({card(model, ".dataset.state")})', timeout,
               what=f'{model} to reach {states}')
    return b.evaluate(card(model, '.dataset.state'))


def test_page_in_browser(keyed, tmp_path, rng):
    b = Browser(str(tmp_path))
    shots = tmp_path / 'screenshots'
    shots.mkdir()
    try:
        # Without the key: the server's 401, as the server words it.
        b.goto(keyed.url + '/')
        b.wait_for('document.body.dataset.loaded === "true"')
        err = b.evaluate('document.getElementById("global-error").textContent')
        assert err.startswith('HTTP 401 unauthorized: missing or wrong API key'), err
        b.screenshot(shots / '01_no_key.png')

        # The key, entered once: every served model is listed.
        b.evaluate(f'document.getElementById("api-key").value = {json.dumps(KEY)}; '
                   'document.getElementById("key-form").requestSubmit()')
        served = sorted(m['name'] for m in requests.get(f'{keyed.url}/v1/models',
                                                        headers=auth()).json()['models'])
        b.wait_for(f'document.body.dataset.models === {json.dumps(",".join(served))}',
                   what='the model list')
        assert b.evaluate('document.querySelectorAll(".card").length') == len(served)
        b.screenshot(shots / '02_models.png')

        # A decode of the server's example input: the audio element gets the answer's duration.
        b.evaluate(card('ltx', '.querySelector(".seed").value = 3'))
        click(b, 'ltx', 'example')
        assert wait_state(b, 'ltx', ['input', 'error']) == 'input', b.evaluate(card('ltx', '.dataset.error'))
        click(b, 'ltx', 'run')
        assert wait_state(b, 'ltx', ['done', 'error']) == 'done', b.evaluate(card('ltx', '.dataset.error'))
        frames, rate = expected_frames(keyed, 'ltx', 1, 3)
        assert int(b.evaluate(card('ltx', '.dataset.samples'))) == frames
        duration = float(b.evaluate(card('ltx', '.dataset.duration')))
        assert abs(duration - frames / rate) < 2e-3, (duration, frames / rate)
        assert b.evaluate(card('ltx', '.querySelector(".player").duration')) == pytest.approx(
            frames / rate, abs=2e-3)

        # Against a reference WAV: meshnn verify's PSNR and log-spectral distance, in the page.
        answer = tmp_path / 'answer.wav'
        answer.write_bytes(expected_answer(keyed, 'ltx', 1, 3))
        y = np.load(io.BytesIO(requests.post(
            f'{keyed.url}/v1/models/ltx/decode', headers={**auth(), 'Content-Type':
                                                          'application/x-npy',
                                                          'Accept': 'application/x-npy'},
            data=requests.get(f'{keyed.url}/v1/models/ltx/example?seconds=1&seed=3',
                              headers=auth()).content).content))
        reference = tmp_path / 'reference.wav'
        meshnn.write_wav(reference, (0.9 * y + 0.01 * rng.standard_normal(y.shape)).astype(
            np.float32), rate)
        r = subprocess.run([cli_path(), 'verify', str(reference), str(answer), '--json',
                            '--level-band-db', '100'], capture_output=True, text=True)
        want = json.loads(r.stdout)
        b.set_files('[data-model="ltx"] .reference', [reference])
        b.wait_for(card('ltx', '.dataset.psnr'), what='the comparison')
        assert float(b.evaluate(card('ltx', '.dataset.psnr'))) == pytest.approx(
            want['psnr_db'], abs=0.01)
        assert float(b.evaluate(card('ltx', '.dataset.lsd'))) == pytest.approx(
            want['lsd_db'], abs=0.01)
        assert b.evaluate(card('ltx', '.querySelector(".compare").hidden')) is False

        # An uploaded WAV: copy synthesis through the vocoder; a round trip through H3's encoder.
        wav = tmp_path / 'speech.wav'
        meshnn.write_wav(wav, (0.3 * rng.standard_normal(12000)).astype(np.float32), 24000)
        b.set_files('[data-model="voc"] .upload', [wav])
        assert wait_state(b, 'voc', ['input']) == 'input'
        click(b, 'voc', 'run')
        assert wait_state(b, 'voc', ['done', 'error']) == 'done', b.evaluate(card('voc', '.dataset.error'))
        wav32 = tmp_path / 'speech_h3.wav'
        h3_rate = requests.get(f'{keyed.url}/v1/models/h3', headers=auth()).json()['output'][
            'sample_rate']
        meshnn.write_wav(wav32, (0.3 * rng.standard_normal(16000)).astype(np.float32), h3_rate)
        b.set_files('[data-model="h3"] .upload', [wav32])
        assert wait_state(b, 'h3', ['input']) == 'input'
        click(b, 'h3', 'roundtrip')
        assert wait_state(b, 'h3', ['done', 'error']) == 'done', b.evaluate(card('h3', '.dataset.error'))
        assert int(b.evaluate(card('h3', '.dataset.samples'))) >= 16000
        b.screenshot(shots / '03_decoded.png')

        # Streams play to the end: every PCM message scheduled as it came and played out.
        latency = {}
        for model in ('voc', 'ltx'):
            b.evaluate(card(model, '.querySelector(".seed").value = 5'))
            click(b, model, 'example')
            assert wait_state(b, model, ['input', 'error']) == 'input'
            click(b, model, 'stream')
            assert wait_state(b, model, ['played', 'error'], 180) == 'played', \
                b.evaluate(card(model, '.dataset.error'))
            frames, _ = expected_frames(keyed, model, 1, 5)
            got = {k: float(b.evaluate(card(model, f'.dataset.{k}')))
                   for k in ('streamSamples', 'doneSamples', 'firstAudioMs', 'maxLeadMs')}
            assert got['streamSamples'] == got['doneSamples'] == frames, got
            assert got['firstAudioMs'] > 0 and got['maxLeadMs'] > 0
            latency[model] = got
            b.screenshot(shots / f'04_streamed_{model}.png')
        (tmp_path / 'first_audio.json').write_text(json.dumps(latency, indent=1))
        print('page first-audio latency:', json.dumps(latency))

        # A bad upload: the server's 400, worded as the server words it.
        bad = tmp_path / 'bad.npy'
        bad.write_bytes(b'\x93NUMPY this is not an array')
        want = requests.post(f'{keyed.url}/v1/models/ltx/decode', data=bad.read_bytes(),
                             headers={**auth(), 'Content-Type': 'application/x-npy'}).json()
        b.set_files('[data-model="ltx"] .upload', [bad])
        click(b, 'ltx', 'run')
        assert wait_state(b, 'ltx', ['error', 'done']) == 'error'
        shown = b.evaluate(card('ltx', '.querySelector(".error").textContent'))
        assert shown == f'HTTP 400 {want["error"]["code"]}: {want["error"]["message"]}', shown
        assert b.evaluate(card('ltx', '.querySelector(".error").hidden')) is False
        b.screenshot(shots / '05_error.png')
        assert not b.errors, b.errors
        for p in shots.iterdir():
            assert p.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and p.stat().st_size > 5000, p
    finally:
        b.close()


# ---- conventions: /health, /ready, /openapi.json, CORS, metric names --------------------------

def test_health_ready(keyed):
    assert requests.get(f'{keyed.url}/health').json() == {'status': 'ok'}
    r = requests.get(f'{keyed.url}/ready')  # probes need no key
    assert r.status_code == 200
    j = r.json()
    assert j['status'] == 'ready' and j['models'] == 3 and j['workers'] == 2
    assert {'queue_depth', 'queue_capacity', 'busy_workers', 'open_streams'} <= set(j)


def test_ready_is_503_while_draining():
    import socket
    import time
    s = Server('--drain-timeout', 30, '--body-timeout', 30, models=[f'voc={VOC}'])
    try:
        # A request still sending its body keeps the drain open.
        hold = socket.create_connection(('127.0.0.1', s.port))
        hold.sendall(b'POST /v1/models/voc/decode HTTP/1.1\r\nHost: x\r\n'
                     b'Content-Type: application/x-npy\r\nContent-Length: 100\r\n\r\n')
        assert requests.get(f'{s.url}/ready').status_code == 200
        s.sigterm()
        t0 = time.time()
        while (r := requests.get(f'{s.url}/ready')).status_code != 503:
            assert time.time() - t0 < 10, 'no 503 while draining'
            time.sleep(0.05)
        j = r.json()
        assert j['status'] == 'draining' and j['error']['code'] == 'draining', j
        assert j['models'] == 1 and r.headers['Retry-After'] == '5'
        assert requests.get(f'{s.url}/health').status_code == 200  # alive while draining
        hold.close()
    finally:
        assert s.stop() == 0, s.stderr()


def test_openapi_lists_exactly_the_answered_routes(keyed):
    doc = requests.get(f'{keyed.url}/openapi.json').json()
    assert doc['openapi'].startswith('3.')
    assert doc['components']['schemas']['Error']['required'] == ['error']
    paths = doc['paths']
    # Every documented route is answered (not "unknown path"), with its method and no other.
    for path, ops in paths.items():
        for method, op in ops.items():
            url = keyed.url + path.replace('{name}', {'/encode': 'h3', '/vocode': 'voc'}.get(
                path[path.rfind('/'):], 'ltx'))
            r = requests.request(method.upper(), url, headers=auth(), data=b'' if method == 'post'
                                 else None)
            assert str(r.status_code) in op['responses'], (method, path, r.status_code, r.text)
            if r.status_code == 404:
                assert 'unknown path' not in r.text, (path, r.text)
            other = 'GET' if method == 'post' else 'POST'
            r = requests.request(other, url, headers=auth(), data=b'')
            assert r.status_code == 405, (other, path, r.status_code)
    # Every route the server answers is documented: the paths of the docs, the page's files and
    # some near misses; a path outside the document is "unknown path".
    answered = set()
    web = sorted('/' + n for n in os.listdir(os.path.join(SRC, 'web')) if n != 'index.html')
    for p in ['/', *web, '/index.html', '/web/app.js', '/health', '/healthz', '/ready',
              '/readyz', '/metrics', '/openapi.json', '/openapi', '/v1/models', '/v1/models/',
              '/v1/models/ltx', '/v1/models/ltx/decode', '/v1/models/voc/vocode',
              '/v1/models/h3/encode', '/v1/models/ltx/stream', '/v1/models/ltx/example',
              '/v1/models/ltx/decode/x', '/v1', '/favicon.ico', '/v1/models/ltx/info']:
        for m in ('GET', 'POST'):
            r = requests.request(m, keyed.url + p, headers=auth(), data=b'')
            if not (r.status_code == 404 and 'unknown path' in r.text):
                answered.add(re.sub(r'^/v1/models/[a-z0-9]+', '/v1/models/{name}', p))
    legacy = {'/healthz', '/readyz'}
    assert answered - legacy == set(paths), sorted(answered ^ set(paths))


def test_cors(keyed):
    h = {**auth(), 'Origin': 'http://app.example'}
    r = requests.get(f'{keyed.url}/v1/models', headers=h)
    assert r.headers['Access-Control-Allow-Origin'] == 'http://app.example'
    assert 'X-Request-Id' in r.headers['Access-Control-Expose-Headers']
    r = requests.get(f'{keyed.url}/v1/models', headers={**auth(), 'Origin': 'http://evil.example'})
    assert 'Access-Control-Allow-Origin' not in r.headers
    # The preflight needs no key and names what the route allows.
    r = requests.options(f'{keyed.url}/v1/models/ltx/decode',
                         headers={'Origin': 'http://app.example',
                                  'Access-Control-Request-Method': 'POST',
                                  'Access-Control-Request-Headers': 'authorization,content-type'})
    assert r.status_code == 204
    assert 'POST' in r.headers['Access-Control-Allow-Methods']
    assert 'Authorization' in r.headers['Access-Control-Allow-Headers']


def test_stream_key_in_query_is_redacted(keyed):
    import asyncio
    websockets = pytest.importorskip('websockets')
    x = np.load(io.BytesIO(requests.get(f'{keyed.url}/v1/models/voc/example?seconds=0.3',
                                        headers=auth()).content))
    frames = np.ascontiguousarray(x[0].T, np.float32)

    async def go(key):
        async with websockets.connect(f'{keyed.ws}/v1/models/voc/stream?api_key={key}') as ws:
            await ws.send(frames.tobytes())
            await ws.send(json.dumps({'type': 'flush'}))
            while True:
                m = await ws.recv()
                if isinstance(m, str):
                    return json.loads(m)
    assert asyncio.run(go(KEY))['type'] == 'done'
    with pytest.raises(websockets.exceptions.InvalidStatusCode) as e:
        asyncio.run(go('wrong'))
    assert e.value.status_code == 401
    log = keyed.stderr()
    assert 'api_key=***' in log and KEY not in log


def test_metric_names_follow_prometheus_rules(keyed):
    text = requests.get(f'{keyed.url}/metrics', headers=auth()).text
    types = dict(re.findall(r'^# TYPE (\S+) (\S+)$', text, re.M))
    assert types['meshnn_request_duration_seconds'] == 'histogram'
    assert types['meshnn_time_to_first_audio_seconds'] == 'histogram'
    assert types['meshnn_real_time_factor'] == 'histogram'
    for name, kind in types.items():
        assert name.startswith('meshnn_'), name
        if kind == 'counter':
            assert name.endswith('_total'), name
        else:
            assert not name.endswith('_total'), name
        # Base units only: seconds and bytes, never ms / kb / mb.
        assert not re.search(r'_(ms|milliseconds|kb|mb|kib|mib)(_|$)', name), name
    # After a stream (test_stream_key_in_query_is_redacted), time to first audio per model.
    assert re.search(r'^meshnn_time_to_first_audio_seconds_count\{model="voc"\} [1-9]', text, re.M)


# ---- meshnn verify --report / --plot ------------------------------------------------------------

def png_info(data):
    """(width, height) of a PNG whose every chunk's CRC holds and whose image data inflates to
    exactly height rows of 1 + 3 · width bytes (8-bit RGB)."""
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'no PNG signature'
    pos, idat, ihdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        assert struct.unpack('>I', data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body)
        if kind == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
        if kind == b'IEND':
            break
    w, h, depth, color = ihdr[:4]
    assert (depth, color) == (8, 2)
    assert len(zlib.decompress(idat)) == h * (1 + 3 * w)
    return w, h


def two_decodes(tmp_path, rng):
    """A: noise plus a tone; B: the same with a band 20 dB louder in its second half."""
    sr, n = 24000, 24000
    t = np.arange(n) / sr
    a = (0.1 * rng.standard_normal(n) + 0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    b = a.copy()
    b[n // 2:] += 0.5 * np.sin(2 * np.pi * 5000 * t[n // 2:]).astype(np.float32)
    meshnn.write_wav(tmp_path / 'a.wav', a, sr)
    meshnn.write_wav(tmp_path / 'b.wav', b, sr)
    return tmp_path / 'a.wav', tmp_path / 'b.wav'


def test_verify_plot_writes_png(tmp_path, rng):
    a, b = two_decodes(tmp_path, rng)
    run_cli('verify', a, a, '--plot', tmp_path / 'same.png')
    run_cli('verify', a, b, '--plot', tmp_path / 'diff.png', '--level-band-db', 100)
    w, h = png_info((tmp_path / 'diff.png').read_bytes())
    assert w > 50 and h > 50
    # Where they differ the image differs from the equal pair's (red appears).
    assert (tmp_path / 'diff.png').read_bytes() != (tmp_path / 'same.png').read_bytes()
    # A picture never replaces an input, nor the other picture.
    before = a.read_bytes()
    for args in (['--plot', a], ['--report', b], ['--plot', tmp_path / 'x', '--report',
                                                  tmp_path / 'x']):
        r = subprocess.run([cli_path(), 'verify', a, b, *map(str, args)], capture_output=True,
                           text=True)
        assert r.returncode != 0 and ('--plot' in r.stderr or '--report' in r.stderr), r.stderr
    assert a.read_bytes() == before


def test_verify_report_renders_in_browser(tmp_path, rng):
    a, b = two_decodes(tmp_path, rng)
    report = tmp_path / 'report.html'
    r = subprocess.run([cli_path(), 'verify', str(a), str(b), '--report', str(report)],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr  # the louder band fails the level check
    html = report.read_text()
    assert 'http:' not in html and 'https:' not in html  # self-contained
    assert 'PSNR' in html and 'log-spectral distance' in html and 'FAIL' in html
    br = Browser(str(tmp_path))
    try:
        br.goto(report.as_uri())
        imgs = br.evaluate('[...document.images].map(i => [i.id, i.complete, i.naturalWidth, '
                           'i.naturalHeight])')
        assert [i[0] for i in imgs] == ['spec-a', 'spec-b', 'spec-diff']
        assert all(i[1] and i[2] > 50 and i[3] > 50 for i in imgs), imgs
        # Decoded for real: the difference image has red pixels where B's band is louder.
        red = br.evaluate('''(() => { const i = document.getElementById("spec-diff");
            const c = document.createElement("canvas"); c.width = i.naturalWidth;
            c.height = i.naturalHeight; const g = c.getContext("2d"); g.drawImage(i, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0;
            for (let p = 0; p < d.length; p += 4) if (d[p] > 200 && d[p + 1] < 120) n++;
            return n; })()''')
        assert red > 100, red
        br.screenshot(tmp_path / 'report.png')
    finally:
        br.close()
