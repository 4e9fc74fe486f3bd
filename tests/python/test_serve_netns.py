"""`meshnn serve --host 0.0.0.0 --api-key K` reached through a non-loopback address, as a user on
another machine reaches it: two network namespaces joined by a veth pair (tools/netns_mesh.sh up /
down: 10.237.0.1 and 10.237.0.2), the server in the first bound to 0.0.0.0, the client
(serve_netns_client.py) in the second, where the server's only address is 10.237.0.1. The client
lists the models with the key (401 without), streams over the WebSocket with ?api_key= (no Origin,
the page's own, a foreign one: refused), and loads the page in a headless chromium through the
veth address (an insecure context there, unlike 127.0.0.1) to decode and stream. Skipped (with the
reason) where namespaces cannot be made; the browser part only where no chromium is installed.
The namespaces are named after this run and removed at the end, whatever happened."""
import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

from conftest import SRC
from test_serve import KEY, LTX23, VOC, Server

SCRIPT = os.path.join(SRC, 'tools', 'netns_mesh.sh')
CLIENT = os.path.join(SRC, 'tests', 'python', 'serve_netns_client.py')
SERVER_IP = '10.237.0.1'  # netns_mesh.sh's host 0; the client is host 1 (10.237.0.2)


def netns_or_skip():
    if os.geteuid() != 0:
        pytest.skip('network namespaces need root (ip netns add); not root here')
    if not shutil.which('ip'):
        pytest.skip('no ip (Debian package iproute2)')
    probe = f'meshnn-probe{os.getpid()}'
    r = subprocess.run(['ip', 'netns', 'add', probe], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f'cannot make a network namespace here: {r.stderr.strip()}')
    subprocess.run(['ip', 'netns', 'del', probe], timeout=30)


@pytest.fixture(scope='module')
def remote():
    """(namespace of the client, URL of the server): a keyed server on 0.0.0.0 in its own
    namespace; both namespaces always torn down (and checked gone)."""
    netns_or_skip()
    ident = f's{os.getpid() % 100000:05d}{random.randrange(36 * 36):03x}'[:8]
    try:
        subprocess.run([SCRIPT, 'up', ident], check=True, timeout=30)
        s = Server('--api-key', KEY, '--workers', 2, host='0.0.0.0',
                   prefix=('ip', 'netns', 'exec', f'meshnn-{ident}-h0'),
                   models=[f'voc={VOC}', f'ltx={LTX23}'])
        try:
            yield f'meshnn-{ident}-h1', f'http://{SERVER_IP}:{s.port}', s
        finally:
            assert s.stop() == 0, s.stderr()
    finally:
        subprocess.run([SCRIPT, 'down', ident], timeout=60)
        left = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
        assert f'meshnn-{ident}-' not in left, left


def test_page_and_api_through_a_non_loopback_address(remote, tmp_path):
    client_ns, url, srv = remote
    r = subprocess.run(['ip', 'netns', 'exec', client_ns, sys.executable, CLIENT, url, KEY,
                        str(tmp_path)], capture_output=True, text=True, timeout=420)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    print('\nclient over the veth:', json.dumps(got)[:2000])
    assert got['no_key'] == 401
    assert got['models_status'] == 200 and got['models'] == ['ltx', 'voc']
    assert got['page'] == [200, True]
    want = got['one_shot_samples']
    # The stream with the key in the query: from a client without Origin and from the page's own
    # origin (http://10.237.0.1:PORT, the Host it sends); another site's page is refused.
    for origin in ('None', url):
        s = got['streams'][origin]
        assert s.get('done', {}).get('type') == 'done', (origin, s)
        assert s['done']['samples'] == s['pcm_samples'] == want, (origin, s)
    assert got['streams']['http://evil.example'] == {'status': 403}
    log = srv.stderr()
    assert KEY not in log and 'api_key=***' in log
    assert re.search(r'GET /v1/models/voc/stream\?api_key=\*\*\* model=- status=403', log)

    b = got['browser']
    if 'skipped' in b:
        pytest.skip(f'the API across the veth passed; the page part skipped: {b["skipped"]}')
    # 10.237.0.1 is not "potentially trustworthy" as 127.0.0.1 is: the page must not need a
    # secure context.
    assert b['secure_context'] is False
    assert b['no_key_error'].startswith('HTTP 401 unauthorized'), b['no_key_error']
    # The WebSocket URL comes from location: ws://, the server's veth address, the key.
    assert b['ws_url'] == f'{url.replace("http://", "ws://")}/v1/models/voc/stream?format=s16le' \
        f'&api_key={KEY}', b['ws_url']
    ltx, voc = b['runs']['ltx'], b['runs']['voc']
    want = got['page_one_shot_samples']
    assert ltx['state'] == 'done' and int(ltx['samples']) == want['ltx'], (ltx, want)
    assert voc['state'] == 'played', voc
    assert int(voc['streamSamples']) == int(voc['doneSamples']) == want['voc'], (voc, want)
    assert float(voc['firstAudioMs']) > 0
    assert not b['errors'], b['errors']
    assert os.path.getsize(tmp_path / 'page_over_veth.png') > 5000


def test_page_urls_are_relative():
    """No address in the page's files (the check above needs root; this one runs anywhere): the
    page reaches the server it was loaded from, by relative URLs and `location` alone."""
    web = os.path.join(SRC, 'web')
    for name in sorted(os.listdir(web)):
        text = open(os.path.join(web, name), encoding='utf-8').read()
        for bad in (r'\b(https?|wss?)://', r'127\.0\.0\.1', r'\blocalhost\b', r'\b0\.0\.0\.0\b',
                    r'(src|href|action)="/', r"""(fetch|api)\(\s*['"`]/"""):
            m = re.search(bad, text)
            assert not m, f'web/{name}: {m.group(0)!r} at {text[:m.start()].count(chr(10)) + 1}'
    app = open(os.path.join(web, 'app.js'), encoding='utf-8').read()
    # The one WebSocket is opened on wsUrl(), which resolves against location.
    assert app.count('new WebSocket(') == app.count('new WebSocket(wsUrl(') == 1
    assert 'new URL(path, location.href)' in app
