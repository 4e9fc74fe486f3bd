"""meshnn.gr00t: the GR00T VL adapter and the whole policy (adapter + flow-matching action head),
with the options of `meshnn gr00t-adapter` / `meshnn gr00t-policy`.

    adapter = meshnn.gr00t.VlAdapter("action_head.safetensors", version="n1.5",
                                     token_types=types)          # (S,) ints: 0 text, 1 image, 2 pad
    out = adapter(features, state=state, embodiment=0)          # features (1, S, D) float32
    out["kv.0.k"], out["dit_encoder_hidden_states"], out["state_features"], ...

    policy = meshnn.gr00t.Policy.from_checkpoint("action_head.safetensors", version="n1.6",
                                                 token_types=types, mesh="1x2")
    actions = policy.get_action(features, state=state, embodiment=0, seed=0)   # (1, T, A)

The adapter's outputs are the tensors the CLI writes to its .safetensors, by the same names; the
policy's actions are what `meshnn gr00t-policy` writes. Both objects are loaded once (each device of
the mesh packs its head slice once) and may be called from several threads at once.
"""
import collections.abc
import json
import os

import numpy as np

from . import _meshnn
from ._common import _Closable, _threads, _unknown_config_option, int_arg
from ._convert import as_array, out, wants_torch
from ._kwargs import strict_class


def _token_types(token_types):
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
    return types


def _features(x, what, owner):
    """features as an array; an observation dict (what a GR00T policy server takes) is refused
    with what meshnn's policy takes instead (the sizes from owner's plan)."""
    if isinstance(x, collections.abc.Mapping):
        seq_len, dim = owner.seq_len, owner.feature_dim
        keys = sorted(map(str, x))[:8]
        hint = " (pass features=obs['backbone_features'])" if 'backbone_features' in x else ''
        more = ', vl_mask=, noise=, seed=, steps=' if what.endswith('Policy') else ''
        raise ValueError(
            f'features: got a {type(x).__name__} with keys {keys}{hint}. {what} starts after the '
            f"VLM backbone: it takes the backbone features (Eagle's `backbone_features`), a "
            f'float32 array (1, S, D) = (1, {seq_len}, {dim}) in token rows (or (1, 1, S_pad, D) '
            f'in slots), not an observation of images, text and state. Run the backbone first, '
            f'then pass features=, state= (1, 1, d), embodiment= (the embodiment id){more}.')
    return as_array(x, 'features')


def _call_option(core_cls, allow_unknown_config, what):
    # The core's constructor takes allow_unknown_config (when this build has it) as a keyword.
    return _unknown_config_option(core_cls.__init__, allow_unknown_config, what)


def _config(config):
    if config is None:
        return ''
    if isinstance(config, dict):
        return json.dumps(config)
    with open(os.fspath(config)) as f:
        return f.read()


@strict_class
class VlAdapter(_Closable):
    """checkpoint: Isaac-GR00T action head .safetensors, or a Hugging Face checkpoint folder
    (config.json + model.safetensors or sharded files + model.safetensors.index.json); version:
    n1.5 | n1.6 | n1.7;
    token_types: (S,) ints or a .npy path (fixes the slot layout); config: JSON path, dict or
    None (the checkpoint's metadata); mesh: "1x1" or "1xN" / "Nx1" (heads split, local threads);
    precision / hoist_precision: fp32 | bf16; gather_mode: splice | onehot; taps: also return the
    debug taps ("tap.<name>"); threads: OpenMP threads per device (None = cores / devices);
    allow_unknown_config: accept config fields meshnn does not know."""

    def __init__(self, checkpoint, version, token_types, *, config=None, mesh='1x1',
                 backend='local', precision='fp32', hoist_precision='fp32', gather_mode='splice',
                 taps=False, threads=None, allow_unknown_config=False):
        if not isinstance(taps, bool):
            raise ValueError(f'taps must be True or False, got {taps!r}')
        extra = _call_option(_meshnn.Gr00tVlAdapter, allow_unknown_config, 'gr00t.VlAdapter')
        self._core = _meshnn.Gr00tVlAdapter(os.fspath(checkpoint), version,
                                            _token_types(token_types), _config(config), mesh,
                                            backend, precision, hoist_precision, gather_mode,
                                            taps, _threads(threads), **extra)

    @property
    def version(self):
        return self._live().version

    @property
    def seq_len(self):
        return self._live().seq_len

    @property
    def feature_dim(self):
        """D of the backbone features (1, seq_len, D) the calls take."""
        return self._live().feature_dim

    def describe(self):
        """The adapter plan (what `meshnn gr00t-adapter --describe` prints) as a dict."""
        return json.loads(self._live().describe())

    def __call__(self, features, state=None, embodiment=0, *, as_torch=None):
        """features: (1, S, D) | (S, D) token rows or (1, 1, S_pad, D) slots, float32 (the VLM
        backbone's output); state: (1, 1, d) | (1, d) | (d) float32 or None → {name: array},
        torch tensors when features is one (as_torch overrides)."""
        core = self._live()
        as_torch = wants_torch(features, as_torch)
        f = _features(features, 'meshnn.gr00t.VlAdapter', self)
        st = None if state is None else as_array(state, 'state')
        res = core.forward(f, st, int_arg('embodiment', embodiment, 0, 1 << 20))
        return {k: out(v, as_torch) for k, v in res.items()}

    forward = __call__


