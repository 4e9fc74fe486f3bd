"""Helpers every class of the package shares: argument checks (int_arg, threads, backend,
allow_unknown_config), close() / `with` (_Closable), drop-in Module.to, and AttrDict."""
import atexit
import operator

from . import _meshnn
from ._convert import is_torch
from ._kwargs import strict, strict_class


class AttrDict(dict):
    """A dict whose keys are also attributes (NVIDIA's `h`)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


_mpi_finalize_registered = False


def _backend(backend):
    """Checks the backend name; for "mpi", finalizes MPI when the interpreter exits (every rank of
    an mpiexec launch must, or mpiexec reports an abnormal end)."""
    global _mpi_finalize_registered
    if backend not in ('local', 'mpi'):
        raise ValueError(f'backend must be "local" or "mpi", got {backend!r}')
    if backend == 'mpi' and not _mpi_finalize_registered:
        atexit.register(_meshnn._finalize_backends)
        _mpi_finalize_registered = True
    return backend


def _unknown_config_option(core_load, allow_unknown_config, what):
    """The keyword the core's load takes for allow_unknown_config (a bool; anything else raises
    ValueError naming `what`)."""
    if not isinstance(allow_unknown_config, bool):
        raise ValueError(f'{what}: allow_unknown_config must be True or False, '
                         f'got {allow_unknown_config!r}')
    return {'allow_unknown_config': allow_unknown_config}


def _to_cpu_float32(owner, args, device, dtype):
    """torch's Module.to(...) for drop-in code: the CPU and float32 are accepted (meshnn runs on
    the CPU and takes float32; its compute precision is chosen at load); anything else raises
    ValueError instead of being ignored."""
    for a in args:
        kind = type(a).__name__ if is_torch(a) else ''
        if isinstance(a, bool):
            continue  # non_blocking, given positionally
        if kind == 'Tensor':
            device, dtype = a.device, a.dtype
        elif kind == 'dtype':
            dtype = a
        elif kind == 'device' or isinstance(a, (str, int)):
            device = a
        else:
            raise ValueError(f'{type(owner).__name__}.to(): unexpected argument {a!r}')
    if device is not None and str(getattr(device, 'type', device)).split(':')[0] != 'cpu':
        raise ValueError(f'{type(owner).__name__}.to({device!r}): meshnn runs on the CPU; its '
                         f'outputs are CPU arrays / tensors (move those with .to(device))')
    if dtype is not None and str(dtype) not in ('torch.float32', 'float32', 'torch.float'):
        raise ValueError(f'{type(owner).__name__}.to(dtype={dtype}): inputs and outputs are '
                         f'float32; choose the compute precision at load (precision="bf16")')
    return owner


@strict
def process_rank(backend='mpi'):
    """This process's rank under mpiexec (0 without MPI): write outputs from rank 0 only."""
    return _meshnn.process_rank(_backend(backend))


def int_arg(name, value, lo=None, hi=None):
    """value as an int when it is one (int or numpy integer; never bool or float: 4.7 is not
    silently 4, True is not 1), within [lo, hi]; ValueError otherwise."""
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError(f'{name} must be an integer, got {type(value).__name__} {value!r}')
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f'{name} must be an integer, got {type(value).__name__} {value!r}') from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bounds = f'≥ {lo}' if hi is None else f'in [{lo}, {hi}]'
        raise ValueError(f'{name} must be {bounds}, got {v}')
    return v


def _threads(threads):
    if threads is None:
        return 0
    return int_arg('threads', threads, 0, 4096)


@strict_class
class _Closable:
    """close() and `with`: drops the compiled object (its memory is freed once no call on
    another thread still uses it); any later call raises ValueError."""
    _core = None

    def _live(self):
        core = self._core
        if core is None:
            raise ValueError(f'{type(self).__name__} is closed')
        return core

    def close(self):
        self._core = None

    @property
    def closed(self):
        return self._core is None

    def __enter__(self):
        self._live()
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def bool_arg(name, value):
    """value when it is True or False; ValueError otherwise (1 and 'yes' are not booleans)."""
    if not isinstance(value, bool):
        raise ValueError(f'{name} must be True or False, got {value!r}')
    return value
