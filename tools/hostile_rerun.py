#!/usr/bin/python3
"""Re-run of issue 23's classes as a hostile user: one or more cases per numbered item, against the
real `meshnn` binary (and the Python module for the Python-only items), each in its own scratch
folder under one temporary folder (also the run's TMPDIR, so leaked temp files are seen). Prints
a table: item, case, PASS / FAIL / SKIP, detail; exits 1 when any case fails.

    tools/hostile_rerun.py [--build build] [--skip-mpi]

Classes checked in every case where they apply: inputs destroyed (bytes compared before and
after), crashes (exit by a signal), hangs (every run has a timeout), silent wrong results (exit 0
where an error is due), partial files after a failure (the output must not exist or keep its old
bytes), temp files leaked (nothing named *meshnn-tmp* or meshnn_* left in the folders).
"""
import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, 'tests', 'fixtures')
BV = os.path.join(FIX, 'bigvgan_v2_24k_small.safetensors')
LTX = os.path.join(FIX, 'ltx23_small.safetensors')
HEAD = os.path.join(FIX, 'gr00t_head_n1_7.safetensors')

results = []  # (item, case, status, detail)


class Fail(Exception):
    pass


def check(cond, detail):
    if not cond:
        raise Fail(detail)


def leftovers(*folders):
    bad = []
    for f in folders:
        for n in os.listdir(f):
            if 'meshnn-tmp' in n or n.startswith('meshnn_'):
                bad.append(os.path.join(f, n))
    return bad


class Runner:
    def __init__(self, exe, tmp):
        self.exe, self.tmp = exe, tmp
        self.env = dict(os.environ, TMPDIR=tmp, OMPI_MCA_btl='^ofi,openib',
                        OMPI_MCA_mtl='^ofi,psm', OMPI_MCA_rmaps_base_oversubscribe='1')

    def cli(self, *args, timeout=60, env=None, **kw):
        try:
            r = subprocess.run([self.exe, *map(str, args)], capture_output=True, text=True,
                               timeout=timeout, env=env or self.env, **kw)
        except subprocess.TimeoutExpired:
            raise Fail(f'hang: no exit within {timeout} s: {" ".join(map(str, args))[:120]}')
        check(r.returncode >= 0, f'crash: killed by signal {-r.returncode}: {r.stderr[-300:]}')
        return r


def case(item, name):
    def wrap(fn):
        def run(ctx):
            d = tempfile.mkdtemp(prefix=f'item{item}_', dir=ctx.tmp)
            t0 = time.monotonic()
            try:
                detail = fn(ctx, d) or ''
                left = leftovers(d)
                check(not left, f'temp files left: {left}')
                results.append((item, name, 'PASS', f'{detail} ({time.monotonic() - t0:.1f} s)'))
            except Fail as e:
                results.append((item, name, 'FAIL', str(e)[:200]))
            except Skip as e:
                results.append((item, name, 'SKIP', str(e)))
            finally:
                shutil.rmtree(d, ignore_errors=True)
        run.item = item
        CASES.append(run)
        return run
    return wrap


class Skip(Exception):
    pass


CASES = []


def first_line(s):
    s = s.strip().splitlines()
    return s[-1][:110] if s else ''


def save(path, a):
    np.save(path, a)
    return path


def read_tensor(path, key):
    """One tensor of a safetensors file as numpy (bf16 widened to float32)."""
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        h = json.loads(f.read(n))[key]
        b, e = h['data_offsets']
        f.seek(8 + n + b)
        raw = f.read(e - b)
    if h['dtype'] == 'BF16':
        a = (np.frombuffer(raw, '<u2').astype(np.uint32) << 16).view(np.float32)
    else:
        a = np.frombuffer(raw, {'F32': '<f4', 'F64': '<f8', 'I64': '<i8', 'I32': '<i4'}[h['dtype']])
    return a.reshape(h['shape'])


def head_inputs(d):
    """The GR00T head fixture's inputs as .npy files in d."""
    return {k: save(os.path.join(d, f'{k}.npy'), read_tensor(HEAD, f'input.{k}'))
            for k in ('features', 'token_types', 'state', 'noise')}


def policy_args(f, out, ckpt=HEAD):
    return ['gr00t-policy', '--checkpoint', ckpt, '--version', 'n1.7', '--embodiment', 2,
            '--features', f['features'], '--token-types', f['token_types'], '--state', f['state'],
            '--noise', f['noise'], '--out', out]


