"""Issue 35, the Python findings, one regression test each: unknown keywords refused (11), strided
inputs pushed as the docs write them and a model description from the model's own sizes (13),
one torch / numpy rule, the H3 VAE's config and torch.Generator, and what gr00t.Policy says when
given an observation dict (15)."""
import inspect
import os

import numpy as np
import pytest

import meshnn
from conftest import SRC, fixture, import_torch
from meshnn._safetensors import load_safetensors

H3 = fixture('minimax_h3_tiny')
HEAD = fixture('gr00t_head_n1_6.safetensors')


@pytest.fixture(scope='module')
def vae():
    return meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, threads=1)


@pytest.fixture(scope='module')
def policy_inputs():
    t, meta = load_safetensors(HEAD)
    return t, int(meta['embodiment'])


# ---- finding 11: unknown keywords ----------------------------------------------------------------

@pytest.mark.parametrize('load', [
    lambda kw: meshnn.BigVGAN.from_pretrained(fixture('bigvgan_v2_24k_small.safetensors'), **kw),
    lambda kw: meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, **kw),
    lambda kw: meshnn.LtxAudioDecoder.from_checkpoint(fixture('ltx23_small.safetensors'), **kw),
    lambda kw: meshnn.AudioModel.load(H3, **kw),
], ids=['bigvgan', 'h3', 'ltx', 'audio_model'])
def test_a_misspelt_loader_keyword_is_refused(load):
    with pytest.raises(TypeError) as e:
        load({'precison': 'bf16'})
    msg = str(e.value)
    assert "'precison'" in msg and "did you mean 'precision'" in msg, msg
    assert 'it accepts:' in msg and 'allow_unknown_config' in msg, msg


def test_the_spelt_keyword_still_works(vae, rng):
    bf16 = meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, precision='bf16', threads=1)
    # Encode: its convolutions take bf16 operands; the tiny decoder's thin layers compute in f32
    # under bf16, so its samples would not tell.
    x = (0.3 * rng.standard_normal((1, 1, 4000))).astype(np.float32)
    a, b = vae.encode(x).latent_dist.mean, bf16.encode(x).latent_dist.mean
    assert a.shape == b.shape and not np.array_equal(a, b)  # bf16 really ran


def public_callables():
    """(label, function) of every public call of the package: the exported classes and functions,
    the classes their calls return (streams, the posterior) and their common base."""
    from meshnn import _audio, _minimax_h3
    classes = [getattr(meshnn, n) for n in meshnn.__all__ if inspect.isclass(getattr(meshnn, n))]
    classes += [_audio.Stream, _audio._Closable, _minimax_h3.MiniMaxH3Posterior,
                meshnn.gr00t.VlAdapter, meshnn.gr00t.Policy]
    found = [(f'meshnn.{n}', getattr(meshnn, n)) for n in meshnn.__all__
             if inspect.isfunction(getattr(meshnn, n))]
    for cls in classes:
        for k, v in vars(cls).items():
            if k.startswith('_') and k not in ('__init__', '__call__'):
                continue
            fn = v.__func__ if isinstance(v, (classmethod, staticmethod)) else v
            if inspect.isfunction(fn):
                found.append((f'{cls.__name__}.{k}', fn))
    return found


def test_every_public_call_refuses_unknown_keywords():
    calls = public_callables()
    assert len(calls) > 60, len(calls)
    for label, fn in calls:
        assert getattr(fn, 'accepted_keywords', None) is not None, f'{label} is not checked'
        inner = inspect.unwrap(fn)
        kinds = [p.kind for p in inspect.signature(inner).parameters.values()]
        assert inspect.Parameter.VAR_KEYWORD not in kinds, f'{label} swallows **kwargs'
        # The check comes first: no argument is read, nothing is loaded.
        args = (None,) if 'self' in inspect.signature(inner).parameters else ()
        with pytest.raises(TypeError, match="unexpected keyword argument 'bogus_kw'"):
            fn(*args, bogus_kw=1)


def test_drop_in_to_refuses_what_it_cannot_do(vae):
    assert vae.to('cpu') is vae and vae.eval() is vae
    with pytest.raises(ValueError, match='CPU'):
        vae.to('cuda')
    torch = import_torch()
    assert vae.to(torch.device('cpu'), torch.float32) is vae
    with pytest.raises(ValueError, match='precision'):
        vae.to(dtype=torch.bfloat16)


def test_allow_unknown_config_is_never_ignored():
    """Accepted by name everywhere; honoured by the core or refused, never dropped."""
    core_has_it = 'allow_unknown_config' in (meshnn._meshnn.AudioModelOptions.__init__.__doc__ or '')
    if core_has_it:
        meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, allow_unknown_config=True)
    else:
        with pytest.raises(ValueError, match='allow_unknown_config'):
            meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, allow_unknown_config=True)
    with pytest.raises(ValueError, match='True or False'):
        meshnn.MiniMaxH3AudioVAE.from_pretrained(H3, allow_unknown_config='yes')


