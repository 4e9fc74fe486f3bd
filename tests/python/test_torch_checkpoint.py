"""NVIDIA's BigVGAN folder (config.json + bigvgan_generator.pt) through the library's weights-only
.pt reader: no torch needed, the same bits as the safetensors checkpoint from Python and the CLI,
and a .pt whose pickle holds anything but tensors refused."""
import shutil
import zipfile

import numpy as np
import pytest

import meshnn
from conftest import fixture, run_cli

FOLDER = fixture('bigvgan_nvidia_folder')


def test_folder_equals_safetensors_bit_for_bit(rng, tmp_path):
    folder = meshnn.BigVGAN.from_pretrained(FOLDER, threads=1)
    st = meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'), threads=1)
    assert folder.h == st.h
    mel = rng.standard_normal((2, folder.num_mels, 30)).astype(np.float32) - 4
    want = st(mel)
    np.testing.assert_array_equal(folder(mel), want)
    # The CLI takes the folder as --checkpoint too, with the same samples.
    np.save(tmp_path / 'mel.npy', mel[:1])
    run_cli('vocode', '--checkpoint', FOLDER, '--mel', tmp_path / 'mel.npy', '--out',
            tmp_path / 'out.wav', '--mesh', '1x1', '--quiet')
    samples, _ = meshnn.read_wav(tmp_path / 'out.wav')
    np.testing.assert_array_equal(samples[None], folder(mel[:1], mesh="1x1"))


def hostile_folder(tmp_path, pickle):
    d = tmp_path / 'hostile'
    d.mkdir()
    shutil.copy(FOLDER + '/config.json', d / 'config.json')
    with zipfile.ZipFile(d / 'bigvgan_generator.pt', 'w', zipfile.ZIP_STORED) as z:
        z.writestr('bigvgan_generator/data.pkl', pickle)
        z.writestr('bigvgan_generator/version', '3\n')
    return d


@pytest.mark.parametrize('pickle,needle', [
    (b'\x80\x02cos\nsystem\n(X\x05\x00\x00\x00touchtR.', "'os.system'"),
    (b'\x80\x02ctorch.nn.modules.conv\nConv1d\n)\x81.', 'torch.nn.modules.conv.Conv1d'),
    (b'\x80\x02cbuiltins\ngetattr\n.', "'builtins.getattr'"),
])
def test_pickle_with_code_is_refused(tmp_path, pickle, needle):
    with pytest.raises(Exception, match=needle):
        meshnn.BigVGAN.from_pretrained(hostile_folder(tmp_path, pickle))


def test_folder_without_weights_names_the_converter(tmp_path):
    shutil.copy(FOLDER + '/config.json', tmp_path / 'config.json')
    with pytest.raises(FileNotFoundError, match='convert_checkpoint.py'):
        meshnn.BigVGAN.from_pretrained(tmp_path)
