"""The client side of test_serve_netns.py, run inside the client's network namespace (`ip netns
exec`), where the server is only reachable through its veth address. It talks to the server as a
remote user would and prints what it saw as one JSON object (the test asserts on it):

    serve_netns_client.py URL KEY WORKDIR

requests (the key as a header, and missing), WebSocket streams with ?api_key= (no Origin, the
page's own Origin, a foreign one), and, where chromium is installed, the page loaded through URL in
a headless chromium (cdp.py) that decodes and streams."""
import asyncio
import io
import json
import os
import sys

import numpy as np
import requests
import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def plain(url, key):
    """Requests with and without the key; the one-shot answer's length of the example input."""
    out = {'no_key': requests.get(f'{url}/v1/models', timeout=30).status_code}
    auth = {'Authorization': f'Bearer {key}'}
    r = requests.get(f'{url}/v1/models', headers=auth, timeout=30)
    out['models_status'] = r.status_code
    out['models'] = sorted(m['name'] for m in r.json()['models'])
    page = requests.get(f'{url}/', timeout=30)
    out['page'] = [page.status_code, 'app.js' in page.text]
    x, out['one_shot_samples'] = one_shot(url, auth, 'voc', 0.5)
    # What the page's example decode and stream (1 s, seed 4) must give.
    out['page_one_shot_samples'] = {m: one_shot(url, auth, m, 1)[1] for m in ('ltx', 'voc')}
    return out, np.ascontiguousarray(np.load(io.BytesIO(x))[0].T, np.float32)


def one_shot(url, auth, model, seconds):
    """The example input (seed 4) and the samples per channel of its one-shot answer."""
    x = requests.get(f'{url}/v1/models/{model}/example?seconds={seconds}&seed=4', headers=auth,
                     timeout=30).content
    y = requests.post(f'{url}/v1/models/{model}/decode', data=x, timeout=120,
                      headers={**auth, 'Content-Type': 'application/x-npy',
                               'Accept': 'application/x-npy'})
    return x, int(np.load(io.BytesIO(y.content)).shape[-1])


async def stream(ws_url, frames, origin):
    """A whole stream; the done message, or the refused handshake's status."""
    try:
        async with websockets.connect(ws_url, origin=origin, max_size=None) as ws:
            await ws.send(frames.tobytes())
            await ws.send(json.dumps({'type': 'flush'}))
            samples = 0
            while isinstance(m := await ws.recv(), bytes):
                samples += len(m) // 2  # s16le, mono
            return {'done': json.loads(m), 'pcm_samples': samples}
    except websockets.InvalidStatusCode as e:
        return {'status': e.status_code}


def card(model, what):
    return f'document.querySelector(\'[data-model="{model}"]\'){what}'


def in_browser(url, key, workdir):
    """The page through URL: the 401 until the key is entered, the models, a decode and a
    stream played to the end; what the page reports of each."""
    import cdp
    try:
        b = cdp.Browser(workdir)
    except BaseException as e:  # pytest.skip() when no chromium is installed
        if type(e).__name__ == 'Skipped':
            return {'skipped': str(e)}
        raise
    out = {}
    try:
        b.goto(url + '/')
        b.wait_for('document.body.dataset.loaded === "true"')
        out['secure_context'] = b.evaluate('window.isSecureContext')
        out['no_key_error'] = b.evaluate('document.getElementById("global-error").textContent')
        b.evaluate(f'document.getElementById("api-key").value = {json.dumps(key)}; '
                   'document.getElementById("key-form").requestSubmit()')
        b.wait_for('document.body.dataset.models === "ltx,voc"', what='the model list')
        out['ws_url'] = b.evaluate('wsUrl("v1/models/voc/stream", {format: "s16le"})')
        out['runs'] = {}
        for model, action, final in (('ltx', 'run', 'done'), ('voc', 'stream', 'played')):
            b.evaluate(card(model, '.querySelector(".seed").value = 4'))
            b.evaluate(card(model, '.querySelector(".example").click()'))
            b.wait_for(f'["input", "error"].includes({card(model, ".dataset.state")})', 120)
            b.evaluate(card(model, f'.querySelector(".{action}").click()'))
            b.wait_for(f'["{final}", "error"].includes({card(model, ".dataset.state")})', 180,
                       what=f'{model} {action}')
            out['runs'][model] = b.evaluate(f'Object.assign({{}}, {card(model, ".dataset")})')
        b.screenshot(os.path.join(workdir, 'page_over_veth.png'))
        out['errors'] = b.errors
    finally:
        b.close()
    return out


def main():
    url, key, workdir = sys.argv[1:4]
    result, frames = plain(url, key)
    ws = url.replace('http://', 'ws://', 1) + f'/v1/models/voc/stream?api_key={key}'
    result['streams'] = {str(o): asyncio.run(stream(ws, frames, o))
                         for o in (None, url, 'http://evil.example')}
    result['browser'] = in_browser(url, key, workdir)
    print(json.dumps(result))


if __name__ == '__main__':
    main()
