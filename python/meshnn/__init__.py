"""meshnn from Python: NVIDIA BigVGAN, the LTX-2 / LTX-2.3 audio decode and the GR00T VL adapter and
policy on CPUs, without PyTorch at run time (torch tensors are accepted and can be returned).

    import meshnn
    model = meshnn.AudioModel.load("any/checkpoint/or/folder")   # found by the registry
    audio = model(x)                         # x in model.input_spec's layout
    # BigVGAN, LtxAudioDecoder and MiniMaxH3AudioVAE below are facades over AudioModel

    vocoder = meshnn.BigVGAN.from_pretrained("bigvgan_v2_24khz_100band_256x/")
    wav = vocoder(mel)                       # (B, num_mels, frames) → (B, 1, frames · hop)

    decoder = meshnn.LtxAudioDecoder.from_checkpoint("ltx-2.3.safetensors")
    audio = decoder(latent)                  # (B, 8, T, 16) → (B, 2, samples) at 48 kHz

    vae = meshnn.MiniMaxH3AudioVAE.from_pretrained("MiniMax-H3/audio_vae")
    wave = vae.decode(latents).sample        # (2, 32, T) → (2, 1, 800·T) at 32 kHz (stereo = 2)

    policy = meshnn.PolicyModel.load("action_head.safetensors", variant="n1.7",
                                     inputs={"token_types": types})   # any policy model
    actions = policy.run({"features": f, "state": s}, embodiment=0)["actions"]   # (1, T, A)

    adapter = meshnn.gr00t.VlAdapter("action_head.safetensors", version="n1.5", token_types=types)
    out = adapter(features, state=state)     # dict of arrays, as `meshnn policy --part adapter` writes
    policy = meshnn.gr00t.Policy.from_checkpoint("action_head.safetensors", "n1.6", types)
    actions = policy.get_action(features, state=state, embodiment=0, seed=0)   # (1, T, A)

Inputs: float32 numpy arrays or CPU torch tensors; C-contiguous ones are read in place (no copy),
strided ones (slices, transposes) are copied once. float64, wrong-rank or non-finite inputs raise
ValueError. Outputs follow the input: torch in → torch out, numpy in → numpy out (as_torch=True /
False overrides; a stream's flush follows its last push); either way meshnn's buffer, no copy.
Unknown keyword arguments raise TypeError naming them and the accepted ones. The GIL is
released while meshnn computes, so other Python threads run meanwhile; one model may be called from
several threads at once. Errors: ValueError (bad input or option), KeyError (checkpoint keys),
RuntimeError (the rest), with meshnn's message. See docs/python.md.
"""
from . import _meshnn
from ._audio import AudioModel, read_wav, write_wav
from ._bigvgan import BigVGAN, mel_spectrogram
from ._common import process_rank
from ._ltx import LtxAudioDecoder
from ._minimax_h3 import MiniMaxH3AudioVAE, MiniMaxH3EncodeStream
from ._policy import PolicyModel
from ._streams import AudioEncodeStream
from . import gr00t

__version__ = _meshnn.__version__
__all__ = ['AudioEncodeStream', 'AudioModel', 'BigVGAN', 'LtxAudioDecoder', 'MiniMaxH3AudioVAE',
           'MiniMaxH3EncodeStream', 'PolicyModel', 'gr00t', 'mel_spectrogram', 'process_rank',
           'read_wav', 'write_wav']
