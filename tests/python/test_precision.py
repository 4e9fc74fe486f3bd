"""precision= in Python: a mode, the bf16-safe preset or per-stage pairs; strict parsing raises
ValueError naming the valid values; the preset equals its spelled-out form bit for bit."""
import numpy as np
import pytest

import meshnn
from conftest import fixture

LTX23 = fixture('ltx23_small.safetensors')


def test_stage_precisions_and_preset_bit_for_bit(rng):
    lat = rng.standard_normal((1, 8, 4, 16)).astype(np.float32)
    preset = meshnn.LtxAudioDecoder.from_checkpoint(LTX23, precision='bf16-safe')
    assert preset.stage_precisions == {'vae': 'bf16', 'vocoder': 'bf16', 'bwe': 'fp32'}
    spelled = meshnn.LtxAudioDecoder.from_checkpoint(LTX23, precision='vae=bf16,vocoder=bf16')
    assert spelled.stage_precisions == preset.stage_precisions
    np.testing.assert_array_equal(preset(lat), spelled(lat))
    fp32 = meshnn.LtxAudioDecoder.from_checkpoint(LTX23)
    assert fp32.stage_precisions == {'vae': 'fp32', 'vocoder': 'fp32', 'bwe': 'fp32'}
    assert not np.array_equal(preset(lat), fp32(lat))
    one = meshnn.LtxAudioDecoder.from_checkpoint(LTX23, precision='bf16x3')
    assert set(one.stage_precisions.values()) == {'bf16x3'}


@pytest.mark.parametrize('bad, match', [
    ('vea=bf16', r"unknown stage 'vea' \(stages: vae, vocoder, bwe\)"),
    ('vae=bf16,vae=fp32', "given twice"),
    ('vae=fp8', "unknown precision mode 'fp8' for stage vae"),
    ('fp8', r"a preset \(bf16-safe, auto\)"),
    ('bf16,bwe=fp32', "is not stage=mode"),
])
def test_bad_precision_raises_value_error(bad, match):
    with pytest.raises(ValueError, match=match):
        meshnn.LtxAudioDecoder.from_checkpoint(LTX23, precision=bad)


def test_a_model_refuses_a_stage_it_lacks():
    with pytest.raises(ValueError, match=r"LTX-2 has no stage 'bwe' \(its stages: vae, vocoder\)"):
        meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx2_small.safetensors'), precision='bwe=bf16')
    with pytest.raises(ValueError, match="NVIDIA BigVGAN has no stage 'vae'"):
        meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'),
                                       precision='bf16-safe')
    v = meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'),
                                       precision='vocoder=bf16')
    w = meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'), precision='bf16')
    mel = np.random.default_rng(3).standard_normal((1, v.num_mels, 12)).astype(np.float32)
    np.testing.assert_array_equal(v(mel), w(mel))
