"""Two "hosts" on one machine (tools/netns_mesh.sh, docs/scale_out.md): two network namespaces
joined by a veth link, Open MPI over TCP between them. The LTX-2.3 time shard (1x2), the H3 stereo
split and a 1x2 stream pipeline run across the link and equal the local backend bit for bit
(meshnn_mpi_tests' checks); a host whose link is cut (`ip link set down`) ends the next call with
CommError within the comm timeout. Skipped (with the reason) where namespaces cannot be made.
Every namespace and veth is named after this run and removed at the end, whatever happened."""
import os
import random
import re
import signal
import subprocess
import tempfile
import time

import pytest

SRC = os.environ.get('MESHNN_SOURCE_DIR',
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get('MESHNN_BINARY_DIR', os.path.join(SRC, 'build'))
SCRIPT = os.path.join(SRC, 'tools', 'netns_mesh.sh')
MPI_TESTS = os.path.join(BIN, 'meshnn_mpi_tests')
COMM_TIMEOUT = 3


def netns_or_skip():
    if os.geteuid() != 0:
        pytest.skip('network namespaces need root (ip netns add); not root here')
    r = subprocess.run([SCRIPT, 'check'], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f'network namespaces cannot be made here: {r.stdout.strip()} {r.stderr}')
    if not os.path.isfile(MPI_TESTS):
        pytest.skip(f'meshnn_mpi_tests is not built ({MPI_TESTS})')


@pytest.fixture
def hosts():
    """Two namespaces with a unique ID for this test; always torn down (and checked gone)."""
    netns_or_skip()
    ident = f'm{os.getpid() % 100000:05d}{random.randrange(36 * 36):03x}'[:8]
    try:
        subprocess.run([SCRIPT, 'up', ident], check=True, timeout=30)
        yield ident
    finally:
        subprocess.run([SCRIPT, 'down', ident], timeout=60)
        left = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
        assert f'meshnn-{ident}-' not in left, left


def tx_bytes(ident):
    out = subprocess.run(['ip', 'netns', 'exec', f'meshnn-{ident}-h0', 'cat',
                          f'/sys/class/net/{ident}a/statistics/tx_bytes'],
                         capture_output=True, text=True, timeout=10)
    return int(out.stdout)


def run_across(ident, args, env=None, **kw):
    return subprocess.Popen([SCRIPT, 'run', ident, '-x', 'MESHNN_COMM_TIMEOUT', '-x',
                             'MESHNN_NETNS_CUT_DIR', '-x', 'OMP_NUM_THREADS', MPI_TESTS] + args,
                            env=env, start_new_session=True, **kw)


def end(proc):
    """Ends the launcher and everything it started (a daemon behind a cut link never ends)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_across_two_hosts_equals_local_bit_for_bit(hosts):
    subprocess.run([SCRIPT, 'shape', hosts, '10g'], check=True, timeout=30)
    before = tx_bytes(hosts)
    env = dict(os.environ, MESHNN_COMM_TIMEOUT='60', OMP_NUM_THREADS='1')
    tests = ('MpiLtxAudio.DecodeShardedEqualsUnsharded:MiniMaxH3Mpi.DecodeAndEncodeEqualOneDevice:'
             'MpiAcrossHosts.StreamPipelineEqualsLocalPipelineBitForBit')
    p = run_across(hosts, [f'--gtest_filter={tests}'], env=env, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=240)
    finally:
        end(p)
    assert p.returncode == 0, out
    assert '3 tests' in out and 'PASSED' in out, out
    # The halos went over the veth (TCP between the namespaces), not shared memory.
    assert tx_bytes(hosts) - before > 100_000


def test_cut_link_ends_the_call_with_comm_error(hosts):
    with tempfile.TemporaryDirectory(prefix='meshnn_netns_') as d:
        env = dict(os.environ, MESHNN_COMM_TIMEOUT=str(COMM_TIMEOUT), MESHNN_NETNS_CUT_DIR=d,
                   OMP_NUM_THREADS='1')
        log = open(os.path.join(d, 'out.log'), 'w+')
        p = run_across(hosts, ['--gtest_filter=MpiAcrossHosts.CutLinkEndsTheCallWithCommError'],
                       env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            t0 = time.time()
            while not all(os.path.exists(os.path.join(d, f'ready{r}')) for r in (0, 1)):
                assert p.poll() is None, open(log.name).read()
                assert time.time() - t0 < 120, 'the ranks did not start: ' + open(log.name).read()
                time.sleep(0.05)
            subprocess.run([SCRIPT, 'cut', hosts], check=True, timeout=10)
            open(os.path.join(d, 'go'), 'w').close()
            cut_at = time.time()
            line = None
            while line is None and time.time() - cut_at < COMM_TIMEOUT + 15:
                m = re.search(r'CUT-RESULT rank 0 after ([0-9.]+) s: (.*)', open(log.name).read())
                line = m
                time.sleep(0.05)
            out = open(log.name).read()
        finally:
            end(p)
            log.close()
        assert line is not None, 'rank 0 did not end the call: ' + out
        print(f'\nnetns cut link: {line.group(0)}')
        assert line.group(2).startswith('CommError'), out
        # Within the bound (plus the scheduling slack of a loaded 2-core machine).
        assert float(line.group(1)) <= COMM_TIMEOUT + 3, out
        assert 'not every rank reached' in line.group(2) or 'silent' in line.group(2), out
