"""The Python part of issue 35's hostile re-run: every call of the probe's classes (BigVGAN,
LtxAudioDecoder, MiniMaxH3AudioVAE, AudioModel, the streams, gr00t.VlAdapter / Policy) fed as a
hostile user would: unknown keywords, wrong dtypes, ranks and sizes, strided views, NaN / inf,
dicts and lists, torch tensors of the wrong kind; then closed objects. Each call must answer
with the documented exception (TypeError for a keyword, ValueError for an input) or, for a
strided view, the result of the contiguous input; never a crash, a hang or a silent success. A
watchdog ends the process with a traceback if a test hangs (bounded in time)."""
import faulthandler
import time

import numpy as np
import pytest

import meshnn
from conftest import fixture
from meshnn._safetensors import load_safetensors

H3 = fixture('minimax_h3_tiny')
HEAD = fixture('gr00t_head_n1_6.safetensors')
LIMIT_S = 240  # per test, generous for a loaded 2-core machine; a hang ends the run


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(LIMIT_S, exit=True)
    t0 = time.monotonic()
    yield
    faulthandler.cancel_dump_traceback_later()
    assert time.monotonic() - t0 < LIMIT_S


@pytest.fixture(scope='module')
def models():
    t, meta = load_safetensors(HEAD)
    types = t['input.token_types']
    return {
        'bigvgan': meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'),
                                                  threads=1),
        'ltx': meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx23_small.safetensors'),
                                                      threads=1),
        'h3': meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, threads=1),
        'any': meshnn.AudioModel.load(H3, threads=1),
        'policy': meshnn.gr00t.Policy(HEAD, 'n1.6', types, threads=1),
        'adapter': meshnn.gr00t.VlAdapter(HEAD, 'n1.6', types, threads=1),
        'gr00t': t,
        'embodiment': int(meta['embodiment']),
    }


def calls(m, rng):
    """name → (call(x, **kw) → an array, a good input). Streams are opened per call."""
    bv, ltx, h3, any_, t = m['bigvgan'], m['ltx'], m['h3'], m['any'], m['gr00t']
    st, emb = t['input.state'], m['embodiment']

    def pushed(open_stream, pick=lambda r: r):
        def call(x, **kw):
            with open_stream() as s:
                parts = [pick(s.push(x, **kw)), pick(s.flush())]
            if isinstance(parts[0], np.ndarray):
                return np.concatenate(parts, axis=2)
            import torch
            return torch.cat(parts, dim=2)
        return call

    u = lambda *shape, lo=-1.0, hi=1.0: rng.uniform(lo, hi, shape).astype(np.float32)  # noqa
    return {
        'BigVGAN()': (bv, u(1, bv.num_mels, 5, lo=-5)),
        'BigVGAN.mel_spectrogram': (bv.mel_spectrogram, u(2, 700, lo=-0.5, hi=0.5)),
        'BigVGAN.stream().push': (pushed(bv.stream), u(1, bv.num_mels, 5, lo=-5)),
        'LtxAudioDecoder()': (ltx, u(1, 8, 3, 16)),
        'LtxAudioDecoder.stream().push': (pushed(ltx.stream), u(1, 8, 3, 16)),
        'LtxAudioDecoder.stream_vocoder().push': (pushed(ltx.stream_vocoder),
                                                  u(1, 2, 5, 64, lo=-5)),
        'MiniMaxH3AudioVAE.decode': (lambda x, **k: h3.decode(x, **k).sample, u(2, 8, 6)),
        'MiniMaxH3AudioVAE.encode': (lambda x, **k: h3.encode(x, **k).latent_dist.mode(),
                                     u(2, 1, 200, lo=-0.5, hi=0.5)),
        'MiniMaxH3AudioVAE()': (lambda x, **k: h3(x, **k).sample, u(1, 1, 120, lo=-0.5, hi=0.5)),
        'MiniMaxH3AudioVAE.normalize': (h3.normalize, u(2, 8, 6)),
        'MiniMaxH3AudioVAE.denormalize': (h3.denormalize, u(2, 8, 6)),
        'MiniMaxH3AudioVAE.stream().push': (pushed(h3.stream), u(2, 8, 6)),
        'MiniMaxH3AudioVAE.encode_stream().push': (pushed(h3.encode_stream, lambda r: r[0]),
                                                   u(2, 1, 200, lo=-0.5, hi=0.5)),
        'AudioModel()': (any_, u(1, 8, 6)),
        'AudioModel.encode': (any_.encode, u(1, 1, 200, lo=-0.5, hi=0.5)),
        'AudioModel.stream().push': (pushed(any_.stream), u(1, 8, 6)),
        'gr00t.Policy.get_action': (lambda x, **k: m['policy'].get_action(
            x, state=st, embodiment=emb, seed=1, **k), t['input.features']),
        'gr00t.VlAdapter()': (lambda x, **k: m['adapter'](x, state=st, **k)['state_features'],
                              t['input.features']),
    }


