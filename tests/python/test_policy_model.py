"""meshnn.PolicyModel (the generic policy class over the policy registry): its catalog, identify,
and each part equal to the typed GR00T classes (meshnn.gr00t.Policy / VlAdapter) bit for bit."""
import numpy as np
import pytest

import meshnn
from conftest import fixture
from meshnn._safetensors import load_safetensors

HEAD = fixture('gr00t_head_n1_6.safetensors')


@pytest.fixture(scope='module')
def head():
    t, meta = load_safetensors(HEAD)
    return t, int(meta['embodiment'])


def test_catalog_and_identify():
    names = meshnn.PolicyModel.registered()
    catalog = meshnn.PolicyModel.catalog()
    assert [e['name'] for e in catalog] == names
    for e in catalog:
        assert e['parts'][0]['name'] == 'policy' and e['variants'] and e['path']
    assert meshnn.PolicyModel.identify(HEAD) in names
    assert meshnn.PolicyModel.files(HEAD) == [HEAD]
    with pytest.raises(ValueError, match='not a policy model'):
        meshnn.PolicyModel.identify(fixture('ltx23_small.safetensors'))


def test_parts_equal_the_typed_classes(head):
    t, emb = head
    types = t['input.token_types']
    obs = {'features': t['input.features'], 'state': t['input.state'], 'noise': t['input.noise']}
    with meshnn.PolicyModel.load(HEAD, variant='n1.6', inputs={'token_types': types},
                                 threads=1) as m, \
            meshnn.gr00t.Policy.from_checkpoint(HEAD, 'n1.6', types, threads=1) as typed:
        got = m.run(obs, embodiment=emb)['actions']
        want = typed.get_action(t['input.features'], state=t['input.state'], embodiment=emb,
                                noise=t['input.noise'])
        assert np.array_equal(got, want)
        seeded = m.run({'features': t['input.features'], 'state': t['input.state']},
                       embodiment=emb, seed=5, steps=2)['actions']
        assert np.array_equal(seeded, typed.get_action(t['input.features'], state=t['input.state'],
                                                       embodiment=emb, seed=5, steps=2))
        assert m.default_steps == typed.num_steps and m.part == 'policy'
    a = meshnn.PolicyModel.load(HEAD, variant='n1.6', inputs={'token_types': types},
                                part='adapter', settings={'taps': True}, threads=1)
    v = meshnn.gr00t.VlAdapter(HEAD, 'n1.6', types, taps=True, threads=1)
    got = a.run({'features': t['input.features'], 'state': t['input.state']}, embodiment=emb)
    want = v(t['input.features'], state=t['input.state'], embodiment=emb)
    assert sorted(got) == sorted(want)
    for k in want:
        assert np.array_equal(got[k], want[k]), k


def test_refusals(head):
    t, _ = head
    with pytest.raises(ValueError, match='temperature'):
        meshnn.PolicyModel.load(HEAD, variant='n1.6', inputs={'token_types': t['input.token_types']},
                                settings={'temperature': '1'})
    with pytest.raises(ValueError, match='token_types'):
        meshnn.PolicyModel.load(HEAD, variant='n1.6')
    with pytest.raises(TypeError, match="'varaint'"):
        meshnn.PolicyModel.load(HEAD, varaint='n1.6')