# ---- finding 13: strided pushes; the description -------------------------------------------------

def test_strided_pushes_equal_contiguous_ones(vae, bigvgan, rng):
    z = rng.standard_normal((2, 8, 12)).astype(np.float32)
    want = vae.decode(z).sample
    with vae.stream() as s:
        parts = [s.push(z[:, :, t:t + 4]) for t in range(0, 12, 4)] + [s.flush()]
    assert np.abs(np.concatenate(parts, axis=2) - want).max() <= 4e-6
    wave = rng.uniform(-0.5, 0.5, (2, 1, 300)).astype(np.float32)
    with vae.encode_stream() as e:
        got = [e.push(wave[:, :, a:a + 37]) for a in range(0, 300, 37)] + [e.flush()]
    mean = np.concatenate([m for m, _ in got], axis=2)
    np.testing.assert_allclose(mean, vae.encode(wave).latent_dist.mode(), rtol=0, atol=1e-5)
    # A transpose and a reversed view, one shot and pushed: copied once, same result.
    mel = rng.uniform(-5, 1, (1, 16, bigvgan.num_mels)).astype(np.float32).transpose(0, 2, 1)
    np.testing.assert_array_equal(bigvgan(mel, mesh='1x1'),
                                  bigvgan(np.ascontiguousarray(mel), mesh='1x1'))
    with bigvgan.stream() as s:
        y = np.concatenate([s.push(mel[:, :, ::-1]), s.flush()], axis=2)
    np.testing.assert_allclose(y, bigvgan(np.ascontiguousarray(mel[:, :, ::-1]), mesh='1x1'),
                               rtol=0, atol=1e-5)


def test_strided_torch_tensors_are_taken(vae, rng):
    torch = import_torch()
    z = torch.from_numpy(rng.standard_normal((2, 12, 8)).astype(np.float32)).transpose(1, 2)
    assert not z.is_contiguous()
    y = vae.decode(z).sample
    np.testing.assert_array_equal(y.numpy(), vae.decode(z.contiguous()).sample.numpy())


def test_the_model_description_comes_from_the_model(vae):
    m = meshnn.AudioModel.load(H3)
    assert f'{vae.latent_channels} latent channels' in m.description, m.description
    assert '32 latent channels' not in m.description  # the tiny fixture has 8
    assert m.input_spec.shape[1] == vae.latent_channels == 8


# ---- finding 15: one torch / numpy rule; config; generator; observation dicts --------------------

def test_torch_in_torch_out_everywhere(bigvgan, ltx23, vae, policy_inputs, rng):
    torch = import_torch()
    t, emb = policy_inputs
    mel = rng.uniform(-5, 1, (1, bigvgan.num_mels, 6)).astype(np.float32)
    lat = rng.standard_normal((1, 8, 4, 16)).astype(np.float32)
    z = rng.standard_normal((2, 8, 5)).astype(np.float32)
    policy = meshnn.gr00t.Policy(HEAD, 'n1.6', t['input.token_types'], threads=1)
    adapter = meshnn.gr00t.VlAdapter(HEAD, 'n1.6', t['input.token_types'], threads=1)
    calls = {
        'bigvgan': (bigvgan, mel),
        'bigvgan.mel_spectrogram': (bigvgan.mel_spectrogram,
                                    rng.uniform(-0.5, 0.5, 512).astype(np.float32)),
        'ltx': (ltx23, lat),
        'h3.decode': (lambda x, **k: vae.decode(x, **k).sample, z),
        'h3.normalize': (vae.normalize, z),
        'policy': (lambda x, **k: policy.get_action(x, state=t['input.state'], embodiment=emb,
                                                    **k), t['input.features']),
        'adapter': (lambda x, **k: adapter(x, state=t['input.state'], **k)['state_features'],
                    t['input.features']),
    }
    for name, (call, x) in calls.items():
        a = call(x)
        b = call(torch.from_numpy(x))
        assert isinstance(a, np.ndarray), name
        assert isinstance(b, torch.Tensor), name
        np.testing.assert_array_equal(a, b.numpy(), err_msg=name)
        assert isinstance(call(torch.from_numpy(x), as_torch=False), np.ndarray), name
        assert isinstance(call(x, as_torch=True), torch.Tensor), name


