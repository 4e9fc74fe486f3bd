"""meshnn.gr00t.Policy (adapter + action head + Euler steps, over gr00t::Policy::load): equal to
`meshnn gr00t-policy` bit for bit (given noise and seeded), on one device and head-parallel; safe
to call from several threads at once; closed objects refuse calls; bad options fail at load."""
import threading

import numpy as np
import pytest

import meshnn
from conftest import fixture, import_torch, run_cli
from meshnn._safetensors import load_safetensors


def inputs(version):
    t, meta = load_safetensors(fixture(f'gr00t_head_{version}.safetensors'))
    return t, int(meta['embodiment'])


def cli_actions(tmp_path, version, mesh, emb, t, *flags):
    for k in ('features', 'token_types', 'state', 'noise'):
        np.save(tmp_path / f'{k}.npy', t[f'input.{k}'])
    out = tmp_path / 'actions.npy'
    run_cli('gr00t-policy', '--checkpoint', fixture(f'gr00t_head_{version}.safetensors'),
            '--version', version.replace('_', '.'), '--features', tmp_path / 'features.npy',
            '--token-types', tmp_path / 'token_types.npy', '--state', tmp_path / 'state.npy',
            '--embodiment', emb, '--mesh', mesh, '--threads', 1, '--out', out, *flags)
    return np.load(out)


@pytest.mark.parametrize('version,mesh', [('n1_5', '1x1'), ('n1_6', '1x1'), ('n1_7', '1x1'),
                                          ('n1_6', '1x2'), ('n1_6', '2x1')])
def test_policy_equals_cli(tmp_path, version, mesh):
    t, emb = inputs(version)
    want = cli_actions(tmp_path, version, mesh, emb, t, '--noise', tmp_path / 'noise.npy')
    with meshnn.gr00t.Policy.from_checkpoint(fixture(f'gr00t_head_{version}.safetensors'),
                                             version.replace('_', '.'), t['input.token_types'],
                                             mesh=mesh, threads=1) as pol:
        got = pol.get_action(t['input.features'], state=t['input.state'], embodiment=emb,
                             noise=t['input.noise'])
        assert got.shape == want.shape == t['golden.actions'].shape
        np.testing.assert_array_equal(got, want)
        rel = np.linalg.norm(got - t['golden.actions']) / np.linalg.norm(t['golden.actions'])
        assert rel < 1e-5, rel
        # Seeded noise: meshnn's generator, as --seed.
        seeded = cli_actions(tmp_path, version, mesh, emb, t, '--seed', 3)
        np.testing.assert_array_equal(
            pol.get_action(t['input.features'], state=t['input.state'], embodiment=emb, seed=3),
            seeded)
        # Velocities per step, and fewer steps.
        a, vel = pol.get_action(t['input.features'], state=t['input.state'], embodiment=emb,
                                noise=t['input.noise'], steps=2, return_velocities=True)
        assert len(vel) == 2 and all(v.shape == got.shape for v in vel)
        np.testing.assert_allclose(a, t['input.noise'] + (vel[0] + vel[1]) / 2, rtol=0,
                                   atol=1e-5)
        assert pol.describe()['tp'] == (2 if mesh != '1x1' else 1)
    with pytest.raises(ValueError, match='closed'):
        pol.get_action(t['input.features'], state=t['input.state'], embodiment=emb)


def test_policy_concurrent_calls_equal_serial():
    t, emb = inputs('n1_6')
    for mesh in ('1x1', '1x2'):
        pol = meshnn.gr00t.Policy(fixture('gr00t_head_n1_6.safetensors'), 'n1.6',
                                  t['input.token_types'], mesh=mesh, threads=1)
        rng = np.random.default_rng(5)
        feats = [t['input.features'],
                 rng.standard_normal(t['input.features'].shape).astype(np.float32)]
        want = [pol.get_action(feats[i], state=t['input.state'], embodiment=i + 1, seed=i)
                for i in range(2)]
        assert not np.array_equal(want[0], want[1])
        got = [[] for _ in range(2)]
        errors = []

        def work(i):
            try:
                for _ in range(3):
                    got[i].append(pol.get_action(feats[i], state=t['input.state'],
                                                 embodiment=i + 1, seed=i))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors
        for i in range(2):
            for g in got[i]:
                np.testing.assert_array_equal(g, want[i])
        pol.close()


def test_policy_torch_and_errors():
    torch = import_torch()
    t, emb = inputs('n1_7')
    ckpt = fixture('gr00t_head_n1_7.safetensors')
    pol = meshnn.gr00t.Policy(ckpt, 'n1.7', t['input.token_types'])
    a = pol.get_action(torch.from_numpy(t['input.features']), state=t['input.state'],
                       embodiment=emb, noise=t['input.noise'], as_torch=True)
    assert isinstance(a, torch.Tensor) and tuple(a.shape) == t['golden.actions'].shape
    with pytest.raises(ValueError, match='divisible by 2'):
        meshnn.gr00t.Policy(ckpt, 'n1.7', t['input.token_types'], mesh='1x2')  # 3 VL-SA heads
    with pytest.raises(ValueError, match='no image tokens'):
        meshnn.gr00t.Policy(ckpt, 'n1.7', np.zeros(40, np.int64))
    with pytest.raises(ValueError, match='n1.7'):
        meshnn.gr00t.Policy(ckpt, 'n1.6', t['input.token_types'])  # metadata names n1.7
    with pytest.raises(ValueError, match='action_horizon'):
        meshnn.gr00t.Policy(ckpt, 'n1.7', t['input.token_types'], config={'action_horizon': 4.5})
    with pytest.raises(ValueError, match='integers'):
        meshnn.gr00t.Policy(ckpt, 'n1.7', t['input.token_types'].astype(np.float32))
    for bad in (1.0, True, -1):
        with pytest.raises(ValueError, match='embodiment'):
            pol.get_action(t['input.features'], state=t['input.state'], embodiment=bad)
    with pytest.raises(ValueError, match='needs a state'):
        pol.get_action(t['input.features'], embodiment=emb)
    with pytest.raises(ValueError, match='steps'):
        pol.get_action(t['input.features'], state=t['input.state'], embodiment=emb, steps=0)
    with pytest.raises(ValueError, match='expected float32'):
        pol.get_action(t['input.features'].astype(np.float64), state=t['input.state'],
                       embodiment=emb)
    # The policy still works after refused calls.
    np.testing.assert_array_equal(
        pol.get_action(t['input.features'], state=t['input.state'], embodiment=emb,
                       noise=t['input.noise']), a.numpy())


