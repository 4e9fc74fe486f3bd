#!/usr/bin/python3
"""PyTorch reference of the GR00T N1.5 / N1.6 / N1.7 action head after the VL adapter: the
flow-matching Euler loop, the per-embodiment action encoder and decoder, the DiT (N1.5 `DiT`,
N1.6 / N1.7 `AlternateVLDiT`) with AdaLN from the timestep embedding. Written from the action-head
specification (meshnn docs/gr00t.md summarises it); used by the golden generator
(tools/goldens/gen_gr00t_action_head.py), the checkpoint writer (tools/make_gr00t_checkpoint.py)
and the benchmark (bench/torch/torch_gr00t_policy_bench.py).

It computes the cross-attention K/V from `vl` in every cross block at every step with boolean key
masks, as the upstream heads do (no caching), unless `cache_kv=True`.

Config: the adapter config of gr00t_ref/adapter.py plus the head fields `action_dim`,
`action_horizon`, `num_target_vision_tokens` (future tokens, N1.5 only), `max_seq_len`,
`num_inference_timesteps`, `num_timestep_buckets`.
"""
import math

import torch
import torch.nn.functional as F

HEAD_DEFAULTS = {
    'n1.5': dict(action_dim=32, action_horizon=16, num_target_vision_tokens=32),
    'n1.6': dict(action_dim=128, action_horizon=50, num_target_vision_tokens=0),
    'n1.7': dict(action_dim=132, action_horizon=40, num_target_vision_tokens=0),
}
HEAD_SMALL = {
    'n1.5': dict(action_dim=6, action_horizon=5, num_target_vision_tokens=3),
    'n1.6': dict(action_dim=7, action_horizon=6, num_target_vision_tokens=0),
    'n1.7': dict(action_dim=8, action_horizon=4, num_target_vision_tokens=0),
}


def add_head_config(c, small=False):
    """Adds the action-head fields to an adapter config (in place) and returns it."""
    v = c['gr00t_version']
    c.update((HEAD_SMALL if small else HEAD_DEFAULTS)[v])
    c['max_seq_len'] = 16 if small else 1024
    c['num_inference_timesteps'] = 4
    c['num_timestep_buckets'] = 1000
    return c


def dit_dims(c):
    d = c['diffusion_model_cfg']
    return d['num_layers'], d['num_attention_heads'], d['attention_head_dim']


def head_weight_shapes(c, prefix='action_head.'):
    """Every tensor of the head besides the adapter's (vlln, VL-SA, state encoder)."""
    L, H, Dh = dit_dims(c)
    D = H * Dh
    Dvl = c['diffusion_model_cfg']['cross_attention_dim']
    O = c['hidden_size']
    A, E, Din = c['action_dim'], c['max_num_embodiments'], c['input_embedding_dim']
    assert Din == D, 'input_embedding_dim must equal the DiT inner dim'
    m = prefix + 'model.'
    w = [(m + 'timestep_encoder.timestep_embedder.linear_1.weight', (D, 256)),
         (m + 'timestep_encoder.timestep_embedder.linear_1.bias', (D,)),
         (m + 'timestep_encoder.timestep_embedder.linear_2.weight', (D, D)),
         (m + 'timestep_encoder.timestep_embedder.linear_2.bias', (D,))]
    for i in range(L):
        p = f'{m}transformer_blocks.{i}.'
        kv_in = Dvl if i % 2 == 0 else D
        w += [(p + 'norm1.linear.weight', (2 * D, D)), (p + 'norm1.linear.bias', (2 * D,)),
              (p + 'attn1.to_q.weight', (D, D)), (p + 'attn1.to_q.bias', (D,)),
              (p + 'attn1.to_k.weight', (D, kv_in)), (p + 'attn1.to_k.bias', (D,)),
              (p + 'attn1.to_v.weight', (D, kv_in)), (p + 'attn1.to_v.bias', (D,)),
              (p + 'attn1.to_out.0.weight', (D, D)), (p + 'attn1.to_out.0.bias', (D,)),
              (p + 'ff.net.0.proj.weight', (4 * D, D)), (p + 'ff.net.0.proj.bias', (4 * D,)),
              (p + 'ff.net.2.weight', (D, 4 * D)), (p + 'ff.net.2.bias', (D,))]
    w += [(m + 'proj_out_1.weight', (2 * D, D)), (m + 'proj_out_1.bias', (2 * D,)),
          (m + 'proj_out_2.weight', (O, D)), (m + 'proj_out_2.bias', (O,))]
    a = prefix + 'action_encoder.'
    w += [(a + 'W1.W', (E, A, D)), (a + 'W1.b', (E, D)), (a + 'W2.W', (E, 2 * D, D)), (a + 'W2.b', (E, D)),
          (a + 'W3.W', (E, D, D)), (a + 'W3.b', (E, D))]
    d = prefix + 'action_decoder.'
    w += [(d + 'layer1.W', (E, O, O)), (d + 'layer1.b', (E, O)), (d + 'layer2.W', (E, O, A)),
          (d + 'layer2.b', (E, A))]
    w += [(prefix + 'position_embedding.weight', (c['max_seq_len'], D))]
    if c.get('num_target_vision_tokens', 0):
        w += [(prefix + 'future_tokens.weight', (c['num_target_vision_tokens'], D))]
    return w


