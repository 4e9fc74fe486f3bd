"""Hostile re-run of issue 35's CLI classes against the real `meshnn` binary, for every command:

- output over an input (finding 1): each output option (--out, --log-std) naming each file the
  command reads — every option's file, every file of a model folder, the config.json beside a
  checkpoint, through a symlink — is refused (exit 1) and every input keeps its bytes;
- numbers (findings 3, 9): every numeric option (found in the command's --help, so a new option is
  covered without editing this file) given NaN, ±inf, 0, -1, 1e300, a 20-digit integer or junk
  ends without a signal, a hang or an internal error, and NaN / ±inf / 1e300 / junk never run;
- broken input files: each input file (and each file of a model folder) empty, or truncated to
  half its bytes, is an error (exit 1 or 2), never a crash, a hang or a written output.

Every run has a timeout and works in the test's own temp folder (the fixtures are copied there:
a regression would overwrite a copy, never the repository). Runs in `make test` (python_module).
"""
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import cli_path, fixture

TIMEOUT = 60


def run(*args, timeout=TIMEOUT, cwd=None):
    exe = cli_path()
    if not os.path.isfile(exe):
        pytest.skip(f'the meshnn CLI is not built ({exe})')
    try:
        r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                           timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f'hang: no exit within {timeout} s: meshnn {" ".join(map(str, args))}')
    cmd = ' '.join(map(str, args))
    assert r.returncode >= 0, f'killed by signal {-r.returncode}: meshnn {cmd}\n{r.stderr[-400:]}'
    assert 'internal error' not in r.stderr, f'meshnn {cmd}: {r.stderr[-400:]}'
    return r


def wav(path, x, rate):
    """A float32 WAV of (T, C) samples, written by hand."""
    x = np.asarray(x, '<f4')
    data = x.tobytes()
    ch = x.shape[1]
    hdr = b'RIFF' + (36 + len(data)).to_bytes(4, 'little') + b'WAVEfmt ' + b''.join(
        v.to_bytes(n, 'little') for v, n in ((16, 4), (3, 2), (ch, 2), (rate, 4),
                                            (rate * 4 * ch, 4), (4 * ch, 2), (32, 2)))
    with open(path, 'wb') as f:
        f.write(hdr + b'data' + len(data).to_bytes(4, 'little') + data)
    return str(path)


