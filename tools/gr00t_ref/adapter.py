"""PyTorch reference of the GR00T N1.5 / N1.6 / N1.7 VL adapter and its checkpoints: the version
configs (released and reduced dims), the adapter's key list, seeded random checkpoints, and the
adapter forward (vlln, VL self-attention, key sets, the cross blocks' K / V, state encoder), written
from the adapter's specification (meshnn docs/gr00t.md summarises it). Used by the golden
generators (tools/goldens/gen_gr00t*.py), the checkpoint writer (tools/make_gr00t_checkpoint.py)
and the benchmarks (bench/torch/torch_gr00t*_bench.py).
"""
import math

import torch
import torch.nn.functional as F

from . import action_head as ah

VERSIONS = ('n1.5', 'n1.6', 'n1.7')


def default_config(version):
    """Released checkpoints' values (reference §1)."""
    c = {
        'gr00t_version': version, 'backbone_embedding_dim': 2048,
        'vl_self_attention_cfg': {'num_layers': 4, 'num_attention_heads': 32, 'attention_head_dim': 64,
                                  'ff_inner_dim': 8192},
        'diffusion_model_cfg': {'num_layers': 16, 'num_attention_heads': 32, 'attention_head_dim': 48,
                                'cross_attention_dim': 2048, 'interleave_self_attention': True,
                                'attend_text_every_n_blocks': 2},
        'max_state_dim': 64, 'hidden_size': 1024, 'input_embedding_dim': 1536, 'max_num_embodiments': 32,
        'row_block': 32,
    }
    if version == 'n1.6':
        c['vl_self_attention_cfg']['num_layers'] = 0
        c['use_vl_self_attention'] = False
        c['diffusion_model_cfg']['num_layers'] = 32
        c['max_state_dim'] = 128
    elif version == 'n1.7':
        c['diffusion_model_cfg']['num_layers'] = 32
        c['max_state_dim'] = 132
    else:
        c['use_vl_self_attention'] = True
    if version == 'n1.7':
        c['use_vl_self_attention'] = True
    c['state_dim_pad'] = -(-c['max_state_dim'] // c['row_block']) * c['row_block']
    return c


def small_config(version):
    """Reduced dims for committed fixtures: same structure (4 VL-SA blocks, both key sets, per
    embodiment weights), every width shrunk."""
    c = default_config(version)
    c['backbone_embedding_dim'] = 48
    c['vl_self_attention_cfg'].update(num_attention_heads=3, attention_head_dim=16, ff_inner_dim=192)
    c['diffusion_model_cfg'].update(num_layers=4 if version == 'n1.5' else 8, num_attention_heads=2,
                                    attention_head_dim=12, cross_attention_dim=48)
    c['max_state_dim'] = {'n1.5': 20, 'n1.6': 36, 'n1.7': 40}[version]
    c['hidden_size'] = 32
    c['input_embedding_dim'] = 24
    c['max_num_embodiments'] = 4
    c['state_dim_pad'] = -(-c['max_state_dim'] // c['row_block']) * c['row_block']
    return c


def n_vlsa(c):
    return c['vl_self_attention_cfg']['num_layers'] if c.get('use_vl_self_attention', True) else 0


def cross_blocks(c):
    d = c['diffusion_model_cfg']
    return [i for i in range(d['num_layers']) if not (d['interleave_self_attention'] and i % 2 == 1)]


def key_set(c, block):
    if c['gr00t_version'] == 'n1.5':
        return 'all'
    n = c['diffusion_model_cfg']['attend_text_every_n_blocks']
    return 'text' if block % (2 * n) == 0 else 'image'


def weight_shapes(c, prefix='action_head.'):
    D = c['backbone_embedding_dim']
    F_ = c['vl_self_attention_cfg']['ff_inner_dim']
    w = [(prefix + 'vlln.weight', (D,)), (prefix + 'vlln.bias', (D,))]
    for i in range(n_vlsa(c)):
        p = f'{prefix}vl_self_attention.transformer_blocks.{i}.'
        w += [(p + 'norm1.weight', (D,)), (p + 'norm1.bias', (D,))]
        for n in ('attn1.to_q', 'attn1.to_k', 'attn1.to_v', 'attn1.to_out.0'):
            w += [(p + n + '.weight', (D, D)), (p + n + '.bias', (D,))]
        w += [(p + 'norm3.weight', (D,)), (p + 'norm3.bias', (D,)),
              (p + 'ff.net.0.proj.weight', (F_, D)), (p + 'ff.net.0.proj.bias', (F_,)),
              (p + 'ff.net.2.weight', (D, F_)), (p + 'ff.net.2.bias', (D,))]
    d = c['diffusion_model_cfg']
    inner = d['num_attention_heads'] * d['attention_head_dim']
    for i in cross_blocks(c):
        p = f'{prefix}model.transformer_blocks.{i}.attn1.'
        for n in ('to_k', 'to_v'):
            w += [(p + n + '.weight', (inner, d['cross_attention_dim'])), (p + n + '.bias', (inner,))]
    E, H = c['max_num_embodiments'], c['hidden_size']
    w += [(prefix + 'state_encoder.layer1.W', (E, c['max_state_dim'], H)),
          (prefix + 'state_encoder.layer1.b', (E, H)),
          (prefix + 'state_encoder.layer2.W', (E, H, c['input_embedding_dim'])),
          (prefix + 'state_encoder.layer2.b', (E, c['input_embedding_dim']))]
    return w


def full_weight_shapes(c, prefix='action_head.'):
    """Adapter tensors first (so an adapter-only checkpoint of the same seed is a prefix of the
    random stream), then the rest of the action head."""
    w = weight_shapes(c, prefix)
    seen = {k for k, _ in w}
    return w + [(k, s) for k, s in ah.head_weight_shapes(c, prefix) if k not in seen]


def random_checkpoint(c, seed, prefix='action_head.', head=False):
    """uniform ±1/sqrt(fan_in) weights, LayerNorm γ = 1 ± 0.1, β = ±0.1, biases ±0.02."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for key, shape in (full_weight_shapes if head else weight_shapes)(c, prefix):
        u = torch.rand(shape, generator=g, dtype=torch.float32) * 2 - 1
        # norm1.linear is the AdaLN projection (a Linear), not a LayerNorm's γ / β
        is_norm = ('norm' in key or 'vlln' in key) and 'norm1.linear' not in key
        is_bias = key.endswith('.bias') or key.endswith('.b')
        if is_norm:
            t = (0.0 if is_bias else 1.0) + 0.1 * u
        elif len(shape) >= 2 and not is_bias:
            t = u / math.sqrt(shape[1])
        else:
            t = 0.02 * u
        out[key] = t.contiguous()
    return out


# ------------------------------------------------------------------------------------------------
# PyTorch reference of the adapter (reference §3)
# ------------------------------------------------------------------------------------------------

def vlsa_block(h, W, p, heads, head_dim, eps=1e-5):
    """GR00T BasicTransformerBlock without norm_type: norm1 → attn1 → +h → norm3 → ff → +h."""
    S, D = h.shape
    n = F.layer_norm(h, (D,), W[p + 'norm1.weight'], W[p + 'norm1.bias'], eps)
    q = F.linear(n, W[p + 'attn1.to_q.weight'], W[p + 'attn1.to_q.bias'])
    k = F.linear(n, W[p + 'attn1.to_k.weight'], W[p + 'attn1.to_k.bias'])
    v = F.linear(n, W[p + 'attn1.to_v.weight'], W[p + 'attn1.to_v.bias'])
    q, k, v = (t.reshape(S, heads, head_dim).transpose(0, 1) for t in (q, k, v))
    a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(head_dim), dim=-1) @ v  # no mask upstream
    a = a.transpose(0, 1).reshape(S, D)
    h = h + F.linear(a, W[p + 'attn1.to_out.0.weight'], W[p + 'attn1.to_out.0.bias'])
    n3 = F.layer_norm(h, (D,), W[p + 'norm3.weight'], W[p + 'norm3.bias'], eps)
    f = F.linear(F.gelu(F.linear(n3, W[p + 'ff.net.0.proj.weight'], W[p + 'ff.net.0.proj.bias']),
                        approximate='tanh'), W[p + 'ff.net.2.weight'], W[p + 'ff.net.2.bias'])
    return h + f


def adapter_forward(c, W, features, token_types, state, embodiment, prefix='action_head.'):
    """features (S, D), token_types (S) 0 text / 1 image / 2 padding, state (d) → dict of taps
    (token order) and per cross block K, V (1, Nh, L_pad, Dh) with zero-row padding to L_pad."""
    out = {}
    S, D = features.shape
    rb = c['row_block']
    vl = F.layer_norm(features, (D,), W[prefix + 'vlln.weight'], W[prefix + 'vlln.bias'], 1e-5)
    out['vlln_out'] = vl
    vc = c['vl_self_attention_cfg']
    for i in range(n_vlsa(c)):
        vl = vlsa_block(vl, W, f'{prefix}vl_self_attention.transformer_blocks.{i}.',
                        vc['num_attention_heads'], vc['attention_head_dim'])
        out[f'vlsa_block{i}_out'] = vl
    if n_vlsa(c):
        out['vl_self_attention_out'] = vl
    out['dit_encoder_hidden_states'] = vl
    s_pad = -(-S // rb) * rb
    sets = {}
    if c['gr00t_version'] == 'n1.5':
        rows = torch.zeros(s_pad, D, dtype=vl.dtype)
        rows[:S] = vl  # "all": every slot, the pad slots zero
        sets['all'] = rows
    else:
        for name, want in (('text', 0), ('image', 1)):
            sel = vl[token_types == want]
            l_pad = max(1, -(-sel.shape[0] // rb)) * rb
            rows = torch.zeros(l_pad, D, dtype=vl.dtype)
            rows[:sel.shape[0]] = sel
            sets[name] = rows
    for name, rows in sets.items():
        out[f'vl_set.{name}'] = rows
    d = c['diffusion_model_cfg']
    H, Dh = d['num_attention_heads'], d['attention_head_dim']
    for i in cross_blocks(c):
        rows = sets[key_set(c, i)]
        p = f'{prefix}model.transformer_blocks.{i}.attn1.'
        for n, key in (('K', 'to_k'), ('V', 'to_v')):
            t = F.linear(rows, W[p + key + '.weight'], W[p + key + '.bias'])
            out[f'{n}.{i}'] = t.reshape(rows.shape[0], H, Dh).transpose(0, 1).unsqueeze(0).contiguous()
    if state is not None:
        s = torch.zeros(c['max_state_dim'], dtype=features.dtype)
        s[:state.shape[0]] = state
        e = embodiment
        h1 = torch.relu(s @ W[prefix + 'state_encoder.layer1.W'][e] + W[prefix + 'state_encoder.layer1.b'][e])
        out['state_features'] = (h1 @ W[prefix + 'state_encoder.layer2.W'][e]
                                 + W[prefix + 'state_encoder.layer2.b'][e]).reshape(1, 1, -1)
    return out