# ------------------------------------------------------------------------------------------------
# sinusoids (computed in the dtype of the run: float64 for goldens, float32 as upstream)
# ------------------------------------------------------------------------------------------------

def timestep_sinusoid(t, dtype):
    """diffusers Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=1): [cos | sin]."""
    half = 128
    f = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=dtype) / (half - 1))
    arg = float(t) * f
    return torch.cat([torch.cos(arg), torch.sin(arg)])


def action_sinusoid(t, dim, dtype):
    """SinusoidalPositionalEncoding(dim): [sin | cos], divisor dim/2."""
    half = dim // 2
    g = torch.exp(-torch.arange(half, dtype=dtype) * (math.log(10000.0) / half))
    arg = float(t) * g
    return torch.cat([torch.sin(arg), torch.cos(arg)])


def temb_of(c, W, t, prefix='action_head.'):
    m = prefix + 'model.timestep_encoder.timestep_embedder.'
    dtype = W[m + 'linear_1.weight'].dtype
    e = timestep_sinusoid(t, torch.float64 if dtype == torch.float64 else torch.float32).to(dtype)
    h = F.silu(F.linear(e, W[m + 'linear_1.weight'], W[m + 'linear_1.bias']))
    return F.linear(h, W[m + 'linear_2.weight'], W[m + 'linear_2.bias'])


def action_encode(c, W, x, t, e, prefix='action_head.'):
    """x (T, A), integer bucket t, embodiment e → (T, D)."""
    a = prefix + 'action_encoder.'
    a1 = x @ W[a + 'W1.W'][e] + W[a + 'W1.b'][e]
    D = a1.shape[-1]
    tau = action_sinusoid(t, D, torch.float64 if a1.dtype == torch.float64 else torch.float32).to(a1.dtype)
    tau = tau.expand(a1.shape[0], D)
    a2 = F.silu(torch.cat([a1, tau], dim=-1) @ W[a + 'W2.W'][e] + W[a + 'W2.b'][e])
    return a2 @ W[a + 'W3.W'][e] + W[a + 'W3.b'][e]


def attention(q, k, v, heads, mask=None):
    """q (N, D), k / v (L, D), key mask (L) bool (True = attend) → (N, D)."""
    N, D = q.shape
    Dh = D // heads
    q, k, v = (t.reshape(t.shape[0], heads, Dh).transpose(0, 1) for t in (q, k, v))
    s = q @ k.transpose(1, 2) / math.sqrt(Dh)
    if mask is not None:
        s = s.masked_fill(~mask.view(1, 1, -1), float('-inf'))
    return (torch.softmax(s, dim=-1) @ v).transpose(0, 1).reshape(N, D)


def key_masks(c, token_types):
    """Cross block → boolean key mask over the S VL tokens (None = every token, N1.5)."""
    L = dit_dims(c)[0]
    n = c['diffusion_model_cfg'].get('attend_text_every_n_blocks', 2)
    text = token_types == 0
    image = token_types == 1
    out = {}
    for i in range(0, L, 2):
        if c['gr00t_version'] == 'n1.5':
            out[i] = None
        else:
            out[i] = text if i % (2 * n) == 0 else image
    return out


