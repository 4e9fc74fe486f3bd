"""Issue 23 ("Reliability, second round"): the CLI (real binary) and Python regressions, one test
per item (docs/reliability.md maps every item to its test). Files only under pytest's tmp_path."""
import os
import re
import signal
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest

import meshnn
from meshnn._safetensors import load_safetensors
from conftest import cli_path, fixture

BV = fixture('bigvgan_v2_24k_small.safetensors')
LTX = fixture('ltx23_small.safetensors')
HEAD = fixture('gr00t_head_n1_7.safetensors')


def cli(*args, timeout=120, **kw):
    exe = cli_path()
    if not os.path.isfile(exe):
        pytest.skip(f'the meshnn CLI is not built ({exe})')
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          **kw)


def leftovers(folder):
    """Scratch files a failed or interrupted write could leave in `folder`."""
    return [n for n in os.listdir(folder) if 'meshnn-tmp' in n]


# ---- item 1: every command refuses an output that is one of its inputs ---------------------------

OPT = re.compile(r'^\s+(?:-\w,)?(--[\w-]+)(?:\s+([A-Z]+)\S*)?(.*)$')


def subcommands(path=()):
    """Every (sub)command of the CLI, from its --help: [(path, [(option, type, required)])]."""
    text = cli(*path, '--help').stdout
    opts, subs, section = [], [], None
    for line in text.splitlines():
        if line.startswith('Options:'):
            section = 'o'
        elif line.startswith('Subcommands:'):
            section = 's'
        elif section == 'o' and (m := OPT.match(line)):
            if m.group(1) != '--help':
                opts.append((m.group(1), m.group(2), 'REQUIRED' in (m.group(3) or '')))
        elif section == 's' and (m := re.match(r'^\s+([\w-]+)\s', line)):
            subs.append(m.group(1))
    found = [(path, opts)] if path else []
    for s in subs:
        found += subcommands(path + (s,))
    return found


def test_every_command_refuses_an_output_that_is_one_of_its_inputs(tmp_path):
    commands = [(p, o) for p, o in subcommands() if any(n == '--out' for n, _, _ in o)]
    names = {p[-1] for p, _ in commands}
    assert {'audio-decode', 'vocode', 'gr00t-adapter', 'gr00t-policy', 'demo'} <= names, names
    rng = np.random.default_rng(1)
    victim, other = tmp_path / 'input.bin', tmp_path / 'other.bin'
    payload = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()
    victim.write_bytes(payload)
    other.write_bytes(payload[::-1])
    os.symlink(victim, tmp_path / 'link.out')
    os.link(victim, tmp_path / 'hard.out')
    checked = 0
    for path, opts in commands:
        inputs = [n for n, t, _ in opts if t == 'TEXT' and n not in ('--out', '--log-std')]
        for inp in inputs:
            for out in ('link.out', 'hard.out', 'input.bin'):
                args = list(path)
                for n, t, req in opts:
                    if n == '--out' or not (req or n == inp):
                        continue
                    args += [n, victim if n == inp else other if t == 'TEXT' else '1']
                r = cli(*args, '--out', tmp_path / out)
                assert r.returncode != 0, (args, r.stdout, r.stderr)
                assert 'same file as the input' in r.stderr, (args, r.stderr)
                assert victim.read_bytes() == payload, args
                checked += 1
        # A command whose --out has no inputs still checks its folder before any work.
        r = cli(*path, *[x for n, t, req in opts if req and n != '--out'
                         for x in (n, other if t == 'TEXT' else '1')],
                '--out', tmp_path / 'no_such_folder' / 'x.out')
        assert r.returncode != 0 and 'does not exist' in r.stderr, (path, r.stderr)
    assert checked >= 3 * 10
    assert leftovers(tmp_path) == []


# ---- item 6: a failing stream leaves the file it was to replace as it was ------------------------

