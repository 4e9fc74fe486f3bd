"""The Python side of the one error table (meshnn/core/error_codes.h): every meshnn error type
raised in C++ reaches Python as the exception its row names, with meshnn's message; the C++ side
(HTTP, WebSocket, CLI) is tests/core/error_codes_test.cc."""
import builtins

import pytest

from meshnn import _meshnn


def test_every_error_type_becomes_the_exception_of_its_row():
    rows = _meshnn._error_table()
    types = [r[0] for r in rows]
    assert len(types) == len(set(types)) >= 10
    assert types[-1] == 'Error'
    for type_name, http_status, code, exit_code, python_exception in rows:
        expected = getattr(builtins, python_exception)
        assert issubclass(expected, Exception)
        with pytest.raises(Exception) as info:
            _meshnn._raise_error(type_name, 'the cause of ' + type_name)
        # Exactly the row's class (not merely a subclass of it or of RuntimeError).
        assert type(info.value) is expected, (type_name, type(info.value), expected)
        assert 'the cause of ' + type_name in str(info.value)
        assert 400 <= http_status <= 599 and code and exit_code == 1


def test_the_documented_mapping():
    rows = {r[0]: r[4] for r in _meshnn._error_table()}
    assert rows['InvalidArgument'] == rows['ShapeError'] == 'ValueError'
    assert rows['WeightError'] == 'KeyError'
    assert rows['FormatError'] == rows['BackendError'] == rows['Error'] == 'RuntimeError'


def test_an_unknown_type_is_refused_as_a_value_error():
    with pytest.raises(ValueError, match='no error type'):
        _meshnn._raise_error('NoSuchError', 'x')
