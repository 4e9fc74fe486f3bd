"""`meshnn serve --backend mpi` under `mpiexec -np 2` (docs/serve.md, "Across machines"): rank 0
serves, each request runs on the 1x2 mesh of both ranks and equals the single-process CLI on the
same mesh bit for bit (and the 1x1 CLI to f32 rounding); streams are refused; a rank that stops
makes the next request answer 503 and the job exit non-zero, a rank that is killed ends the job
non-zero; an input the mesh cannot split is a 400 and the mesh goes on; SIGTERM to rank 0 stops
every rank with 0. The stop is found within the bound given as `meshnn --comm-timeout 3 serve`: the
CLI passes it on to meshnn-serve, which it runs on each rank."""
import io
import os
import shutil
import signal
import subprocess
import tempfile
import time

import numpy as np
import pytest

from conftest import cli_path, fixture, run_cli

requests = pytest.importorskip('requests')

VOC = fixture('bigvgan_v2_24k_small.safetensors')
LTX23 = fixture('ltx23_small.safetensors')


def wav_float_data(b):
    import struct
    i = b.index(b'data')
    n = struct.unpack('<I', b[i + 4:i + 8])[0]
    return np.frombuffer(b[i + 8:i + 8 + n], np.float32)


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


class MpiServer:
    """mpiexec -np 2 meshnn serve --backend mpi --mesh 1x2 on 127.0.0.1 and a free port (each rank
    runs meshnn-serve in its own process: `meshnn serve` execs it)."""

    def __init__(self, comm_timeout=3, timeout_option=False):
        """timeout_option: give the bound as `meshnn --comm-timeout S serve` (passed on to
        meshnn-serve) with MESHNN_COMM_TIMEOUT far above it, so that only the option can end a
        wait within the test's time; else as MESHNN_COMM_TIMEOUT."""
        mpiexec = shutil.which('mpiexec.openmpi')
        if not mpiexec:
            pytest.skip('mpiexec.openmpi is not installed')
        cli = cli_path()
        if not os.path.isfile(cli):
            pytest.skip(f'the meshnn CLI is not built ({cli})')
        self.dir = tempfile.mkdtemp(prefix='meshnn_serve_mpi_test_')
        port_file = os.path.join(self.dir, 'port')
        self.log_path = os.path.join(self.dir, 'stderr.log')
        self.log = open(self.log_path, 'w')
        # TMPDIR: ours, so that anything the ranks write there is found (and removed with it).
        env = dict(os.environ, OMPI_MCA_btl='^ofi,openib', OMPI_MCA_mtl='^ofi,psm',
                   MESHNN_COMM_TIMEOUT='600' if timeout_option else str(comm_timeout),
                   TMPDIR=self.dir)
        timeout = ['--comm-timeout', str(comm_timeout)] if timeout_option else []
        cmd = [mpiexec, '--allow-run-as-root', '--oversubscribe', '-np', '2', cli, *timeout, 'serve',
               '--backend', 'mpi', '--mesh', '1x2', '--host', '127.0.0.1', '--port', '0',
               '--port-file', port_file, '--threads-per-worker', '1', '--model', f'voc={VOC}',
               '--model', f'ltx={LTX23}']
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log, env=env,
                                     start_new_session=True)
        t0 = time.time()
        while not os.path.exists(port_file):
            assert self.proc.poll() is None, f'server exited: {self.stderr()}'
            assert time.time() - t0 < 60, 'server did not start'
            time.sleep(0.02)
        self.url = f'http://127.0.0.1:{int(open(port_file).read())}'

    def stderr(self):
        if self.log.closed:
            return self.final_stderr
        self.log.flush()
        return open(self.log_path).read()

    def ranks(self):
        """PIDs of the two meshnn processes (mpiexec's children): (rank 0, the follower); rank 0
        is the one listening on the port."""
        out = subprocess.run(['pgrep', '-P', str(self.proc.pid)], capture_output=True, text=True)
        pids = [int(p) for p in out.stdout.split()]
        assert len(pids) == 2, (pids, self.stderr())
        port = self.url.rsplit(':', 1)[1]
        listening = [p for p in pids if listens(p, int(port))]
        assert len(listening) == 1, (pids, listening)
        return listening[0], next(p for p in pids if p != listening[0])

    def cleanup(self):
        """Ends the job if it still runs and removes the temp folder (after a failed check)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if not self.log.closed:
            self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def close(self, timeout=60):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise
        finally:
            self.final_stderr = self.stderr()
            self.log.close()
            # What the server left in TMPDIR (it once left its WAV scratch folder on mesh_failed).
            self.left = [n for n in os.listdir(self.dir) if n.startswith('meshnn_serve_')]
            shutil.rmtree(self.dir, ignore_errors=True)
        return rc


def listens(pid, port):
    """Whether process `pid` holds a listening TCP socket on `port` (from /proc)."""
    inodes = set()
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            link = os.readlink(f'/proc/{pid}/fd/{fd}')
            if link.startswith('socket:['):
                inodes.add(link[8:-1])
    except OSError:
        return False
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                local_port = int(cols[1].rsplit(':', 1)[1], 16)
                if local_port == port and cols[3] == '0A' and cols[9] in inodes:  # 0A: LISTEN
                    return True
    return False


def cli_out(tmp_path, kind, x, mesh):
    src, out = tmp_path / 'in.npy', tmp_path / f'cli_{mesh}.wav'
    np.save(src, x)
    if kind == 'voc':
        run_cli('vocode', '--checkpoint', VOC, '--mel', src, '--out', out, '--mesh', mesh,
                '--threads', 1, '--quiet')
    else:
        run_cli('audio-decode', '--checkpoint', LTX23, '--latent', src, '--out', out, '--mesh',
                mesh, '--threads', 1, '--quiet')
    return out.read_bytes()


def test_mpi_server_answers_on_the_mesh_and_ends_when_a_rank_stops(tmp_path):
    srv = MpiServer(comm_timeout=3, timeout_option=True)
    stopped = None
    try:
        assert requests.get(f'{srv.url}/readyz', timeout=10).status_code == 200
        rng = np.random.default_rng(7)
        for kind, x in (('voc', rng.standard_normal((1, 100, 40)).astype(np.float32)),
                        ('ltx', rng.standard_normal((1, 8, 12, 16)).astype(np.float32))):
            r = requests.post(f'{srv.url}/v1/models/{kind}/decode', data=npy_bytes(x),
                              headers={'Content-Type': 'application/x-npy'}, timeout=120)
            assert r.status_code == 200, r.text
            # The same mesh in one process (local threads): bit for bit, as the MPI backend is.
            assert r.content == cli_out(tmp_path, kind, x, '1x2'), kind
            # One device: the time shards only reorder f32 sums.
            one = wav_float_data(cli_out(tmp_path, kind, x, '1x1'))
            np.testing.assert_allclose(wav_float_data(r.content), one, rtol=0, atol=1e-5)
        # Streams are refused under MPI, before the upgrade.
        r = requests.get(f'{srv.url}/v1/models/voc/stream', timeout=10,
                         headers={'Connection': 'Upgrade', 'Upgrade': 'websocket',
                                  'Sec-WebSocket-Version': '13',
                                  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ=='})
        assert r.status_code == 501 and 'mpi' in r.json()['error']['message'], r.text
        # A follower that stops (hung, or its machine gone silent): the next request times out on
        # the collectives (`meshnn --comm-timeout 3 serve`, over MESHNN_COMM_TIMEOUT=600) and
        # answers 503; the job ends non-zero.
        _, stopped = srv.ranks()
        os.kill(stopped, signal.SIGSTOP)
        t0 = time.time()
        x = rng.standard_normal((1, 100, 40)).astype(np.float32)
        r = requests.post(f'{srv.url}/v1/models/voc/decode', data=npy_bytes(x),
                          headers={'Content-Type': 'application/x-npy'}, timeout=60)
        assert r.status_code == 503, r.text
        assert r.json()['error']['code'] == 'mesh_failed'
        assert time.time() - t0 < 30
        rc = srv.close(timeout=30)
        assert rc != 0, srv.stderr()
        assert 'did not take part' in srv.stderr() or 'liveness' in srv.stderr(), srv.stderr()
        assert srv.left == [], srv.left  # nothing left in TMPDIR
    finally:
        if stopped is not None:
            try:
                os.kill(stopped, signal.SIGCONT)
            except ProcessLookupError:
                pass
        srv.cleanup()


def test_mpi_server_sigterm_on_rank_0_stops_every_rank_cleanly():
    srv = MpiServer()
    try:
        # An input the mesh cannot split fails the same check on every rank: 400, and the mesh
        # goes on with the next request.
        for frames, status in ((3, 400), (40, 200)):
            x = np.random.default_rng(3).standard_normal((1, 100, frames)).astype(np.float32)
            r = requests.post(f'{srv.url}/v1/models/voc/decode', data=npy_bytes(x),
                              headers={'Content-Type': 'application/x-npy'}, timeout=120)
            assert r.status_code == status, r.text
        rank0, _ = srv.ranks()
        os.kill(rank0, signal.SIGTERM)
        assert srv.close(timeout=30) == 0, srv.stderr()
    finally:
        srv.cleanup()


def test_mpi_server_with_a_killed_rank_ends_non_zero():
    """A rank whose process ends (crash, OOM kill): Open MPI itself ends the job within about a
    second (SIGTERM, then SIGKILL to the other ranks) and mpiexec exits non-zero."""
    srv = MpiServer()
    try:
        _, follower = srv.ranks()
        os.kill(follower, signal.SIGKILL)
        x = np.random.default_rng(4).standard_normal((1, 100, 20)).astype(np.float32)
        try:
            r = requests.post(f'{srv.url}/v1/models/voc/decode', data=npy_bytes(x),
                              headers={'Content-Type': 'application/x-npy'}, timeout=60)
            assert r.status_code == 503, r.text  # if rank 0 saw it before the job ended
        except requests.ConnectionError:
            pass  # the job ended first
        assert srv.close(timeout=30) != 0, srv.stderr()
    finally:
        srv.cleanup()
