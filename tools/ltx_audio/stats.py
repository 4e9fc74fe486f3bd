"""One-line activation statistics for trace dicts."""
import torch


def describe(name, t):
    t = t.detach().double()
    fin = torch.isfinite(t).all().item()
    return (f'{name:30s} {str(tuple(t.shape)):18s} mean {t.mean():+9.4f} std {t.std() if t.numel() > 1 else 0:8.4f} '
            f'min {t.min():+9.4f} max {t.max():+9.4f} |x|>=1 {(t.abs() >= 1).double().mean():6.3f} finite {fin}')


def check_trace(trace, out_key='output', printer=print):
    ok = True
    for k, v in trace.items():
        printer(describe(k, v))
        if not torch.isfinite(v).all():
            ok = False
    out = trace.get(out_key)
    if out is not None:
        clipped = (out.abs() >= 1).double().mean().item()
        if clipped > 0.5:
            printer(f'WARNING: {clipped:.1%} of {out_key} is clipped')
            ok = False
    return ok
