"""A headless Debian `chromium` driven over the DevTools protocol (python3-websockets), for the
tests of `meshnn serve`'s page and of `meshnn verify --report`. Skips (with the reason) only where
no chromium is installed: `make deps` installs Debian's `chromium`."""
import asyncio
import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request

import pytest

websockets = pytest.importorskip('websockets')


def chromium_path():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip('no chromium on this machine: `make deps` installs Debian\'s chromium, which the '
                'page and report tests drive headless')


class Browser:
    """One headless chromium with one page; call() sends a DevTools command and returns its
    result; evaluate() runs JavaScript (awaiting promises) and returns the value."""

    def __init__(self, workdir):
        self.dir = workdir
        profile = os.path.join(workdir, 'chromium_profile')
        os.makedirs(profile, exist_ok=True)
        self.log = open(os.path.join(workdir, 'chromium.log'), 'w')
        cmd = [chromium_path(), '--headless=new', '--disable-gpu', '--no-first-run',
               '--no-default-browser-check', '--remote-debugging-port=0',
               f'--user-data-dir={profile}', '--autoplay-policy=no-user-gesture-required',
               '--window-size=1000,1200', '--allow-file-access-from-files', 'about:blank']
        if os.geteuid() == 0:
            cmd.insert(1, '--no-sandbox')  # chromium refuses to run its sandbox as root
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        port_file = os.path.join(profile, 'DevToolsActivePort')
        t0 = time.time()
        while not (os.path.exists(port_file) and open(port_file).read().count('\n') >= 1):
            assert self.proc.poll() is None, 'chromium exited: ' + open(self.log.name).read()
            assert time.time() - t0 < 60, 'chromium did not start'
            time.sleep(0.05)
        port = int(open(port_file).read().split()[0])
        with urllib.request.urlopen(f'http://127.0.0.1:{port}/json/list') as r:
            page = next(t for t in json.load(r) if t['type'] == 'page')
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)  # websockets 10 takes the current loop
        self.ws = self.loop.run_until_complete(
            websockets.connect(page['webSocketDebuggerUrl'], max_size=None))
        self.next_id = 0
        self.errors = []  # uncaught exceptions and console errors of the page
        self.call('Page.enable')
        self.call('Runtime.enable')

    async def _call(self, method, params):
        self.next_id += 1
        my = self.next_id
        await self.ws.send(json.dumps({'id': my, 'method': method, 'params': params}))
        while True:
            m = json.loads(await self.ws.recv())
            if m.get('id') == my:
                if 'error' in m:
                    raise RuntimeError(f'{method}: {m["error"]}')
                return m['result']
            if m.get('method') == 'Runtime.exceptionThrown':
                self.errors.append(m['params']['exceptionDetails'].get('text', ''))
            elif m.get('method') == 'Runtime.consoleAPICalled' and m['params']['type'] == 'error':
                self.errors.append(' '.join(str(a.get('value', a.get('description', '')))
                                            for a in m['params']['args']))

    def call(self, method, **params):
        return self.loop.run_until_complete(self._call(method, params))

    def evaluate(self, expression, by_value=True):
        r = self.call('Runtime.evaluate', expression=expression, awaitPromise=True,
                      returnByValue=by_value)
        if 'exceptionDetails' in r:
            raise RuntimeError(f'{expression}: {r["exceptionDetails"]}')
        return r['result'].get('value') if by_value else r['result']

    def wait_for(self, expression, timeout=60, what=None):
        t0 = time.time()
        while True:
            v = self.evaluate(expression)
            if v:
                return v
            if time.time() - t0 > timeout:
                raise AssertionError(f'timed out waiting for {what or expression} '
                                     f'(page errors: {self.errors})')
            time.sleep(0.1)

    def goto(self, url):
        self.call('Page.navigate', url=url)
        self.wait_for('document.readyState === "complete"', what=f'{url} to load')

    def set_files(self, selector, paths):
        obj = self.evaluate(f'document.querySelector({json.dumps(selector)})', by_value=False)
        self.call('DOM.setFileInputFiles', files=[str(p) for p in paths],
                  objectId=obj['objectId'])

    def screenshot(self, path):
        m = self.call('Page.getLayoutMetrics')
        size = m.get('cssContentSize') or m['contentSize']
        png = self.call('Page.captureScreenshot', format='png', captureBeyondViewport=True,
                        clip={'x': 0, 'y': 0, 'width': size['width'],
                              'height': size['height'], 'scale': 1})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(png['data']))
        return path

    def close(self):
        try:
            self.loop.run_until_complete(self.ws.close())
        finally:
            self.loop.close()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.log.close()
