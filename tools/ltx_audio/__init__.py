"""PyTorch reference for meshnn's audio models (LTX-2 / LTX-2.3 audio decode, NVIDIA BigVGAN).

Run with Debian's /usr/bin/python3 (python3-torch 1.13). Add tools/ to sys.path and
`import ltx_audio`. See docs/models.md.
"""
