#!/usr/bin/python3
"""A client of `meshnn serve` (docs/serve.md): one-shot decode of an .npy file to a WAV, or the
same input streamed over the WebSocket frame by frame, PCM written as it arrives.

  meshnn serve --model voc=bigvgan_v2_24khz_100band_256x/ --model ltx=ltx-2.3.safetensors &
  ./client.py --model voc mel.npy out.wav                 # POST /v1/models/voc/decode
  ./client.py --model voc mel.npy out.wav --stream        # WebSocket /v1/models/voc/stream

Needs python3-requests, python3-websockets and python3-numpy (Debian packages)."""
import argparse
import asyncio
import json
import os
import sys
import time
import wave

import numpy as np
import requests
import websockets


def headers(key):
    return {'Authorization': f'Bearer {key}'} if key else {}


def one_shot(a):
    with open(a.input, 'rb') as f:
        body = f.read()
    t0 = time.time()
    r = requests.post(f'{a.url}/v1/models/{a.model}/decode', data=body, timeout=600,
                      headers={'Content-Type': 'application/x-npy', 'Accept': 'audio/wav',
                               **headers(a.api_key)})
    if r.status_code != 200:
        sys.exit(f'{r.status_code}: {r.json()["error"]["message"]}')
    with open(a.output, 'wb') as f:
        f.write(r.content)
    print(f'{a.output}: {len(r.content)} bytes in {time.time() - t0:.3f} s '
          f'(request {r.headers["X-Request-Id"]})')


def frames_of(x, info):
    """The stream's frames (n, items·frame_size) and the item count (docs/serve.md, "a frame"):
    an LTX latent (8, T, 16) is one item, frame t = latent[:, t, :]; a mel (num_mels, T) or
    latents (C, T) one item, (B, C, T) B items (stereo MiniMax-H3: B = 2), frame t = x[:, :, t]
    item after item."""
    if x.ndim >= 3 and x.shape[-1] == 16 and x.shape[-3] == 8:  # LTX latent, frame = [:, t, :]
        x = x.reshape(x.shape[-3:])
        return np.ascontiguousarray(x.transpose(1, 0, 2).reshape(x.shape[1], -1), np.float32), 1
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3 or x.shape[0] > info['input'].get('stream_items', 1):
        sys.exit(f'{x.shape}: the model streams {info["input"]["layout"]}')
    items, _, frames = x.shape
    return np.ascontiguousarray(x.transpose(2, 0, 1).reshape(frames, -1), np.float32), items


async def stream(a):
    info = requests.get(f'{a.url}/v1/models/{a.model}', headers=headers(a.api_key)).json()
    rate = info['output']['sample_rate']
    frames, items = frames_of(np.load(a.input), info)
    channels = items * info['output']['channels']  # one output channel (or pair) per item
    uri = a.url.replace('http', 'ws', 1) + f'/v1/models/{a.model}/stream?format=s16le&items={items}'
    with wave.open(a.output, 'wb') as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        async with websockets.connect(uri, max_size=None, extra_headers=headers(a.api_key)) as ws:
            async def send():
                for i in range(0, len(frames), a.push_frames):  # e.g. as a TTS model makes them
                    await ws.send(frames[i:i + a.push_frames].tobytes())
                await ws.send(json.dumps({'type': 'flush'}))
            sender = asyncio.ensure_future(send())
            async for msg in ws:
                if isinstance(msg, bytes):
                    out.writeframes(msg)  # s16le PCM, final as it arrives
                    continue
                m = json.loads(msg)
                if m['type'] == 'error':
                    sys.exit(f'stream error: {m["message"]}')
                print(f'{a.output}: {m["samples"]} samples, first audio after '
                      f'{m["first_audio_ms"]:.1f} ms, real-time factor {m["rtf"]:.3f}')
                break
            await sender


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument('input', help='.npy mel (num_mels, T), LTX latent (8, T, 16) or MiniMax-H3 '
                   'latents (C, T) / (B, C, T)')
    p.add_argument('output', help='.wav to write')
    p.add_argument('--model', required=True, help='a name from GET /v1/models')
    p.add_argument('--url', default='http://127.0.0.1:8080')
    p.add_argument('--api-key', default=os.environ.get('MESHNN_API_KEY'))
    p.add_argument('--stream', action='store_true', help='use the WebSocket stream')
    p.add_argument('--push-frames', type=int, default=8, help='frames per stream message')
    a = p.parse_args()
    # The output is written while (one shot: after) the input is read: the same file would be lost.
    if os.path.realpath(a.input) == os.path.realpath(a.output) or (
            os.path.exists(a.input) and os.path.exists(a.output)
            and os.path.samefile(a.input, a.output)):  # a hard link too
        sys.exit(f'{a.output}: the output would overwrite the input; give another path')
    if a.stream:
        asyncio.run(stream(a))
    else:
        one_shot(a)


if __name__ == '__main__':
    main()