def test_streams_flush_as_their_last_push(bigvgan, vae, rng):
    torch = import_torch()
    mel = torch.from_numpy(rng.uniform(-5, 1, (1, bigvgan.num_mels, 6)).astype(np.float32))
    with bigvgan.stream() as s:
        assert isinstance(s.push(mel), torch.Tensor) and isinstance(s.flush(), torch.Tensor)
        assert isinstance(s.push(mel.numpy()), np.ndarray) and isinstance(s.flush(), np.ndarray)
    wave = torch.from_numpy(rng.uniform(-0.5, 0.5, (1, 1, 100)).astype(np.float32))
    with vae.encode_stream() as e:
        mean, logs = e.push(wave)
        assert isinstance(mean, torch.Tensor) and isinstance(logs, torch.Tensor)
        assert all(isinstance(a, torch.Tensor) for a in e.flush())


def test_h3_config_and_posterior_generator(vae, rng):
    import json
    with open(os.path.join(H3, 'config.json')) as f:
        want = json.load(f)
    assert vae.config == want and vae.config['_class_name'] == 'AutoencoderKLMiniMaxH3Audio'
    key = next(k for k in want if not k.startswith('_'))
    assert getattr(vae.config, key) == want[key]
    wave = rng.uniform(-0.5, 0.5, (1, 1, 200)).astype(np.float32)
    dist = vae.encode(wave).latent_dist
    a = dist.sample(generator=np.random.default_rng(3))
    np.testing.assert_array_equal(a, dist.sample(generator=np.random.default_rng(3)))
    with pytest.raises(ValueError, match='generator'):
        dist.sample(generator=3)
    torch = import_torch()
    # Any input kind takes a torch.Generator; its draw is diffusers' torch.randn(shape, generator).
    eps = torch.randn(dist.mean.shape, generator=torch.Generator().manual_seed(7)).numpy()
    got = dist.sample(generator=torch.Generator().manual_seed(7))
    np.testing.assert_allclose(got, dist.mean + dist.std * eps, rtol=0, atol=1e-6)
    tdist = vae.encode(torch.from_numpy(wave)).latent_dist
    tz = tdist.sample(generator=torch.Generator().manual_seed(7))
    assert isinstance(tz, torch.Tensor)
    np.testing.assert_array_equal(tz.numpy(), got)
    # forward: diffusers' AutoencoderKL.forward(sample, sample_posterior, return_dict, generator).
    y = vae(torch.from_numpy(wave), sample_posterior=True,
            generator=torch.Generator().manual_seed(7)).sample
    assert isinstance(y, torch.Tensor)
    np.testing.assert_array_equal(y.numpy(), vae.decode(got).sample)
    np.testing.assert_array_equal(vae(wave).sample, vae.decode(dist.mode()).sample)


def test_policy_given_an_observation_dict_says_what_it_takes(policy_inputs):
    t, emb = policy_inputs
    policy = meshnn.gr00t.Policy(HEAD, 'n1.6', t['input.token_types'], threads=1)
    obs = {'video.ego_view': np.zeros((1, 1, 8, 8, 3), np.uint8),
           'state.left_arm': np.zeros((1, 1, 7), np.float32),
           'annotation.human.action.task_description': ['pick up the cube']}
    with pytest.raises(ValueError) as e:
        policy.get_action(obs)
    msg = str(e.value)
    d = policy.feature_dim
    assert d == t['input.features'].shape[2]
    assert 'backbone' in msg and f'(1, {policy.seq_len}, {d})' in msg, msg
    assert 'features=' in msg and 'state=' in msg and 'embodiment=' in msg, msg
    assert 'video.ego_view' in msg, msg
    with pytest.raises(ValueError, match=r"features=obs\['backbone_features'\]"):
        policy.get_action({'backbone_features': t['input.features']})
    adapter = meshnn.gr00t.VlAdapter(HEAD, 'n1.6', t['input.token_types'], threads=1)
    with pytest.raises(ValueError, match='backbone features'):
        adapter(obs)


def test_compiled_module_names_no_model_outside_its_per_model_files():
    """python/src binds the generic AudioModel: no model is named in a code line (comments
    aside) except in a per-model binding file (one that adds itself with add_model_binding);
    every file ≤ 500 lines."""
    import re
    src = os.path.join(SRC, 'python', 'src')
    named = re.compile(r'ltx|bigvgan|minimax|h3|gr00t', re.IGNORECASE)
    offenders = []
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), encoding='utf-8') as f:
            lines = f.read().split('\n')
        assert len(lines) <= 501, f'{name}: {len(lines)} lines'
        per_model = any('add_model_binding(&' in line for line in lines)
        for i, line in enumerate(lines, 1):
            code = line.split('//', 1)[0]
            if named.search(code) and not per_model:
                offenders.append(f'{name}:{i}: {line.strip()}')
    assert not offenders, '\n'.join(offenders)