def test_failing_stream_keeps_the_old_output(tmp_path, rng, bigvgan):
    good = tmp_path / 'good.wav'
    meshnn.write_wav(good, (0.3 * rng.standard_normal((1, 4000))).astype(np.float32), 24000)
    before = good.read_bytes()
    mel = rng.uniform(-6, 1, (bigvgan.num_mels, 40)).astype(np.float32)
    mel[7, 4] = np.nan  # frame 4
    np.save(tmp_path / 'nan.npy', mel)
    r = cli('vocode', '--checkpoint', BV, '--mel', tmp_path / 'nan.npy', '--out', good, '--stream',
            '--push-frames', 2, '--quiet')
    assert r.returncode == 1 and 'non-finite value nan at frame 4' in r.stderr, r.stderr
    assert good.read_bytes() == before
    # An input that is not a mel at all: refused before the output is touched.
    (tmp_path / 'bad.npy').write_bytes(b'not a npy file at all')
    r = cli('vocode', '--checkpoint', BV, '--mel', tmp_path / 'bad.npy', '--out', good, '--stream',
            '--quiet')
    assert r.returncode == 1 and good.read_bytes() == before
    assert leftovers(tmp_path) == []
    # A good stream replaces it.
    np.save(tmp_path / 'ok.npy', np.nan_to_num(mel, nan=-3.0))
    r = cli('vocode', '--checkpoint', BV, '--mel', tmp_path / 'ok.npy', '--out', good, '--stream',
            '--quiet')
    assert r.returncode == 0, r.stderr
    y, sr = meshnn.read_wav(good)
    assert sr == 24000 and y.shape == (1, 40 * bigvgan.hop_length)
    assert leftovers(tmp_path) == []


# ---- items 4 / 12: counts are bounded integers; stream-only options need --stream ---------------

def test_counts_are_bounded_integers(tmp_path, rng, bigvgan):
    np.save(tmp_path / 'mel.npy', rng.uniform(-6, 1, (bigvgan.num_mels, 8)).astype(np.float32))
    base = ['vocode', '--checkpoint', BV, '--mel', tmp_path / 'mel.npy', '--out',
            tmp_path / 'o.wav', '--quiet']
    for bad in ('4611686018427387904', '1000000000', '1e9', '0', '2.5', 'true'):
        r = cli(*base, '--stream', '--push-frames', bad)
        assert r.returncode == 2, (bad, r.stderr)
        assert '--push-frames' in r.stderr, (bad, r.stderr)
    assert cli(*base, '--stream', '--push-frames', '-3').returncode == 2
    for bad in ('-1', '1.5', '99999', 'true'):
        assert cli(*base, '--threads', bad).returncode == 2, bad
    r = cli(*base, '--push-frames', 8)
    assert r.returncode == 1 and 'need --stream' in r.stderr, r.stderr
    assert not (tmp_path / 'o.wav').exists()


# ---- item 8: gr00t-policy --steps --------------------------------------------------------------

def test_policy_steps_are_checked(tmp_path):
    t, _ = load_safetensors(HEAD)
    for k in ('features', 'token_types', 'state', 'noise'):
        np.save(tmp_path / f'{k}.npy', t[f'input.{k}'])
    args = ['gr00t-policy', '--checkpoint', HEAD, '--version', 'n1.7', '--embodiment', 2,
            '--features', tmp_path / 'features.npy', '--token-types', tmp_path / 'token_types.npy',
            '--state', tmp_path / 'state.npy', '--noise', tmp_path / 'noise.npy',
            '--out', tmp_path / 'a.npy']
    r = cli(*args, '--steps', 0)
    assert r.returncode == 2 and '--steps' in r.stderr, r.stderr
    r = cli(*args, '--steps', 1001)
    assert r.returncode == 1 and 'steps must be in [1, 1000]' in r.stderr, r.stderr
    assert cli(*args, '--steps', 1000000000).returncode == 2
    assert not (tmp_path / 'a.npy').exists()
    r = cli(*args, '--steps', 2)
    assert r.returncode == 0, r.stderr
    assert np.load(tmp_path / 'a.npy').shape == t['input.noise'].shape


# ---- items 5 / 9: under MPI every rank reads the input: regular files only; mesh = launch --------

