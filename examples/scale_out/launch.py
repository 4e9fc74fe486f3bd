#!/usr/bin/env python3
"""N `meshnn serve` replicas on loopback behind HAProxy (docs/scale_out.md).

    examples/scale_out/launch.py --replicas 3 --port 8080 --model ltx=ltx-2.3-audio.safetensors \
        [--cli build/meshnn] [--serve-arg=--threads-per-worker=1 ...] [--state state.json]

Starts the replicas on free ports (`--port 0 --port-file`), writes haproxy.cfg beside them from
examples/scale_out/haproxy.cfg (the lines marked @BIND@, @SERVERS@, @STATS@ filled in), starts
`haproxy -db` and prints the URL. --state writes {"url", "haproxy_pid", "stats_socket",
"replicas": [{"name", "pid", "port"}]} once everything is up. SIGTERM / SIGINT drains: every
replica gets SIGTERM (it leaves the pool through /ready and finishes its work), then HAProxy
stops. Needs Debian's haproxy and python3 only."""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_replica(cli, i, models, extra, work):
    port_file = os.path.join(work, f'r{i}.port')
    log = open(os.path.join(work, f'r{i}.log'), 'w')
    cmd = [cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--port-file', port_file]
    for m in models:
        cmd += ['--model', m]
    proc = subprocess.Popen(cmd + extra, stdout=subprocess.DEVNULL, stderr=log)
    return {'name': f'r{i}', 'proc': proc, 'port_file': port_file, 'log': log.name}


def wait_ready(replicas, timeout=120):
    t0 = time.time()
    for r in replicas:
        while not os.path.exists(r['port_file']) or not open(r['port_file']).read().strip():
            if r['proc'].poll() is not None:
                sys.exit(f'launch.py: replica {r["name"]} exited: {open(r["log"]).read()}')
            if time.time() - t0 > timeout:
                sys.exit(f'launch.py: replica {r["name"]} did not start within {timeout} s')
            time.sleep(0.02)
        r['port'] = int(open(r['port_file']).read())


def render(template, port, replicas, stats):
    out, skipping = [], False
    for line in open(template).read().splitlines():
        if skipping and line.strip().startswith('server '):
            continue
        skipping = False
        if '@BIND@' in line:
            line = f'    bind 127.0.0.1:{port}'
        elif '@STATS@' in line:
            line = f'    stats socket {stats} mode 600 level admin'
        elif '@SERVERS@' in line:
            out += [f'    server {r["name"]} 127.0.0.1:{r["port"]}' for r in replicas]
            skipping = True
            continue
        out.append(line)
    return '\n'.join(out) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--replicas', type=int, default=3)
    ap.add_argument('--port', type=int, default=8080, help='HAProxy frontend port (0 = free)')
    ap.add_argument('--model', action='append', required=True, help='NAME=PATH (repeatable)')
    ap.add_argument('--cli', default=shutil.which('meshnn') or 'build/meshnn')
    ap.add_argument('--serve-arg', action='append', default=[], help='passed to each replica')
    ap.add_argument('--haproxy', default=shutil.which('haproxy') or '/usr/sbin/haproxy')
    ap.add_argument('--template', default=os.path.join(HERE, 'haproxy.cfg'))
    ap.add_argument('--state', help='write the URL and PIDs here as JSON once up')
    a = ap.parse_args()
    if not 1 <= a.replicas <= 64:
        sys.exit('launch.py: --replicas is 1 … 64')
    work = tempfile.mkdtemp(prefix='meshnn_scale_out_')
    replicas = [start_replica(a.cli, i + 1, a.model, a.serve_arg, work) for i in range(a.replicas)]
    stop = {'now': False}

    def on_signal(*_):
        stop['now'] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    haproxy = None
    try:
        wait_ready(replicas)
        port = a.port or free_port()
        cfg = os.path.join(work, 'haproxy.cfg')
        stats = os.path.join(work, 'haproxy.sock')
        open(cfg, 'w').write(render(a.template, port, replicas, stats))
        haproxy = subprocess.Popen([a.haproxy, '-db', '-f', cfg],
                                   stderr=open(os.path.join(work, 'haproxy.log'), 'w'))
        url = f'http://127.0.0.1:{port}'
        t0 = time.time()
        while True:  # up when the frontend accepts
            try:
                socket.create_connection(('127.0.0.1', port), timeout=1).close()
                break
            except OSError:
                if haproxy.poll() is not None or time.time() - t0 > 30:
                    sys.exit('launch.py: haproxy did not start: ' +
                             open(os.path.join(work, 'haproxy.log')).read())
                time.sleep(0.05)
        state = {'url': url, 'haproxy_pid': haproxy.pid, 'stats_socket': stats, 'work': work,
                 'replicas': [{'name': r['name'], 'pid': r['proc'].pid, 'port': r['port'],
                               'log': r['log']} for r in replicas]}
        if a.state:
            tmp = a.state + '.tmp'
            json.dump(state, open(tmp, 'w'))
            os.replace(tmp, a.state)
        print(f'launch.py: {a.replicas} replicas behind {url}', flush=True)
        while not stop['now'] and haproxy.poll() is None:
            time.sleep(0.1)
    finally:
        # Drain: each replica leaves the pool (/ready 503) and finishes its work, then stops.
        for r in replicas:
            if r['proc'].poll() is None:
                r['proc'].send_signal(signal.SIGTERM)
        for r in replicas:
            try:
                r['proc'].wait(timeout=60)
            except subprocess.TimeoutExpired:
                r['proc'].kill()
        if haproxy and haproxy.poll() is None:
            haproxy.terminate()
            haproxy.wait(timeout=30)
        if not a.state:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
