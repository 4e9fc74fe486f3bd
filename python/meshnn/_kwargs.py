"""Keyword arguments at the boundary: every public call of the package refuses a keyword it does
not take with a TypeError that names it and lists what the call accepts (a misspelt
`precison='bf16'` must never run fp32 silently).

`strict(fn)` wraps one function; `strict_class(cls)` wraps every public method, `__init__`,
`__call__`, classmethod and staticmethod of a class (properties are left alone). The check is a
set inclusion on the call's keywords, so a call without keywords costs one extra frame.
"""
import difflib
import functools
import inspect

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def unknown_keyword_error(label, key, accepted):
    """The TypeError for `key` given to `label`, which takes the keywords `accepted` (in order)."""
    close = difflib.get_close_matches(key, accepted, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ''
    listed = ', '.join(accepted) if accepted else 'no keyword arguments'
    return TypeError(f"{label}() got an unexpected keyword argument '{key}'{hint}; "
                     f"it accepts: {listed}")


def strict(fn, label=None):
    """fn, refusing unknown keywords with unknown_keyword_error; fn must not take **kwargs."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
        raise AssertionError(f'{fn.__qualname__} takes **kwargs: list its keywords instead')
    accepted = [p.name for p in params if p.kind in _NAMED and p.name not in ('self', 'cls')]
    names = frozenset(accepted)
    if label is None:
        label = f'{_public_module(fn.__module__)}.{fn.__qualname__}'

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if kwargs and not names.issuperset(kwargs):
            key = next(k for k in kwargs if k not in names)
            raise unknown_keyword_error(label, key, accepted)
        return fn(*args, **kwargs)

    checked.accepted_keywords = tuple(accepted)
    return checked


def _public_module(module):
    # meshnn._audio → meshnn (what users import), meshnn.gr00t stays.
    return 'meshnn' if module.startswith('meshnn._') else module


def strict_class(cls):
    """cls with every public callable attribute wrapped by strict (in place)."""
    base = f'{_public_module(cls.__module__)}.{cls.__name__}'
    for name, attr in list(vars(cls).items()):
        if name.startswith('_') and name not in ('__init__', '__call__'):
            continue
        label = base if name == '__init__' else f'{base}.{name}'
        if isinstance(attr, classmethod):
            setattr(cls, name, classmethod(strict(attr.__func__, label)))
        elif isinstance(attr, staticmethod):
            setattr(cls, name, staticmethod(strict(attr.__func__, label)))
        elif inspect.isfunction(attr):
            setattr(cls, name, strict(attr, label))
    return cls