def test_mpi_stream_input_must_be_a_regular_file(tmp_path):
    fifo = tmp_path / 'in.fifo'
    os.mkfifo(fifo)
    r = cli('audio-decode', '--checkpoint', LTX, '--stream', '--backend', 'mpi', '--mesh', '1x2',
            '--frames-from', fifo, '--out', tmp_path / 'o.wav', timeout=60)
    assert r.returncode == 1 and 'must be a regular file' in r.stderr, r.stderr
    r = cli('audio-decode', '--checkpoint', LTX, '--stream', '--backend', 'mpi', '--mesh', '1x2',
            '--frames-from', '-', '--out', tmp_path / 'o.wav', timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and 'stdin' in r.stderr, r.stderr
    assert not (tmp_path / 'o.wav').exists()


def mpiexec():
    import shutil
    exe = shutil.which('mpiexec.openmpi') or shutil.which('mpiexec')
    if not exe:
        pytest.skip('no mpiexec')
    return [exe, '--allow-run-as-root', '--oversubscribe']


def test_mpi_stream_on_a_1x1_mesh_under_two_ranks_is_refused(tmp_path, rng):
    np.save(tmp_path / 'lat.npy', rng.standard_normal((8, 6, 16)).astype(np.float32))
    env = dict(os.environ, OMPI_MCA_btl='^ofi,openib', OMPI_MCA_mtl='^ofi,psm')
    r = subprocess.run([*mpiexec(), '-np', '2', cli_path(), 'audio-decode', '--checkpoint', LTX,
                        '--stream', '--backend', 'mpi', '--mesh', '1x1', '--latent',
                        tmp_path / 'lat.npy', '--out', tmp_path / 'o.wav', '--quiet'],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode != 0 and 'needs 1 processes but the launch has 2' in r.stderr, r.stderr
    assert not (tmp_path / 'o.wav').exists()


# ---- item 3: an MPI stream whose rank stops ends the job -----------------------------------------

def test_mpi_stream_with_a_stopped_rank_ends(tmp_path, rng):
    import time
    np.save(tmp_path / 'lat.npy', rng.standard_normal((8, 1500, 16)).astype(np.float32))
    env = dict(os.environ, OMPI_MCA_btl='^ofi,openib', OMPI_MCA_mtl='^ofi,psm',
               MESHNN_COMM_TIMEOUT='3')
    p = subprocess.Popen([*mpiexec(), '-np', '2', cli_path(), 'audio-decode', '--checkpoint', LTX,
                          '--stream', '--backend', 'mpi', '--mesh', '1x2', '--push-frames', '4',
                          '--latent', tmp_path / 'lat.npy', '--out', tmp_path / 'o.wav',
                          '--quiet'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    # The last stage's rank writes the growing WAV, named .o.wav.meshnn-tmp.<pid>.<n>: stop that
    # process (SIGSTOP) while it streams; rank 0 must time out and end the job.
    stopped, deadline = None, time.monotonic() + 120
    while stopped is None and p.poll() is None and time.monotonic() < deadline:
        for n in os.listdir(tmp_path):
            if n.startswith('.o.wav.meshnn-tmp.'):
                stopped = int(n.split('.')[-2])
                os.kill(stopped, signal.SIGSTOP)
                break
        time.sleep(0.01)
    if stopped is None:
        p.kill()
        p.communicate()
        pytest.skip('the stream ended before a rank could be stopped')
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.kill(stopped, signal.SIGCONT)
        p.kill()
        p.communicate()
        pytest.fail('the MPI stream with a stopped rank did not end')
    assert p.returncode != 0
    assert 'liveness timeout' in err, err
    assert not (tmp_path / 'o.wav').exists()


# ---- item 10: FIFOs as whole-file inputs are refused at once ------------------------------------

def test_fifo_inputs_are_refused(tmp_path, rng, bigvgan):
    fifo = tmp_path / 'in.fifo'
    os.mkfifo(fifo)
    np.save(tmp_path / 'mel.npy', rng.uniform(-6, 1, (bigvgan.num_mels, 8)).astype(np.float32))
    r = cli('vocode', '--checkpoint', fifo, '--mel', tmp_path / 'mel.npy', '--out',
            tmp_path / 'o.wav', timeout=60)
    assert r.returncode == 1 and 'FIFO' in r.stderr, r.stderr
    r = cli('audio-decode', '--checkpoint', LTX, '--latent', fifo, '--out', tmp_path / 'o.wav',
            timeout=60)
    assert r.returncode == 1 and 'FIFO' in r.stderr, r.stderr
    with pytest.raises(ValueError, match='FIFO'):
        meshnn.read_wav(fifo)
    with pytest.raises(ValueError, match='FIFO'):
        meshnn.LtxAudioDecoder.from_checkpoint(fifo)
    assert not (tmp_path / 'o.wav').exists()


# ---- item 2: concurrent calls on one stream never corrupt; a pipeline never deadlocks ----------

def test_concurrent_pushes_on_one_stream(bigvgan, rng):
    s = bigvgan.stream()
    mel = rng.uniform(-6, 1, (1, bigvgan.num_mels, 6)).astype(np.float32)
    results, errors, other = [], [], []
    barrier = threading.Barrier(6)

    def body():
        barrier.wait()
        for _ in range(20):
            try:
                results.append(s.push(mel))
            except RuntimeError as e:
                (errors if 'in use' in str(e) else other).append(e)

    threads = [threading.Thread(target=body) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert other == [] and len(results) + len(errors) == 120 and results
    # The stream is still consistent: the pushes that ran give the samples of one serial stream
    # of as many pushes (compared as multisets: the threads appended in their own order).
    tail = s.flush()
    serial = bigvgan.stream()
    want = np.concatenate([serial.push(mel) for _ in results] + [serial.flush()], axis=2)
    got = np.concatenate(results + [tail], axis=2)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.sort(got.ravel()), np.sort(want.ravel()))
    np.testing.assert_array_equal(tail, want[:, :, want.shape[2] - tail.shape[2]:])


def test_push_and_flush_on_a_pipeline_from_two_threads(bigvgan, rng):
    s = bigvgan.stream(mesh='1x2')
    mel = rng.uniform(-6, 1, (1, bigvgan.num_mels, 4)).astype(np.float32)
    other = []

    def loop(fn):
        for _ in range(15):
            try:
                fn()
            except RuntimeError as e:
                if 'in use' not in str(e):
                    other.append(e)

    a = threading.Thread(target=loop, args=(lambda: s.push(mel),))
    b = threading.Thread(target=loop, args=(s.flush,))
    a.start()
    b.start()
    a.join(120)
    b.join(120)
    assert not a.is_alive() and not b.is_alive(), 'deadlock'
    assert other == []
    s.reset()
    assert s.flush().shape[2] == 0


# ---- item 11: a non-finite output is the model's fault, from Python and the CLI -----------------

def test_non_finite_output_is_reported_as_the_models_fault(ltx23, tmp_path, rng):
    lat = (np.sign(rng.standard_normal((1, 8, 6, 16))) * 3e38).astype(np.float32)
    with pytest.raises(RuntimeError, match='LTX audio decoder: .* produced a non-finite'):
        ltx23(lat, mesh='1x1')
    np.save(tmp_path / 'lat.npy', lat[0])
    r = cli('audio-decode', '--checkpoint', LTX, '--latent', tmp_path / 'lat.npy', '--out',
            tmp_path / 'o.wav', '--quiet')
    assert r.returncode == 1 and 'the model is at fault' in r.stderr, r.stderr
    assert 'o.wav' not in r.stderr  # not blamed on the output file
    assert not (tmp_path / 'o.wav').exists()


# ---- item 12: strict integer arguments in Python -----------------------------------------------

def test_python_integer_arguments_are_strict(bigvgan, ltx23, rng):
    mel = rng.uniform(-6, 1, (1, bigvgan.num_mels, 8)).astype(np.float32)
    lat = rng.standard_normal((1, 8, 6, 16)).astype(np.float32)
    for bad in (True, 2.0, -1, '2'):
        with pytest.raises(ValueError, match='threads'):
            bigvgan(mel, threads=bad)
    for bad in (-4, 4.7, True):
        with pytest.raises(ValueError, match='chunk_frames'):
            ltx23(lat, chunk_frames=bad)
    assert bigvgan(mel, threads=np.int64(1), mesh='1x1').shape == (1, 1, 8 * bigvgan.hop_length)
    ckpt = fixture('gr00t_adapter_n1_5.safetensors')
    t, _ = load_safetensors(ckpt)
    types = t['input.token_types'] if 'input.token_types' in t else None
    if types is None:
        pytest.skip('adapter fixture without token types')
    with pytest.raises(ValueError, match='integers'):
        meshnn.gr00t.VlAdapter(ckpt, 'n1.5', types.astype(np.float32))
    ad = meshnn.gr00t.VlAdapter(ckpt, 'n1.5', types)
    feats = t['input.features'] if 'input.features' in t else None
    for bad in (1.9, True):
        with pytest.raises(ValueError, match='embodiment'):
            ad(feats, embodiment=bad)


# ---- item 13: clear errors, usage errors exit 2 ------------------------------------------------

def test_clear_errors_and_usage_exit_codes(tmp_path, rng, bigvgan):
    r = cli('vocode', '--bogus')
    assert r.returncode == 2 and '--bogus' in r.stderr and 'required' not in r.stderr, r.stderr
    r = cli('vocode', '--mel', 'x.npy')
    assert r.returncode == 2, r.stderr  # a missing required option (CLI11 said 106)
    pt = tmp_path / 'bigvgan_generator.pt'
    with zipfile.ZipFile(pt, 'w') as z:
        z.writestr('archive/data.pkl', rng.integers(0, 256, 300, dtype=np.uint8).tobytes())
    np.save(tmp_path / 'mel.npy', rng.uniform(-6, 1, (bigvgan.num_mels, 8)).astype(np.float32))
    r = cli('vocode', '--checkpoint', pt, '--mel', tmp_path / 'mel.npy', '--out',
            tmp_path / 'o.wav')
    # The .pt is read by the weights-only reader (docs/reliability.md): its garbage pickle is refused
    # naming the entry, not misread as a safetensors header.
    assert r.returncode == 1 and 'archive/data.pkl' in r.stderr, r.stderr
    assert 'header length' not in r.stderr
    r = cli('vocode', '--checkpoint', BV, '--mel', tmp_path / 'mel.npy', '--out', '/dev/full')
    assert r.returncode == 1 and 'No space left on device' in r.stderr, r.stderr


# ---- Ctrl-C and close() ------------------------------------------------------------------------

CTRL_C = r'''
import sys, numpy as np, meshnn
d = meshnn.LtxAudioDecoder.from_checkpoint(sys.argv[1], mesh='1x1')
lat = np.random.default_rng(0).standard_normal((1, 8, 4000, 16)).astype(np.float32)
print('ready', flush=True)
try:
    d(lat, chunk_frames=20)
    print('finished', flush=True)
except KeyboardInterrupt:
    print('interrupted', flush=True)
'''


def test_ctrl_c_interrupts_a_long_call(tmp_path):
    (tmp_path / 'run.py').write_text(CTRL_C)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(meshnn.__file__)), os.environ.get('PYTHONPATH', '')]))
    p = subprocess.Popen([sys.executable, str(tmp_path / 'run.py'), LTX], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == 'ready'
    import time
    time.sleep(1.0)  # inside the decode (4000 frames in chunks of 20: many seconds)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert out.strip() == 'interrupted', out + err


def test_close_and_context_manager(rng):
    mel = rng.uniform(-6, 1, (1, 100, 8)).astype(np.float32)
    with meshnn.BigVGAN.from_pretrained(BV) as v:
        with v.stream() as s:
            assert s.push(mel).shape[0] == 1
        assert s.closed
        with pytest.raises(ValueError, match='closed'):
            s.push(mel)
        y = v(mel, mesh='1x1')
    assert v.closed and y.shape == (1, 1, 8 * 256)
    with pytest.raises(ValueError, match='closed'):
        v(mel)
    d = meshnn.LtxAudioDecoder.from_checkpoint(LTX)
    d.close()
    with pytest.raises(ValueError, match='closed'):
        d.stream()
    # A stream outlives its closed (and collected) model: it keeps the weights it reads.
    import gc
    v = meshnn.BigVGAN.from_pretrained(BV)
    s = v.stream()
    want = np.concatenate([s.push(mel), s.flush()], axis=2)
    v.close()
    del v
    gc.collect()
    np.testing.assert_array_equal(np.concatenate([s.push(mel), s.flush()], axis=2), want)


# ---- item 16: CPU torch tensors are accepted by stream.push too ---------------------------------

def test_stream_push_takes_torch_tensors(bigvgan, rng):
    from conftest import import_torch
    torch = import_torch()
    mel = rng.uniform(-6, 1, (1, bigvgan.num_mels, 8)).astype(np.float32)
    s1, s2 = bigvgan.stream(), bigvgan.stream()
    a = np.concatenate([s1.push(torch.from_numpy(mel)), s1.flush()], axis=2)
    b = np.concatenate([s2.push(mel), s2.flush()], axis=2)
    np.testing.assert_array_equal(a, b)
