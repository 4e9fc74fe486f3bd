"""MiniMax-H3 audio VAE (`AutoencoderKLMiniMaxH3Audio`) in plain PyTorch, written from the project's facts
document on the model: DAC encoder, causal-attention projection (`pre_block`), posterior heads,
`dec_in_proj` and the BigVGAN-v2 decoder (tools/ltx_audio/bigvgan.py under the `decoder.` prefix)."""