def dit_forward(c, W, h, temb, vl, masks, kv_cache=None, prefix='action_head.'):
    """h (N, D) DiT tokens, temb (D), vl (S, Dvl) → (N, O)."""
    L, H, Dh = dit_dims(c)
    D = H * Dh
    m = prefix + 'model.'
    st = F.silu(temb)
    for i in range(L):
        p = f'{m}transformer_blocks.{i}.'
        mod = F.linear(st, W[p + 'norm1.linear.weight'], W[p + 'norm1.linear.bias'])
        scale, shift = mod[:D], mod[D:]
        x = F.layer_norm(h, (D,), eps=1e-5) * (1 + scale) + shift
        q = F.linear(x, W[p + 'attn1.to_q.weight'], W[p + 'attn1.to_q.bias'])
        if i % 2 == 0:
            if kv_cache is not None and i in kv_cache:
                k, v = kv_cache[i]
            else:
                k = F.linear(vl, W[p + 'attn1.to_k.weight'], W[p + 'attn1.to_k.bias'])
                v = F.linear(vl, W[p + 'attn1.to_v.weight'], W[p + 'attn1.to_v.bias'])
                if kv_cache is not None:
                    kv_cache[i] = (k, v)
            a = attention(q, k, v, H, masks[i])
        else:
            k = F.linear(x, W[p + 'attn1.to_k.weight'], W[p + 'attn1.to_k.bias'])
            v = F.linear(x, W[p + 'attn1.to_v.weight'], W[p + 'attn1.to_v.bias'])
            a = attention(q, k, v, H)
        h = h + F.linear(a, W[p + 'attn1.to_out.0.weight'], W[p + 'attn1.to_out.0.bias'])
        n3 = F.layer_norm(h, (D,), eps=1e-5)
        f = F.gelu(F.linear(n3, W[p + 'ff.net.0.proj.weight'], W[p + 'ff.net.0.proj.bias']), approximate='tanh')
        h = h + F.linear(f, W[p + 'ff.net.2.weight'], W[p + 'ff.net.2.bias'])
    n = F.linear(st, W[m + 'proj_out_1.weight'], W[m + 'proj_out_1.bias'])
    shift, scale = n[:D], n[D:]
    y = F.layer_norm(h, (D,), eps=1e-6) * (1 + scale) + shift
    return F.linear(y, W[m + 'proj_out_2.weight'], W[m + 'proj_out_2.bias'])


def action_decode(W, y, e, prefix='action_head.'):
    d = prefix + 'action_decoder.'
    return torch.relu(y @ W[d + 'layer1.W'][e] + W[d + 'layer1.b'][e]) @ W[d + 'layer2.W'][e] + W[d + 'layer2.b'][e]


def get_action(c, W, vl, token_types, state_features, embodiment, noise, steps=None, cache_kv=False,
               prefix='action_head.'):
    """vl (S, Dvl) the adapter's dit_encoder_hidden_states in token order, token_types (S) 0 text /
    1 image / 2 padding, state_features (1, 1, D), noise (T, A) → (actions (T, A), [velocity per
    step (T, A)])."""
    K = steps or c['num_inference_timesteps']
    T = c['action_horizon']
    x = noise
    masks = key_masks(c, token_types)
    pos = W[prefix + 'position_embedding.weight'][:T]
    fut = W[prefix + 'future_tokens.weight'] if c.get('num_target_vision_tokens', 0) else None
    cache = {} if cache_kv else None
    vels = []
    for k in range(K):
        t_disc = int(k / K * c['num_timestep_buckets'])
        a = action_encode(c, W, x, t_disc, embodiment, prefix) + pos
        parts = [state_features.reshape(1, -1)] + ([fut] if fut is not None else []) + [a]
        h = torch.cat(parts, dim=0)
        y = dit_forward(c, W, h, temb_of(c, W, t_disc, prefix), vl, masks, cache, prefix)
        v = action_decode(W, y, embodiment, prefix)[-T:]
        vels.append(v)
        x = x + (1.0 / K) * v
    return x, vels
