"""meshnn.PolicyModel: any robot policy model meshnn knows, through the policy registry (the
generic class, as AudioModel is for audio; meshnn.gr00t keeps GR00T's typed VlAdapter and Policy).

    policy = meshnn.PolicyModel.load("action_head.safetensors", variant="n1.7",
                                     inputs={"token_types": types})     # fixed at load
    actions = policy.run({"features": f, "state": s}, embodiment=0, seed=0)["actions"]

PolicyModel.catalog() lists every registered model with its variants, inputs, settings and parts
(the CLI's `policy` command is built from the same catalog).
"""
import json
import os

from . import _meshnn
from ._common import _Closable, _threads, bool_arg, int_arg
from ._convert import as_array, out, wants_torch
from ._kwargs import strict_class


def _arrays(inputs, what):
    if inputs is None:
        return {}
    if not isinstance(inputs, dict):
        raise ValueError(f'{what}: expected a dict of name → array, got {type(inputs).__name__}')
    return {str(k): as_array(v, str(k)) for k, v in inputs.items()}


@strict_class
class PolicyModel(_Closable):
    """A loaded policy model (PolicyModel.load): run() takes the observations by name and returns
    the part's outputs by name (the whole policy: "actions" (1, T, A)). May be called from several
    threads at once."""

    def __init__(self, core):
        self._core = core

    @classmethod
    def load(cls, path, variant=None, inputs=None, part='policy', model=None, mesh='1x1',
             threads=None, settings=None, config=None, allow_unknown_config=False):
        """path: a checkpoint file or folder (the registered model that recognises it loads it,
        or `model`); variant: the model version; inputs: the inputs fixed at load (the catalog's
        at_load ones) by name; part: "policy" or a part of the catalog; settings: the catalog's
        settings by name (values as strings, flags True / False); config: a JSON config (dict or
        file) replacing the checkpoint's."""
        bool_arg('PolicyModel.load: allow_unknown_config', allow_unknown_config)
        given = {}
        for k, v in (settings or {}).items():
            given[str(k)] = ('1' if v else '') if isinstance(v, bool) else str(v)
        if config is None:
            config_json = ''
        elif isinstance(config, dict):
            config_json = json.dumps(config)
        else:
            with open(os.fspath(config)) as f:
                config_json = f.read()
        return cls(_meshnn.PolicyModel.load(
            os.fspath(path), model or '', variant or '', str(part), str(mesh), _threads(threads),
            config_json, given, _arrays(inputs, 'PolicyModel.load: inputs'),
            allow_unknown_config))

    @staticmethod
    def registered():
        """The registered policy models' names, in the order load() asks them."""
        return list(_meshnn.PolicyModel.registered())

    @staticmethod
    def catalog():
        """Every registered policy model as a dict: name, description, path, variants, inputs,
        settings, parts."""
        return list(_meshnn.PolicyModel.catalog())

    @staticmethod
    def identify(path, model=None):
        """The registered name of the model load() would take `path` for (headers only)."""
        return _meshnn.PolicyModel.identify(os.fspath(path), model or '')

    @staticmethod
    def files(path, model=None):
        """The files load() reads for `path` (never to be written over)."""
        return list(_meshnn.PolicyModel.files(os.fspath(path), model or ''))

    @property
    def model(self):
        return self._live().model

    @property
    def variant(self):
        return self._live().variant

    @property
    def part(self):
        return self._live().part

    @property
    def metadata(self):
        return dict(self._live().metadata)

    @property
    def default_steps(self):
        return self._live().default_steps

    def describe(self):
        """The loaded plan (what `meshnn policy --describe` prints) as a dict."""
        return json.loads(self._live().describe())

    def run(self, inputs, embodiment=0, seed=0, steps=None, *, as_torch=None):
        """inputs: the per-call inputs by name (float32 arrays or torch tensors); embodiment: the
        embodiment id; seed: of the initial noise when no "noise" input is given; steps:
        denoising steps (None = the model's) → the outputs by name (torch when an input is)."""
        core = self._live()
        arrays = _arrays(inputs, 'PolicyModel.run: inputs')
        as_torch = wants_torch(next(iter((inputs or {}).values()), None), as_torch)
        res = core.run(arrays, int_arg('embodiment', embodiment, 0, 1 << 20),
                       int_arg('seed', seed, 0, (1 << 64) - 1),
                       0 if steps is None else int_arg('steps', steps, 1, 1 << 20))
        return {k: out(v, as_torch) for k, v in res.items()}

    __call__ = run

    def __repr__(self):
        if self.closed:
            return 'meshnn.PolicyModel(closed)'
        return f'meshnn.PolicyModel(model={self.model!r}, variant={self.variant!r}, part={self.part!r})'
