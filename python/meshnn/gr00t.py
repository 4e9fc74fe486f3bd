"""meshnn.gr00t.VlAdapter: the GR00T VL adapter with the options of `meshnn gr00t-adapter`.

    adapter = meshnn.gr00t.VlAdapter("action_head.safetensors", version="n1.5",
                                     token_types=types)          # (S,) ints: 0 text, 1 image, 2 pad
    out = adapter(features, state=state, embodiment=0)          # features (1, S, D) float32
    out["kv.0.k"], out["dit_encoder_hidden_states"], out["state_features"], ...

The outputs are the tensors the CLI writes to its .safetensors, by the same names.
"""
import json
import os

import numpy as np

from . import _meshnn
from ._audio import _Closable, int_arg
from ._convert import as_array, out


class VlAdapter(_Closable):
    """checkpoint: Isaac-GR00T action head .safetensors; version: n1.5 | n1.6 | n1.7;
    token_types: (S,) ints or a .npy path (fixes the slot layout); config: JSON path, dict or
    None (the checkpoint's metadata); mesh: "1x1" or "1xN" / "Nx1" (heads split, local threads);
    precision / hoist_precision: fp32 | bf16; gather_mode: splice | onehot; taps: also return the
    debug taps ("tap.<name>")."""

    def __init__(self, checkpoint, version, token_types, *, config=None, mesh='1x1',
                 backend='local', precision='fp32', hoist_precision='fp32', gather_mode='splice',
                 taps=False):
        if isinstance(token_types, (str, os.PathLike)):
            token_types = np.load(os.fspath(token_types))
        types = np.asarray(as_array(token_types, 'token_types'))
        # Token types are ids (0 text, 1 image, 2 padding): integers only, never floats or bools
        # (1.7 is not silently 1).
        if types.dtype == np.bool_ or not np.issubdtype(types.dtype, np.integer):
            raise ValueError(f'token_types: expected integers (0 text, 1 image, 2 padding), got '
                             f'dtype {types.dtype}')
        if types.ndim == 2 and types.shape[0] == 1:
            types = types[0]
        if types.ndim != 1:
            raise ValueError(f'token_types: expected (S,) or (1, S), got shape {types.shape}')
        if config is None:
            cfg = ''
        elif isinstance(config, dict):
            cfg = json.dumps(config)
        else:
            with open(os.fspath(config)) as f:
                cfg = f.read()
        if not isinstance(taps, bool):
            raise ValueError(f'taps must be True or False, got {taps!r}')
        self._core = _meshnn.Gr00tVlAdapter(os.fspath(checkpoint), version, types, cfg, mesh,
                                            backend, precision, hoist_precision, gather_mode,
                                            taps)

    @property
    def version(self):
        return self._live().version

    @property
    def seq_len(self):
        return self._live().seq_len

    def describe(self):
        """The adapter plan (what `meshnn gr00t-adapter --describe` prints) as a dict."""
        return json.loads(self._live().describe())

    def __call__(self, features, state=None, embodiment=0, *, as_torch=False):
        """features: (1, S, D) | (S, D) token rows or (1, 1, S_pad, D) slots, float32;
        state: (1, 1, d) | (1, d) | (d) float32 or None → {name: array}."""
        st = None if state is None else as_array(state, 'state')
        res = self._live().forward(as_array(features, 'features'), st,
                                   int_arg('embodiment', embodiment, 0, 1 << 20))
        return {k: out(v, as_torch) for k, v in res.items()}

    forward = __call__