@strict_class
class Policy(_Closable):
    """GR00T's policy after the backbone: VL adapter + DiT action head + flow-matching Euler steps
    (`meshnn gr00t-policy`). checkpoint: Isaac-GR00T action head .safetensors (adapter and head
    tensors), or a Hugging Face checkpoint folder (config.json + model.safetensors or sharded files
    + model.safetensors.index.json); version: n1.5 | n1.6 | n1.7; token_types: (S,) ints or a .npy path (fixes the slot
    layout; N1.6 / N1.7 need text and image tokens); config: JSON path, dict or None (the
    checkpoint's metadata); mesh: "1x1" or "1xN" / "Nx1" (heads split over local threads);
    threads: OpenMP threads per device (None = cores / devices); precision: fp32 | bf16 (every
    GEMM); hoist_precision: None (= precision) | fp32 | bf16; gather_mode: splice | onehot;
    allow_unknown_config: accept config fields meshnn does not know.

    get_action takes what comes out of the VLM backbone (Eagle), not an observation: features
    (1, seq_len, D) with D = feature_dim (the backbone's width), state (1, 1, d), embodiment."""

    def __init__(self, checkpoint, version, token_types, *, config=None, mesh='1x1',
                 backend='local', threads=None, precision='fp32', hoist_precision=None,
                 gather_mode='splice', allow_unknown_config=False):
        extra = _call_option(_meshnn.Gr00tPolicy, allow_unknown_config, 'gr00t.Policy')
        self._core = _meshnn.Gr00tPolicy(os.fspath(checkpoint), version, _token_types(token_types),
                                         _config(config), mesh, backend, _threads(threads),
                                         precision, hoist_precision or '', gather_mode, **extra)

    @classmethod
    def from_checkpoint(cls, path, version, token_types, *, config=None, mesh='1x1',
                        backend='local', threads=None, precision='fp32', hoist_precision=None,
                        gather_mode='splice', allow_unknown_config=False):
        """The same as Policy(path, version, token_types, ...)."""
        return cls(path, version, token_types, config=config, mesh=mesh, backend=backend,
                   threads=threads, precision=precision, hoist_precision=hoist_precision,
                   gather_mode=gather_mode, allow_unknown_config=allow_unknown_config)

    @property
    def version(self):
        return self._live().version

    @property
    def seq_len(self):
        return self._live().seq_len

    @property
    def feature_dim(self):
        """D of the backbone features (1, seq_len, D) the calls take."""
        return self._live().feature_dim

    @property
    def action_horizon(self):
        return self._live().action_horizon

    @property
    def action_dim(self):
        return self._live().action_dim

    @property
    def num_steps(self):
        return self._live().num_steps

    def describe(self):
        """The action head's plan (what `meshnn gr00t-policy --describe` prints) as a dict."""
        return json.loads(self._live().describe())

    def get_action(self, features, vl_mask=None, state=None, embodiment=0, noise=None, seed=0, *,
                   steps=None, return_velocities=False, as_torch=None):
        """features: (1, S, D) | (S, D) token rows or (1, 1, S_pad, D) slots, float32; vl_mask:
        (S_pad,) 0/1 float32 key-valid mask or None (the layout's); state: (1, 1, d) | (1, d) |
        (d) float32, d ≤ max_state_dim; embodiment: 0 … max_num_embodiments − 1; noise: (1, T, A)
        float32 or None to draw meshnn's seeded noise from `seed`; steps: Euler steps (None = the
        checkpoint's) → actions (1, T, A) float32 in the model's normalised action space, or
        (actions, [velocity (1, T, A) per step]) with return_velocities=True; torch tensors when
        features is one (as_torch overrides). features come from the VLM backbone: an
        observation dict raises ValueError saying so."""
        if not isinstance(return_velocities, bool):
            raise ValueError(f'return_velocities must be True or False, got {return_velocities!r}')
        core = self._live()
        as_torch = wants_torch(features, as_torch)
        actions, vel = core.get_action(
            _features(features, 'meshnn.gr00t.Policy', self),
            None if vl_mask is None else as_array(vl_mask, 'vl_mask'),
            None if state is None else as_array(state, 'state'),
            int_arg('embodiment', embodiment, 0, 1 << 20),
            None if noise is None else as_array(noise, 'noise'),
            int_arg('seed', seed, 0, (1 << 64) - 1),
            0 if steps is None else int_arg('steps', steps, 1, 1 << 20), return_velocities)
        if return_velocities:
            return out(actions, as_torch), [out(v, as_torch) for v in vel]
        return out(actions, as_torch)

    __call__ = get_action

    def __repr__(self):
        if self.closed:
            return 'meshnn.gr00t.Policy(closed)'
        return (f'meshnn.gr00t.Policy(version={self.version!r}, '
                f'action_horizon={self.action_horizon}, action_dim={self.action_dim})')