def copy(src, dst):
    (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
    return str(dst)


def cases(d):
    """name → (argv without outputs, {output option: path}, [model folders / files to expand]).
    Every input is a copy in d."""
    rng = np.random.default_rng(35)
    ltx = copy(fixture('ltx23_small.safetensors'), d / 'ltx.safetensors')
    latent = copy(fixture('ltx23_small_latent.npy'), d / 'latent.npy')
    h3 = copy(fixture('minimax_h3_tiny'), d / 'h3')
    z = str(d / 'z.npy')
    np.save(z, rng.standard_normal((2, 8, 5)).astype(np.float32))
    stereo = wav(d / 'in32k.wav', rng.uniform(-0.5, 0.5, (1600, 2)), 32000)
    voc = d / 'voc'
    voc.mkdir()
    copy(fixture('bigvgan_v2_24k_small.safetensors'), voc / 'bigvgan_generator.safetensors')
    from meshnn._safetensors import load_safetensors
    t, meta = load_safetensors(fixture('bigvgan_v2_24k_small.safetensors'))
    (voc / 'config.json').write_text(meta['config'])
    mel = str(d / 'mel.npy')
    np.save(mel, rng.uniform(-6, 1, (100, 8)).astype(np.float32))
    mono = wav(d / 'in24k.wav', rng.uniform(-0.5, 0.5, (2400, 1)), 24000)
    head = copy(fixture('gr00t_head_n1_7.safetensors'), d / 'head.safetensors')
    t, _ = load_safetensors(head)
    hin = {}
    for k in ('features', 'token_types', 'state', 'noise'):
        hin[k] = str(d / f'head_{k}.npy')
        np.save(hin[k], t[f'input.{k}'])
    adapter = copy(fixture('gr00t_adapter_n1_7.safetensors'), d / 'adapter.safetensors')
    t, meta = load_safetensors(adapter)
    ain = {}
    for k in ('features', 'token_types', 'state'):
        ain[k] = str(d / f'adapter_{k}.npy')
        np.save(ain[k], t[f'input.{k}'])
    a_wav = wav(d / 'a.wav', rng.uniform(-0.5, 0.5, (4000, 2)), 16000)
    b_wav = wav(d / 'b.wav', rng.uniform(-0.5, 0.5, (4000, 2)), 16000)
    out = {'--out': str(d / 'out.wav')}
    dec = ['audio-decode', '--quiet', '--checkpoint']
    enc = ['audio-encode', '--quiet', '--checkpoint', h3, '--wav', stereo]
    enc_out = {'--out': str(d / 'out.npy'), '--log-std': str(d / 'logstd.npy')}
    policy = ['gr00t-policy', '--checkpoint', head, '--version', 'n1.7', '--embodiment', 2,
              '--features', hin['features'], '--token-types', hin['token_types'], '--state',
              hin['state'], '--noise', hin['noise']]
    adapt = ['gr00t-adapter', '--checkpoint', adapter, '--version', 'n1.7', '--token-types',
             ain['token_types'], '--features', ain['features'], '--state', ain['state'],
             '--embodiment', int(meta['embodiment'])]
    return {
        'ltx-decode': (dec + [ltx, '--latent', latent], out),
        'ltx-decode-stream': (dec + [ltx, '--latent', latent, '--stream'], out),
        'h3-decode': (dec + [h3, '--latent', z], out),
        'h3-decode-stream': (dec + [h3, '--latent', z, '--stream'], out),
        'h3-encode': (enc, enc_out),
        'h3-encode-stream': (enc + ['--stream'], enc_out),
        'vocode-mel': (['vocode', '--checkpoint', str(voc / 'bigvgan_generator.safetensors'),
                        '--mel', mel], out),
        'vocode-file': (['vocode', '--checkpoint', str(voc / 'bigvgan_generator.safetensors'),
                         '--wav', mono], out),
        'gr00t-policy': (policy, {'--out': str(d / 'actions.npy')}),
        'gr00t-adapter': (adapt, {'--out': str(d / 'adapter_out.safetensors')}),
        'verify': (['verify', a_wav, b_wav], {}),
    }


def input_files(argv, beside=True):
    """Every file a run of argv reads: file arguments, every file of a folder argument, and (with
    `beside`) the config.json beside a checkpoint file, which AudioModel::load reads (vocode itself
    reads the checkpoint's metadata; the output rule protects that config.json all the same)."""
    files = []
    for i, a in enumerate(map(str, argv)):
        if os.path.isdir(a):
            files += sorted(os.path.join(a, n) for n in os.listdir(a))
        elif os.path.isfile(a):
            files.append(a)
            config = os.path.join(os.path.dirname(a), 'config.json')
            if beside and i > 0 and argv[i - 1] == '--checkpoint' and os.path.isfile(config):
                files.append(config)
    return list(dict.fromkeys(files))


def snapshot(files):
    return {f: open(f, 'rb').read() for f in files}


def outputs_argv(outs):
    return [x for kv in outs.items() for x in kv]


@pytest.fixture
def scenario(tmp_path):
    d = tmp_path / 'inputs'
    d.mkdir()
    return cases(d)


WRITERS = ['ltx-decode', 'ltx-decode-stream', 'h3-decode', 'h3-decode-stream', 'h3-encode',
           'h3-encode-stream', 'vocode-mel', 'vocode-file', 'gr00t-policy', 'gr00t-adapter']


@pytest.mark.parametrize('name', WRITERS)
def test_no_output_over_any_input(scenario, tmp_path, name):
    argv, outs = scenario[name]
    files = input_files(argv)
    assert len(files) >= 2, files
    before = snapshot(files)
    r = run(*argv, *outputs_argv(outs))  # the case itself runs
    assert r.returncode == 0, f'{name}: {r.stderr[-400:]}'
    for opt in outs:
        for victim in files:
            link = tmp_path / 'link'
            if link.exists() or link.is_symlink():
                link.unlink()
            os.symlink(victim, link)
            for spelling in (victim, str(link)):
                o = dict(outs, **{opt: spelling})
                r = run(*argv, *outputs_argv(o))
                assert r.returncode == 1 and 'same file as the input' in r.stderr, \
                    f'{name} {opt} {spelling} → {victim}: exit {r.returncode}: {r.stderr[-300:]}'
    assert snapshot(files) == before, f'{name}: an input changed'


def numeric_options(command):
    """The options of `meshnn <command> --help` that take numbers (INT, UINT, FLOAT, NUM)."""
    r = run(*command.split(), '--help')
    opts = []
    for line in r.stdout.splitlines():
        m = re.match(r'\s+(?:-\w, )?(--[a-z][a-z0-9-]*)\s+(INT|UINT|FLOAT|NUM)\b', line)
        if m and m.group(1) != '--comm-timeout':
            opts.append(m.group(1))
    return opts


NEVER_VALID = ['nan', 'NaN', 'inf', '-inf', '1e300', '99999999999999999999', '4x', '0x1p3']
HOSTILE = NEVER_VALID + ['0', '-1', '']


def command_of(argv):
    return argv[0]


@pytest.mark.parametrize('name', WRITERS + ['verify'])
def test_numeric_options(scenario, tmp_path, name):
    argv, outs = scenario[name]
    opts = numeric_options(command_of(argv))
    assert opts or name == 'verify', f'{name}: no numeric option found in --help'
    for opt in opts:
        base = list(map(str, argv))
        if opt in base:  # replace its value rather than giving it twice
            i = base.index(opt)
            base = base[:i] + base[i + 2:]
        for v in HOSTILE:
            o = {k: str(tmp_path / f'n_{os.path.basename(p)}') for k, p in outs.items()}
            r = run(*base, opt, v, *outputs_argv(o), timeout=TIMEOUT)
            if v in NEVER_VALID:
                assert r.returncode != 0, f'{name} {opt} {v!r} ran (exit 0)'
                assert not any(os.path.exists(p) for p in o.values()), f'{name} {opt} {v!r}'
            for p in o.values():
                if os.path.exists(p):
                    os.unlink(p)


BENCH = ['bench audio', 'bench ccl', 'bench first-call', 'bench precision', 'bench stream',
         'bench vocode']


@pytest.mark.parametrize('command', BENCH + ['demo'])
def test_bench_numeric_options(tmp_path, command):
    """Every numeric option of the benchmarks (and demo) refuses what is never a valid count or
    length, at once (a run that starts would be a test timeout: the benches take minutes)."""
    opts = numeric_options(command)
    assert opts, command
    for opt in opts:
        for v in NEVER_VALID + ['-1']:
            r = run(*command.split(), opt, v, '--out', tmp_path / 'o.wav', timeout=20) \
                if command == 'demo' else run(*command.split(), opt, v, timeout=20)
            # demo checks --seconds in its command (exit 1); every bench refuses at parsing (2).
            assert r.returncode in ((1, 2) if command == 'demo' else (2,)), \
                f'{command} {opt} {v!r}: exit {r.returncode}: {r.stderr}'
    for opt, v in (('--sizes', '0'), ('--trials', '0')) if command == 'bench ccl' else \
            (('--chunks', '0'), ('--repeat', '0')) if command == 'bench stream' else ():
        r = run(*command.split(), opt, v, timeout=20)
        assert r.returncode == 2, f'{command} {opt} {v}: exit {r.returncode}: {r.stderr}'


@pytest.mark.parametrize('name', WRITERS + ['verify'])
@pytest.mark.parametrize('damage', ['empty', 'truncated'])
def test_broken_input_files(scenario, name, damage):
    argv, outs = scenario[name]
    for victim in input_files(argv, beside=False):
        keep = open(victim, 'rb').read()
        with open(victim, 'wb') as f:
            f.write(b'' if damage == 'empty' else keep[:len(keep) // 2])
        try:
            r = run(*argv, *outputs_argv(outs))
            assert r.returncode in (1, 2), \
                f'{name}: {damage} {os.path.basename(victim)}: exit {r.returncode}'
            for p in outs.values():
                assert not os.path.exists(p), f'{name}: {damage} {victim}: {p} written'
        finally:
            with open(victim, 'wb') as f:
                f.write(keep)


def test_verify_fails_on_nan_silence_dc_without_bounds(tmp_path):
    """verify's defaults (finding 3), through the binary as a user runs it."""
    rng = np.random.default_rng(3)
    a = rng.uniform(-0.5, 0.5, (8000, 2))
    ref = wav(tmp_path / 'a.wav', a, 16000)
    for what, b in (('nan', np.where(np.arange(8000)[:, None] == 5, np.nan, a)),
                    ('zero', np.zeros_like(a)), ('dc', np.full_like(a, 0.25))):
        r = run('verify', ref, wav(tmp_path / f'{what}.wav', b, 16000), '--json')
        assert r.returncode == 1, (what, r.stdout)
        assert json.loads(r.stdout)['pass'] is False, r.stdout