def mel(d, frames=8, name='mel.npy', nan_at=None):
    m = np.random.default_rng(1).uniform(-6, 1, (100, frames)).astype(np.float32)
    if nan_at is not None:
        m[7, nan_at] = np.nan
    return save(os.path.join(d, name), m)


def write_wav(path, seconds=0.2, rate=24000):
    """A mono float32 WAV written by hand (no dependency on the module)."""
    x = (0.3 * np.sin(np.arange(int(seconds * rate)) / 7)).astype('<f4')
    data = x.tobytes()
    hdr = b'RIFF' + struct.pack('<I', 36 + len(data)) + b'WAVEfmt ' + struct.pack(
        '<IHHIIHH', 16, 3, 1, rate, rate * 4, 4, 32) + b'data' + struct.pack('<I', len(data))
    with open(path, 'wb') as f:
        f.write(hdr + data)
    return path


def mpiexec(ctx):
    if ctx.skip_mpi:
        raise Skip('--skip-mpi')
    exe = shutil.which('mpiexec.openmpi') or shutil.which('mpiexec')
    if not exe:
        raise Skip('no mpiexec')
    return [exe, '--allow-run-as-root', '--oversubscribe']


def module(ctx):
    """Runs Python code against the built module in a child process (a crash cannot take us down)."""
    pydir = os.path.join(ctx.build, 'python')
    if not os.path.isdir(os.path.join(pydir, 'meshnn')):
        raise Skip(f'the Python module is not built ({pydir})')

    def run(code, *args, timeout=120):
        env = dict(ctx.env, PYTHONPATH=pydir)
        try:
            r = subprocess.run([sys.executable, '-c', code, *map(str, args)], capture_output=True,
                               text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise Fail(f'hang: the Python case did not end within {timeout} s')
        check(r.returncode >= 0, f'crash: python killed by signal {-r.returncode}')
        check(r.returncode == 0, f'python case failed: {first_line(r.stderr)}')
        return r.stdout.strip()
    return run


# ---- the items -------------------------------------------------------------------------------

@case(1, 'gr00t-policy --out onto each input / a symlink to one')
def _(ctx, d):
    f = head_inputs(d)
    f['checkpoint'] = shutil.copy(HEAD, os.path.join(d, 'head.safetensors'))
    os.symlink(f['features'], os.path.join(d, 'link.npy'))
    before = {k: open(p, 'rb').read() for k, p in f.items()}
    for victim in ('checkpoint', 'features', 'state', 'noise', 'token_types', 'link'):
        out = os.path.join(d, 'link.npy') if victim == 'link' else f[victim]
        r = ctx.cli(*policy_args(f, out, ckpt=f['checkpoint']))
        check(r.returncode == 1 and 'same file as the input' in r.stderr,
              f'--out = {victim}: exit {r.returncode}: {first_line(r.stderr)}')
    for k, p in f.items():
        check(open(p, 'rb').read() == before[k], f'{k} was modified')
    r = ctx.cli(*policy_args(f, os.path.join(d, 'nope', 'a.npy')))
    check(r.returncode == 1 and 'does not exist' in r.stderr, f'bad folder: {r.stderr}')
    return '6 victims refused, inputs intact; bad folder named'


@case(2, 'six Python threads push on one stream; push+flush on a 1x2 pipeline (3 runs)')
def _(ctx, d):
    run = module(ctx)
    code = r'''
import sys, threading, numpy as np, meshnn
v = meshnn.BigVGAN.from_pretrained(sys.argv[1])
mel = np.random.default_rng(0).uniform(-6, 1, (1, v.num_mels, 6)).astype(np.float32)
other = []
def loop(fn, n):
    for _ in range(n):
        try: fn()
        except RuntimeError as e:
            if 'in use' not in str(e): other.append(e)
for rep in range(3):
    s = v.stream()
    ts = [threading.Thread(target=loop, args=(lambda: s.push(mel), 20)) for _ in range(6)]
    [t.start() for t in ts]; [t.join() for t in ts]
    p = v.stream(mesh='1x2')
    a = threading.Thread(target=loop, args=(lambda: p.push(mel), 15))
    b = threading.Thread(target=loop, args=(p.flush, 15))
    a.start(); b.start(); a.join(60); b.join(60)
    assert not a.is_alive() and not b.is_alive(), 'deadlock'
assert not other, other
print('ok')
'''
    check(run(code, BV, timeout=240) == 'ok', 'unexpected output')
    return 'no crash, no deadlock, only "in use" refusals'


@case(3, 'MPI stream, SIGSTOP of a rank, MESHNN_COMM_TIMEOUT=3: the job ends')
def _(ctx, d):
    mpi = mpiexec(ctx)
    lat = save(os.path.join(d, 'lat.npy'),
               np.random.default_rng(2).standard_normal((8, 1500, 16)).astype(np.float32))
    env = dict(ctx.env, MESHNN_COMM_TIMEOUT='3')
    out = os.path.join(d, 'o.wav')
    p = subprocess.Popen([*mpi, '-np', '2', ctx.exe, 'audio-decode', '--checkpoint', LTX,
                          '--stream', '--backend', 'mpi', '--mesh', '1x2', '--push-frames', '4',
                          '--latent', lat, '--out', out, '--quiet'], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    stopped, deadline = None, time.monotonic() + 120
    while stopped is None and p.poll() is None and time.monotonic() < deadline:
        for n in os.listdir(d):
            if n.startswith('.o.wav.meshnn-tmp.'):
                stopped = int(n.split('.')[-2])
                os.kill(stopped, signal.SIGSTOP)
                break
        time.sleep(0.01)
    if stopped is None:
        p.kill()
        p.communicate()
        raise Skip('the stream ended before a rank could be stopped')
    t0 = time.monotonic()
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(stopped, signal.SIGCONT)
        p.kill()
        p.communicate()
        raise Fail('hang: the job with a stopped rank still ran after 60 s')
    took = time.monotonic() - t0
    check(p.returncode != 0 and 'liveness timeout' in err, f'exit {p.returncode}: {err[-200:]}')
    check(not os.path.exists(out), 'an output was left')
    try:
        os.kill(stopped, signal.SIGKILL)
    except ProcessLookupError:
        pass
    # The stopped rank is the writer: when the launcher ends the job it may reach that process
    # only with SIGKILL (Open MPI sends SIGCONT, SIGTERM, then SIGKILL after a second), and a
    # killed process cannot remove its hidden temp file. The output itself is never written; a
    # temp file of another process would still fail the case.
    for n in os.listdir(d):
        if n.startswith(f'.o.wav.meshnn-tmp.{stopped}.'):
            os.remove(os.path.join(d, n))
    return f'ended {took:.1f} s after the stop, "liveness timeout"'


@case(4, '--push-frames 2^62 / 1e9 / 0 are usage errors, never an empty WAV')
def _(ctx, d):
    m = mel(d)
    for bad in ('4611686018427387904', '1000000000', '1e9', '0'):
        out = os.path.join(d, 'o.wav')
        r = ctx.cli('vocode', '--checkpoint', BV, '--mel', m, '--out', out, '--stream',
                    '--push-frames', bad, '--quiet')
        check(r.returncode == 2 and 'bad_alloc' not in r.stderr,
              f'{bad}: exit {r.returncode}: {first_line(r.stderr)}')
        check(not os.path.exists(out), f'{bad}: wrote an output')
    return 'exit 2 for each'


@case(5, 'MPI stream reading a FIFO / stdin: refused, no half-length audio')
def _(ctx, d):
    fifo = os.path.join(d, 'in.fifo')
    os.mkfifo(fifo)
    out = os.path.join(d, 'o.wav')
    r = ctx.cli('audio-decode', '--checkpoint', LTX, '--stream', '--backend', 'mpi', '--mesh',
                '1x2', '--frames-from', fifo, '--out', out, timeout=30)
    check(r.returncode == 1 and 'must be a regular file' in r.stderr, first_line(r.stderr))
    r = ctx.cli('audio-decode', '--checkpoint', LTX, '--stream', '--backend', 'mpi', '--mesh',
                '1x2', '--frames-from', '-', '--out', out, timeout=30, stdin=subprocess.DEVNULL)
    check(r.returncode == 1 and 'stdin' in r.stderr, first_line(r.stderr))
    check(not os.path.exists(out), 'an output was written')
    return 'both refused before any work'


@case(6, 'failing stream (NaN in frame 4, unreadable input, /dev/full) keeps the old WAV')
def _(ctx, d):
    good = write_wav(os.path.join(d, 'good.wav'))
    before = open(good, 'rb').read()
    r = ctx.cli('vocode', '--checkpoint', BV, '--mel', mel(d, 40, 'nan.npy', nan_at=4), '--out',
                good, '--stream', '--push-frames', 2, '--quiet')
    check(r.returncode == 1 and 'frame 4' in r.stderr, f'NaN: {first_line(r.stderr)}')
    check(open(good, 'rb').read() == before, 'NaN stream changed the old WAV')
    bad = os.path.join(d, 'bad.npy')
    open(bad, 'wb').write(b'not a npy file')
    r = ctx.cli('vocode', '--checkpoint', BV, '--mel', bad, '--out', good, '--stream', '--quiet')
    check(r.returncode == 1 and open(good, 'rb').read() == before, 'unreadable input')
    r = ctx.cli('vocode', '--checkpoint', BV, '--mel', mel(d, 40), '--out', '/dev/full',
                '--stream', '--quiet')
    check(r.returncode == 1 and 'No space left' in r.stderr, f'/dev/full: {first_line(r.stderr)}')
    return 'old bytes kept in all three'


@case(7, 'read_wav / write_wav round trip keeps the channel count')
def _(ctx, d):
    run = module(ctx)
    src = write_wav(os.path.join(d, 'a.wav'), seconds=0.01)
    code = r'''
import sys, meshnn, numpy as np
x, sr = meshnn.read_wav(sys.argv[1]); meshnn.write_wav(sys.argv[2], x, sr)
y, sr2 = meshnn.read_wav(sys.argv[2])
assert x.shape == y.shape and x.shape[0] == 1 and sr == sr2, (x.shape, y.shape)
np.testing.assert_array_equal(x, y); print(x.shape)
'''
    return 'shape ' + run(code, src, os.path.join(d, 'b.wav'))


@case(8, 'gr00t-policy --steps 0 / 1001 / 10^9 refused; 2 runs')
def _(ctx, d):
    f = head_inputs(d)
    out = os.path.join(d, 'a.npy')
    for steps, code in ((0, 2), (1001, 1), (1000000000, 2)):
        r = ctx.cli(*policy_args(f, out), '--steps', steps)
        check(r.returncode == code, f'--steps {steps}: exit {r.returncode}: {first_line(r.stderr)}')
        check(not os.path.exists(out), f'--steps {steps}: output written')
    r = ctx.cli(*policy_args(f, out), '--steps', 2)
    check(r.returncode == 0 and os.path.exists(out), f'--steps 2: {first_line(r.stderr)}')
    return 'exit 2 / 1 / 2; 2 steps ran'


@case(9, '--stream --backend mpi --mesh 1x1 under two ranks: refused')
def _(ctx, d):
    mpi = mpiexec(ctx)
    lat = save(os.path.join(d, 'lat.npy'),
               np.random.default_rng(3).standard_normal((8, 6, 16)).astype(np.float32))
    out = os.path.join(d, 'o.wav')
    try:
        r = subprocess.run([*mpi, '-np', '2', ctx.exe, 'audio-decode', '--checkpoint', LTX,
                            '--stream', '--backend', 'mpi', '--mesh', '1x1', '--latent', lat,
                            '--out', out, '--quiet'], capture_output=True, text=True,
                           env=ctx.env, timeout=120)
    except subprocess.TimeoutExpired:
        raise Fail('hang')
    check(r.returncode != 0 and 'needs 1 processes' in r.stderr, first_line(r.stderr))
    check(not os.path.exists(out), 'an output was written')
    return 'refused'


@case(10, 'FIFO as --checkpoint/--latent/--wav/--config: refused at once')
def _(ctx, d):
    fifo = os.path.join(d, 'in.fifo')
    os.mkfifo(fifo)
    out = os.path.join(d, 'o.wav')
    lat = save(os.path.join(d, 'lat.npy'), np.zeros((8, 4, 16), np.float32))
    runs = [('vocode', '--checkpoint', fifo, '--mel', mel(d), '--out', out),
            ('audio-decode', '--checkpoint', LTX, '--latent', fifo, '--out', out),
            ('vocode', '--checkpoint', BV, '--wav', fifo, '--out', out),
            ('vocode', '--checkpoint', BV, '--config', fifo, '--mel', mel(d), '--out', out),
            ('audio-decode', '--checkpoint', fifo, '--latent', lat, '--out', out)]
    for a in runs:
        t0 = time.monotonic()
        r = ctx.cli(*a, timeout=20)
        check(r.returncode != 0 and 'FIFO' in r.stderr, f'{a[:3]}: {first_line(r.stderr)}')
        check(time.monotonic() - t0 < 10, f'{a[:3]}: took {time.monotonic() - t0:.1f} s')
    check(not os.path.exists(out), 'an output was written')
    return f'{len(runs)} refused'


@case(10, 'SIGTERM while the output waits on a FIFO: no temp file leaked')
def _(ctx, d):
    fifo = os.path.join(d, 'out.fifo')
    os.mkfifo(fifo)
    p = subprocess.Popen([ctx.exe, 'vocode', '--checkpoint', BV, '--mel', mel(d, 40), '--out',
                          fifo, '--quiet'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=ctx.env)
    time.sleep(3)  # decoded by now; blocked opening the FIFO (no reader)
    p.send_signal(signal.SIGTERM)
    try:
        p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Fail('hang: SIGTERM did not end the write')
    left = leftovers(d, ctx.tmp)
    check(not left, f'leaked: {left}')
    return f'exit {p.returncode}, nothing left in the folder or TMPDIR'


@case(11, '±3e38 latent: "the model is at fault" naming the stage, not the output file')
def _(ctx, d):
    lat = (np.sign(np.random.default_rng(4).standard_normal((8, 6, 16))) * 3e38).astype(np.float32)
    out = os.path.join(d, 'o.wav')
    r = ctx.cli('audio-decode', '--checkpoint', LTX, '--latent', save(os.path.join(d, 'l.npy'), lat),
                '--out', out, '--quiet')
    check(r.returncode == 1 and 'the model is at fault' in r.stderr and 'o.wav' not in r.stderr,
          f'exit {r.returncode}: {first_line(r.stderr)}')
    check(not os.path.exists(out), 'an output was written')
    i = r.stderr.find('stage ')
    return r.stderr[i:r.stderr.find(')', i) + 1] if i >= 0 else 'no stage named'


@case(11, 'NaN weight in the LTX mel-VAE (first stage): named as stage 1')
def _(ctx, d):
    bad = poison(LTX, os.path.join(d, 'nan_vae.safetensors'), 'audio_vae.decoder.conv_in.conv.weight')
    lat = save(os.path.join(d, 'l.npy'),
               np.random.default_rng(5).standard_normal((8, 6, 16)).astype(np.float32))
    out = os.path.join(d, 'o.wav')
    r = ctx.cli('audio-decode', '--checkpoint', bad, '--latent', lat, '--out', out, '--quiet')
    check(r.returncode == 1 and 'non-finite' in r.stderr, f'exit {r.returncode}: '
          f'{first_line(r.stderr)}')
    check('stage 1/3 (mel-VAE decoder)' in r.stderr or 'weight' in r.stderr,
          f'stage not named: {first_line(r.stderr)}')
    check(not os.path.exists(out), 'an output was written')
    return first_line(r.stderr)[:80]


@case(12, 'silent coercions: --push-frames without --stream; Python floats/bools as integers')
def _(ctx, d):
    out = os.path.join(d, 'o.wav')
    r = ctx.cli('vocode', '--checkpoint', BV, '--mel', mel(d), '--out', out, '--push-frames', 8)
    check(r.returncode == 1 and 'need --stream' in r.stderr, first_line(r.stderr))
    check(not os.path.exists(out), 'an output was written')
    run = module(ctx)
    code = r'''
import sys, numpy as np, meshnn
v = meshnn.BigVGAN.from_pretrained(sys.argv[1]); d = meshnn.LtxAudioDecoder.from_checkpoint(sys.argv[2])
mel = np.zeros((1, v.num_mels, 8), np.float32); lat = np.zeros((1, 8, 6, 16), np.float32)
bad = []
for kw in ({'threads': True}, {'threads': 2.0}):
    try: v(mel, **kw); bad.append(kw)
    except ValueError: pass
for kw in ({'chunk_frames': -4}, {'chunk_frames': 4.7}):
    try: d(lat, **kw); bad.append(kw)
    except ValueError: pass
print('ok' if not bad else bad)
'''
    check(run(code, BV, LTX) == 'ok', 'a coercion was accepted')
    return 'CLI and Python refuse'


@case(13, 'clear errors: .pt checkpoint, /dev/full, --bogus, missing option (exit 2)')
def _(ctx, d):
    pt = os.path.join(d, 'bigvgan_generator.pt')
    with zipfile.ZipFile(pt, 'w') as z:
        z.writestr('archive/data.pkl', os.urandom(300))
    r = ctx.cli('vocode', '--checkpoint', pt, '--mel', mel(d), '--out', os.path.join(d, 'o.wav'))
    # The library's own .pt reader refuses a pickle it cannot read, naming the file inside.
    check(r.returncode == 1 and 'bigvgan_generator.pt' in r.stderr and 'data.pkl' in r.stderr,
          f'.pt: {first_line(r.stderr)}')
    r = ctx.cli('vocode', '--checkpoint', BV, '--mel', mel(d), '--out', '/dev/full')
    check(r.returncode == 1 and 'No space left on device' in r.stderr, first_line(r.stderr))
    r = ctx.cli('vocode', '--bogus')
    check(r.returncode == 2 and '--bogus' in r.stderr and 'required' not in r.stderr,
          first_line(r.stderr))
    r = ctx.cli('vocode', '--mel', 'x.npy')
    check(r.returncode == 2, f'missing option: exit {r.returncode}')
    return 'all four clear'


@case(14, 'GR00T config fields read where upstream has them (C++ regression)')
def _(ctx, d):
    return gtest(ctx, 'Reliability2.Gr00tConfigFieldsReadWhereUpstreamHasThem')


@case(15, 'NaN in a GR00T head weight: an error, never finite wrong actions')
def _(ctx, d):
    f = head_inputs(d)
    keys = json_keys(HEAD)
    key = next(k for k in keys if 'vlln' in k and k.endswith('weight'))
    bad = poison(HEAD, os.path.join(d, 'nan_head.safetensors'), key)
    out = os.path.join(d, 'a.npy')
    r = ctx.cli(*policy_args(f, out, ckpt=bad), '--steps', 2)
    check(r.returncode == 1 and 'non-finite' in r.stderr, f'{key}: exit {r.returncode}: '
          f'{first_line(r.stderr)}')
    check(not os.path.exists(out), 'actions were written')
    return f'{key}: refused'


@case(16, 'docs agree: mesh "auto", torch tensors in stream.push, liveness sentence')
def _(ctx, d):
    py = open(os.path.join(ROOT, 'docs', 'python.md')).read()
    readme = open(os.path.join(ROOT, 'README.md')).read()
    check('single-thread device per core' not in py, 'python.md still says one device per core')
    check('OpenMP' in py, 'python.md does not describe the OpenMP team')
    check('liveness' in readme.lower() or 'silent' in readme.lower(), 'README has no liveness rule')
    return 'python.md and README'


# ---- helpers that read checkpoints -------------------------------------------------------------

def json_keys(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        return [k for k in json.loads(f.read(n)) if k != '__metadata__']


def poison(src, dst, key):
    """A copy of safetensors `src` whose tensor `key` has a NaN as its first element."""
    shutil.copy(src, dst)
    with open(dst, 'r+b') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        h = json.loads(f.read(n))[key]
        f.seek(8 + n + h['data_offsets'][0])
        f.write({'F32': struct.pack('<I', 0x7FC00000), 'BF16': struct.pack('<H', 0x7FC0),
                 'F16': struct.pack('<H', 0x7E00)}[h['dtype']])
    return dst


def gtest(ctx, filt):
    exe = os.path.join(ctx.build, 'meshnn_tests')
    if not os.path.isfile(exe):
        raise Skip('meshnn_tests not built')
    r = subprocess.run([exe, f'--gtest_filter={filt}'], capture_output=True, text=True,
                       timeout=300, env=ctx.env)
    check(r.returncode == 0 and '[  PASSED  ] 1 test' in r.stdout, f'{filt} failed')
    return f'{filt} passed'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--skip-mpi', action='store_true')
    args = ap.parse_args()
    exe = os.path.join(args.build, 'meshnn')
    if not os.path.isfile(exe):
        sys.exit(f'no meshnn binary at {exe}')
    tmp = tempfile.mkdtemp(prefix='meshnn_hostile_')
    ctx = Runner(exe, tmp)
    ctx.build, ctx.skip_mpi = args.build, args.skip_mpi
    t0 = time.monotonic()
    try:
        for c in CASES:
            c(ctx)
        stray = leftovers(tmp)
        results.append(('*', 'no temp files left in TMPDIR after every case',
                        'FAIL' if stray else 'PASS', ', '.join(stray)[:200]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    w = max(len(r[1]) for r in results)
    print(f'{"item":>4}  {"case":<{w}}  result  detail')
    for item, name, status, detail in results:
        print(f'{item!s:>4}  {name:<{w}}  {status:<6}  {detail}')
    fails = sum(r[2] == 'FAIL' for r in results)
    print(f'{len(results)} cases, {fails} failed, '
          f'{sum(r[2] == "SKIP" for r in results)} skipped, {time.monotonic() - t0:.0f} s')
    sys.exit(1 if fails else 0)


if __name__ == '__main__':
    main()