def test_adapter_on_a_mesh_is_loaded_once():
    # The adapter holds its packed head slices: repeated calls on 1x2 give the same tensors, and
    # concurrent calls equal serial ones.
    t, meta = load_safetensors(fixture('gr00t_adapter_n1_6.safetensors'))
    emb = int(meta['embodiment'])
    ad = meshnn.gr00t.VlAdapter(fixture('gr00t_adapter_n1_6.safetensors'), 'n1.6',
                                t['input.token_types'], mesh='1x2', threads=1)
    want = ad(t['input.features'], state=t['input.state'], embodiment=emb)
    got = [None, None]

    def work(i):
        got[i] = ad(t['input.features'], state=t['input.state'], embodiment=emb)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for g in got:
        assert sorted(g) == sorted(want)
        for k in want:
            np.testing.assert_array_equal(g[k], want[k], err_msg=k)


def _hf_folder(tmp_path, version, config_name, shards=2):
    """The head fixture as Isaac-GR00T releases it: config.json (the upstream field set) +
    model-0000k-of-0000n.safetensors + model.safetensors.index.json."""
    import json
    import shutil
    from meshnn._safetensors import save_safetensors
    t, _ = load_safetensors(fixture(f'gr00t_head_{version}.safetensors'))
    head = {k: v for k, v in t.items() if k.startswith('action_head.')}
    folder = tmp_path / 'hf'
    folder.mkdir()
    names = [f'model-{i + 1:05d}-of-{shards:05d}.safetensors' for i in range(shards)]
    parts = [{} for _ in names]
    weight_map = {}
    for i, k in enumerate(sorted(head)):
        parts[i % shards][k] = head[k]
        weight_map[k] = names[i % shards]
    for name, part in zip(names, parts):
        save_safetensors(folder / name, part)
    (folder / 'model.safetensors.index.json').write_text(
        json.dumps({'metadata': {'total_size': 0}, 'weight_map': weight_map}))
    shutil.copy(fixture(f'configs/{config_name}'), folder / 'config.json')
    return folder


def test_policy_loads_the_hugging_face_folder_and_unknown_config_fields_need_the_flag(tmp_path):
    import json
    t, emb = inputs('n1_7')
    folder = _hf_folder(tmp_path, 'n1_7', 'gr00t_n1_7_lerobot.json')
    kw = dict(state=t['input.state'], embodiment=emb, noise=t['input.noise'])
    with meshnn.gr00t.Policy(fixture('gr00t_head_n1_7.safetensors'), 'n1.7',
                             t['input.token_types'], threads=1) as single, \
            meshnn.gr00t.Policy(folder, 'n1.7', t['input.token_types'], threads=1) as sharded:
        want = single.get_action(t['input.features'], **kw)
        np.testing.assert_array_equal(sharded.get_action(t['input.features'], **kw), want)
    # The CLI takes the folder too, with the same actions.
    np.testing.assert_array_equal(
        cli_actions_from(tmp_path, folder, emb, t), want)
    # A field meshnn does not know: refused naming it and the flag, loaded with the flag.
    cfg = json.loads((folder / 'config.json').read_text())
    cfg['meshnn_future_field'] = 1
    (folder / 'config.json').write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match=r"meshnn_future_field.*allow_unknown_config=True"):
        meshnn.gr00t.Policy(folder, 'n1.7', t['input.token_types'])
    with pytest.raises(ValueError, match='allow_unknown_config must be True or False'):
        meshnn.gr00t.Policy(folder, 'n1.7', t['input.token_types'], allow_unknown_config=1)
    with meshnn.gr00t.Policy(folder, 'n1.7', t['input.token_types'], threads=1,
                             allow_unknown_config=True) as lenient:
        np.testing.assert_array_equal(lenient.get_action(t['input.features'], **kw), want)
    np.testing.assert_array_equal(
        cli_actions_from(tmp_path, folder, emb, t, '--allow-unknown-config'), want)
    with meshnn.gr00t.VlAdapter(folder, 'n1.7', t['input.token_types'],
                                allow_unknown_config=True) as ad:
        assert 'dit_encoder_hidden_states' in ad(t['input.features'], state=t['input.state'])


def cli_actions_from(tmp_path, checkpoint, emb, t, *flags):
    for k in ('features', 'token_types', 'state', 'noise'):
        np.save(tmp_path / f'{k}.npy', t[f'input.{k}'])
    out = tmp_path / 'actions_cli.npy'
    run_cli('gr00t-policy', '--checkpoint', checkpoint, '--version', 'n1.7',
            '--features', tmp_path / 'features.npy', '--token-types', tmp_path / 'token_types.npy',
            '--state', tmp_path / 'state.npy', '--noise', tmp_path / 'noise.npy',
            '--embodiment', emb, '--threads', 1, '--out', out, *flags)
    return np.load(out)