def bad_inputs(name, x):
    """(what, input) a hostile user passes instead of x; each must raise ValueError. Shapes that
    are another valid layout of a call (GR00T's (S, D) rows and (1, 1, S_pad, D) slots, a 1-D wav
    for the mel front end) are not offered to it."""
    nan = x.copy()
    nan.flat[nan.size // 2] = np.nan
    inf = x.copy()
    inf.flat[0] = -np.inf
    fewer = np.ascontiguousarray(np.take(x, range(x.shape[1] - 1), axis=1))
    bad = [('float64', x.astype(np.float64)), ('int32', x.astype(np.int32)),
           ('float16', x.astype(np.float16)), ('bool', x > 0), ('scalar', np.float32(1.0)),
           ('NaN', nan), ('inf', inf), ('list', x.tolist()), ('dict', {'x': x}),
           ('string', 'features.npy'), ('None', None), ('object', np.array([x, 1], dtype=object))]
    if 'gr00t' not in name and 'mel_spectrogram' not in name:
        bad += [('rank+1', x[None]), ('rank-1', x[0])]
    if 'mel_spectrogram' not in name:
        bad += [('axis 1 one short', fewer)]
    return bad


def test_unknown_keywords_on_every_call(models, rng):
    for name, (call, x) in calls(models, rng).items():
        with pytest.raises(TypeError, match="unexpected keyword argument 'as_tensor'.*accepts"):
            call(x, as_tensor=True)


def test_bad_inputs_raise_value_error_on_every_call(models, rng):
    for name, (call, x) in calls(models, rng).items():
        for what, bad in bad_inputs(name, x):
            try:
                call(bad)
            except ValueError:
                continue
            except Exception as e:  # noqa: BLE001 - reported
                pytest.fail(f'{name} given {what}: {type(e).__name__} instead of ValueError: {e}')
            pytest.fail(f'{name} given {what}: no error')


def test_finite_but_absurd_inputs_never_crash(models, rng):
    """3e38 everywhere: a clean ValueError / RuntimeError naming the cause, or a finite answer;
    never a crash or a non-finite output passed on as a result."""
    for name, (call, x) in calls(models, rng).items():
        try:
            y = call(np.full_like(x, 3e38))
        except (ValueError, RuntimeError) as e:
            assert str(e), name
            continue
        assert np.isfinite(np.asarray(y)).all(), name


def test_strided_views_equal_contiguous_inputs(models, rng):
    for name, (call, x) in calls(models, rng).items():
        wide = np.repeat(x, 2, axis=-1)  # every other element of the last axis is x again
        view = wide[..., ::2]
        assert not view.flags['C_CONTIGUOUS'] and np.array_equal(view, x)
        want = call(x)
        np.testing.assert_allclose(np.asarray(call(view)), np.asarray(want), rtol=0, atol=1e-6,
                                   err_msg=name)


def test_torch_inputs_of_the_wrong_kind(models, rng):
    torch = pytest.importorskip('torch')
    for name, (call, x) in calls(models, rng).items():
        t = torch.from_numpy(x)
        bad = [('float64', t.double()), ('bfloat16', t.bfloat16()), ('int64', t.long())]
        if 'gr00t' not in name:
            bad.append(('rank+1', t[None]))
        for what, b in bad:
            with pytest.raises(ValueError):
                call(b)
        y = call(t.transpose(-1, -2).contiguous().transpose(-1, -2))  # strided: taken
        assert isinstance(y, torch.Tensor), name
        np.testing.assert_allclose(y.numpy(), np.asarray(call(x)), rtol=0, atol=1e-6,
                                   err_msg=name)


def test_closed_objects_and_streams_refuse(models, rng):
    h3 = meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, threads=1)
    z = rng.standard_normal((1, 8, 6)).astype(np.float32)
    s, e = h3.stream(), h3.encode_stream()
    want = h3.decode(z).sample
    h3.close()
    # The streams hold the weights: closing the model does not end them.
    np.testing.assert_allclose(np.concatenate([s.push(z), s.flush()], axis=2), want, rtol=0,
                               atol=4e-6)
    for call in (lambda: h3.decode(z), lambda: h3.encode(z[:, :1]), h3.stream,
                 h3.encode_stream, lambda: h3.sampling_rate):
        with pytest.raises(ValueError, match='closed'):
            call()
    s.close()
    e.close()
    for obj, arg in ((s, z), (e, z[:, :1])):
        for call in (lambda: obj.push(arg), obj.flush, obj.reset, lambda: obj.sample_rate):
            with pytest.raises(ValueError, match='closed'):
                call()
    with pytest.raises(ValueError, match='closed'):
        s.__enter__()
    for key in ('bigvgan', 'ltx', 'any'):
        st = models[key].stream()
        st.close()
        with pytest.raises(ValueError, match='closed'):
            st.flush()
        assert 'closed' in repr(st)


def test_a_stream_survives_a_refused_push(models, rng):
    """A refused push (wrong channels, NaN) leaves the stream usable; a push with another batch
    before flush is refused."""
    h3 = models['h3']
    z = rng.standard_normal((2, 8, 6)).astype(np.float32)
    with h3.stream() as s:
        with pytest.raises(ValueError):
            s.push(np.zeros((2, 7, 3), np.float32))
        bad = z.copy()
        bad[0, 0, 0] = np.nan
        with pytest.raises(ValueError):
            s.push(bad)
        got = np.concatenate([s.push(z[:, :, :3]), s.push(z[:, :, 3:])], axis=2)
        with pytest.raises(ValueError):
            s.push(z[:1, :, :2])
        got = np.concatenate([got, s.flush()], axis=2)
    np.testing.assert_allclose(got, h3.decode(z).sample, rtol=0, atol=4e-6)
