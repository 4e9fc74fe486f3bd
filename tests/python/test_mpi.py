"""The MPI backend from Python: two ranks under mpiexec decode (LTX) and vocode (BigVGAN) on a 1x2
mesh, equal to the local-thread 1x2 mesh bit for bit; MPI is finalized at exit (clean mpiexec)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import fixture

SCRIPT = r'''
import sys
import numpy as np
import meshnn
ltx, bv, out = sys.argv[1:4]
lat = np.random.default_rng(0).standard_normal((1, 8, 40, 16)).astype(np.float32)
y = meshnn.LtxAudioDecoder.from_checkpoint(ltx, mesh='1x2', backend='mpi')(lat)
v = meshnn.BigVGAN.from_pretrained(bv, mesh='1x2', backend='mpi')
mel = np.random.default_rng(1).standard_normal((1, v.num_mels, 40)).astype(np.float32)
w = v(mel)
if meshnn.process_rank() == 0:
    np.savez(out, ltx=y, bigvgan=w, lat=lat, mel=mel)
'''


def test_mpi_backend_equals_local(tmp_path):
    mpiexec = shutil.which('mpiexec.openmpi') or shutil.which('mpiexec')
    if not mpiexec:
        pytest.skip('no mpiexec')
    import meshnn
    env = dict(os.environ, OMPI_MCA_btl='^ofi,openib', OMPI_MCA_mtl='^ofi,psm',
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(meshnn.__file__)),
                                           os.environ.get('PYTHONPATH', '')]))
    (tmp_path / 'run.py').write_text(SCRIPT)
    ltx, bv = fixture('ltx23_small.safetensors'), fixture('bigvgan_v2_24k_small.safetensors')
    r = subprocess.run([mpiexec, '--allow-run-as-root', '--oversubscribe', '-np', '2', sys.executable,
                        str(tmp_path / 'run.py'), ltx, bv, str(tmp_path / 'out.npz')],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    got = np.load(tmp_path / 'out.npz')
    want_ltx = meshnn.LtxAudioDecoder.from_checkpoint(ltx, mesh='1x2')(got['lat'])
    want_bv = meshnn.BigVGAN.from_pretrained(bv, mesh='1x2')(got['mel'])
    np.testing.assert_array_equal(got['ltx'], want_ltx)
    np.testing.assert_array_equal(got['bigvgan'], want_bv)
