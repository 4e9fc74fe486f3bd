// The page of `meshnn serve`: lists /v1/models, runs each model (decode / vocode / encode, round
// trip), plays and draws the answer, and streams over the WebSocket with Web Audio. Plain
// JavaScript, no dependencies. State a test can read is kept on each card's data attributes:
// data-state (idle | input | running | done | streaming | played | error) and the numbers of
// the last run (data-duration, data-first-audio-ms, data-min-lead-ms, …).
'use strict';

const KEY_STORE = 'meshnn_api_key';
let apiKey = localStorage.getItem(KEY_STORE) || '';

// ---- the server's API ------------------------------------------------------------------------

class ServerError extends Error {}

// fetch() with the key; a non-2xx answer throws the server's own words.
async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (apiKey) headers['Authorization'] = 'Bearer ' + apiKey;
  const res = await fetch(path, Object.assign({}, options, { headers }));
  if (!res.ok) {
    let text = await res.text();
    try {
      const e = JSON.parse(text).error;
      if (e) text = `${e.code}: ${e.message}`;
    } catch (_) { /* not JSON: shown as it came */ }
    throw new ServerError(`HTTP ${res.status} ${text}`);
  }
  return res;
}

function wsUrl(path, params) {
  const u = new URL(path, location.href);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  // Browsers cannot set a WebSocket's headers: the key goes in the query (redacted in the log).
  if (apiKey) u.searchParams.set('api_key', apiKey);
  return u.toString();
}

// ---- .npy and WAV ----------------------------------------------------------------------------

// An .npy (float32 or float64, C order) → {shape, data: Float32Array}.
function parseNpy(buf) {
  const b = new Uint8Array(buf);
  if (b.length < 10 || b[0] !== 0x93 || String.fromCharCode(...b.slice(1, 6)) !== 'NUMPY')
    throw new Error('not an .npy file');
  const major = b[6];
  const hlen = major === 1 ? b[8] | (b[9] << 8) : new DataView(buf).getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(b.slice(start, start + hlen));
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header))
    throw new Error('an .npy the page cannot read (' + header.trim() + ')');
  const dims = shape[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const n = dims.reduce((a, d) => a * d, 1);
  const body = buf.slice(start + hlen);
  let data;
  if (descr[1] === '<f4') data = new Float32Array(body, 0, n);
  else if (descr[1] === '<f8') data = Float32Array.from(new Float64Array(body, 0, n));
  else throw new Error(`.npy of ${descr[1]}: the page streams float32 or float64`);
  return { shape: dims, data };
}

// A WAV (PCM 16/24/32-bit or float32, plain or extensible) → {rate, channels: [Float32Array]}.
function parseWav(buf) {
  const v = new DataView(buf);
  const tag = (o) => String.fromCharCode(v.getUint8(o), v.getUint8(o + 1), v.getUint8(o + 2),
                                         v.getUint8(o + 3));
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a WAV');
  let fmt = null, off = 12;
  while (off + 8 <= v.byteLength) {
    const id = tag(off), size = v.getUint32(off + 4, true), at = off + 8;
    if (id === 'fmt ') {
      let format = v.getUint16(at, true);
      if (format === 0xfffe) format = v.getUint16(at + 24, true);
      fmt = { format, channels: v.getUint16(at + 2, true), rate: v.getUint32(at + 4, true),
              bits: v.getUint16(at + 14, true) };
    } else if (id === 'data' && fmt) {
      const bytes = fmt.bits / 8, frames = Math.floor(Math.min(size, v.byteLength - at) /
                                                      (bytes * fmt.channels));
      const ch = Array.from({ length: fmt.channels }, () => new Float32Array(frames));
      for (let t = 0; t < frames; t++)
        for (let c = 0; c < fmt.channels; c++) {
          const p = at + (t * fmt.channels + c) * bytes;
          let x;
          if (fmt.format === 3) x = v.getFloat32(p, true);
          else if (fmt.bits === 16) x = v.getInt16(p, true) / 32768;
          else if (fmt.bits === 32) x = v.getInt32(p, true) / 2147483648;
          else x = ((v.getUint8(p) | (v.getUint8(p + 1) << 8) | (v.getInt8(p + 2) << 16))) / 8388608;
          ch[c][t] = x;
        }
      return { rate: fmt.rate, channels: ch };
    }
    off = at + size + (size & 1);
  }
  throw new Error('a WAV without fmt / data');
}

// Planar float32 channels → a 16-bit PCM WAV blob (the stream's answer, kept for replay).
function wavBlob(channels, rate) {
  const n = channels[0].length, C = channels.length, buf = new ArrayBuffer(44 + n * C * 2);
  const v = new DataView(buf);
  const str = (o, s) => { for (let i = 0; i < 4; i++) v.setUint8(o + i, s.charCodeAt(i)); };
  str(0, 'RIFF'); v.setUint32(4, 36 + n * C * 2, true); str(8, 'WAVE'); str(12, 'fmt ');
  v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, C, true);
  v.setUint32(24, rate, true); v.setUint32(28, rate * C * 2, true); v.setUint16(32, C * 2, true);
  v.setUint16(34, 16, true); str(36, 'data'); v.setUint32(40, n * C * 2, true);
  for (let t = 0, p = 44; t < n; t++)
    for (let c = 0; c < C; c++, p += 2)
      v.setInt16(p, Math.max(-32768, Math.min(32767, Math.round(channels[c][t] * 32767))), true);
  return new Blob([buf], { type: 'audio/wav' });
}

// ---- drawing ---------------------------------------------------------------------------------

function drawWave(canvas, x) {
  const g = canvas.getContext('2d'), W = canvas.width, H = canvas.height;
  g.fillStyle = '#f0f3f8'; g.fillRect(0, 0, W, H);
  g.strokeStyle = '#2f5fd0'; g.beginPath();
  let peak = 1e-9;
  for (let i = 0; i < x.length; i++) peak = Math.max(peak, Math.abs(x[i]));
  for (let px = 0; px < W; px++) {
    const a = Math.floor(px * x.length / W), b = Math.max(a + 1, Math.floor((px + 1) * x.length / W));
    let lo = Infinity, hi = -Infinity;
    for (let i = a; i < b && i < x.length; i++) { lo = Math.min(lo, x[i]); hi = Math.max(hi, x[i]); }
    if (lo === Infinity) continue;
    g.moveTo(px + 0.5, H / 2 - hi / peak * H * 0.45);
    g.lineTo(px + 0.5, H / 2 - lo / peak * H * 0.45 + 1);
  }
  g.stroke();
}

// In-place radix-2 FFT of (re, im), length a power of two.
function fft(re, im) {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) { [re[i], re[j]] = [re[j], re[i]]; [im[i], im[j]] = [im[j], im[i]]; }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = -2 * Math.PI / len, wr = Math.cos(ang), wi = Math.sin(ang);
    for (let i = 0; i < n; i += len) {
      let cr = 1, ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k, b = a + len / 2;
        const tr = re[b] * cr - im[b] * ci, ti = re[b] * ci + im[b] * cr;
        re[b] = re[a] - tr; im[b] = im[a] - ti; re[a] += tr; im[a] += ti;
        [cr, ci] = [cr * wr - ci * wi, cr * wi + ci * wr];
      }
    }
  }
}

// A magma-like dB colour ramp (t in 0 … 1), as `meshnn verify --report` draws its spectrograms.
const MAGMA = [[0, 0, 4], [80, 18, 123], [183, 55, 121], [252, 137, 97], [252, 253, 191]];
function heat(t) {
  t = Math.max(0, Math.min(1, t)) * 4;
  const i = Math.min(3, Math.floor(t)), u = t - i;
  return MAGMA[i].map((a, c) => Math.round(a + u * (MAGMA[i + 1][c] - a)));
}

function drawSpectrogram(canvas, x) {
  const N = 512, W = canvas.width, H = canvas.height;
  const cols = Math.max(1, Math.min(W, Math.floor(x.length / 64)));
  const win = Float32Array.from({ length: N }, (_, i) => 0.5 - 0.5 * Math.cos(2 * Math.PI * i / N));
  const db = [];
  let top = -Infinity;
  for (let c = 0; c < cols; c++) {
    const start = Math.floor(c * Math.max(0, x.length - N) / Math.max(1, cols - 1));
    const re = new Float32Array(N), im = new Float32Array(N);
    for (let i = 0; i < N; i++) re[i] = (x[start + i] || 0) * win[i];
    fft(re, im);
    const col = new Float32Array(N / 2);
    for (let k = 0; k < N / 2; k++) {
      col[k] = 10 * Math.log10(re[k] * re[k] + im[k] * im[k] + 1e-20);
      top = Math.max(top, col[k]);
    }
    db.push(col);
  }
  const img = canvas.getContext('2d').createImageData(W, H);
  for (let px = 0; px < W; px++) {
    const col = db[Math.min(cols - 1, Math.floor(px * cols / W))];
    for (let y = 0; y < H; y++) {
      const k = Math.min(N / 2 - 1, Math.floor((H - 1 - y) * (N / 2) / H));
      const [r, g, b] = heat(1 + (col[k] - top) / 80);
      const p = 4 * (y * W + px);
      img.data[p] = r; img.data[p + 1] = g; img.data[p + 2] = b; img.data[p + 3] = 255;
    }
  }
  canvas.getContext('2d').putImageData(img, 0, 0);
}

// ---- one model's card ------------------------------------------------------------------------

class Card {
  constructor(model) {
    this.m = model;
    this.el = document.getElementById('card-template').content.firstElementChild.cloneNode(true);
    this.el.dataset.model = model.name;
    this.el.dataset.state = 'idle';
    this.q = (sel) => this.el.querySelector(sel);
    this.q('.name').textContent = model.name;
    this.q('.kind').textContent = `${model.kind} · ${model.precision}`;
    this.q('.description').textContent = model.description;
    this.q('.takes').textContent = `${model.input.what}: ${model.input.layout}`;
    this.q('.gives').textContent = `${model.output.sample_rate} Hz, ${model.output.channels} ` +
        `channel${model.output.channels === 1 ? '' : 's'}` +
        (model.output.channels_per_batch_item ? ' per batch item' : '');
    this.q('.endpoints').textContent = model.endpoints.join(', ');
    const has = (e) => model.endpoints.includes(e);
    this.action = has('vocode') ? 'vocode' : 'decode';
    this.q('.run').textContent = has('vocode') ? 'Vocode' : 'Decode';
    this.q('.encode').hidden = this.q('.roundtrip').hidden = !has('encode');
    this.q('.stream').hidden = !has('stream');
    this.q('.upload').addEventListener('change', (e) => this.upload(e.target.files[0]));
    this.q('.example').addEventListener('click', () => this.guard(() => this.example()));
    this.q('.run').addEventListener('click', () => this.guard(() => this.run()));
    this.q('.encode').addEventListener('click', () => this.guard(() => this.encode(false)));
    this.q('.roundtrip').addEventListener('click', () => this.guard(() => this.encode(true)));
    this.q('.stream').addEventListener('click', () => this.guard(() => this.stream()));
  }

  // Runs `f`, showing its error (the server's words) in the card.
  async guard(f) {
    this.q('.error').hidden = true;
    try {
      await f();
    } catch (e) {
      this.q('.error').textContent = e.message;
      this.q('.error').hidden = false;
      this.el.dataset.state = 'error';
      this.el.dataset.error = e.message;
      this.q('.result').hidden = true;  // the last answer is not this input's
    }
  }

  setInput(blob, type, what) {
    this.input = { blob, type };
    this.q('.input-info').textContent = `input: ${what}`;
    const wav = type === 'audio/wav';
    this.q('.run').disabled = false;
    this.q('.encode').disabled = this.q('.roundtrip').disabled = !wav;
    this.q('.stream').disabled = wav;
    this.el.dataset.state = 'input';
  }

  upload(file) {
    if (!file) return;
    const wav = /\.wav$/i.test(file.name) || file.type.startsWith('audio/');
    this.setInput(file, wav ? 'audio/wav' : 'application/x-npy',
                  `${file.name} (${file.size} bytes)`);
  }

  async example() {
    const s = this.q('.seconds').value, seed = this.q('.seed').value;
    const res = await api(`v1/models/${encodeURIComponent(this.m.name)}/example?seconds=${s}&seed=${seed}`);
    const buf = await res.arrayBuffer();
    const shape = parseNpy(buf).shape;
    this.setInput(new Blob([buf]), 'application/x-npy',
                  `example, ${s} s, seed ${seed}: ${this.m.input.what} (${shape.join(', ')})`);
  }

  async post(action, blob, type, accept) {
    return api(`v1/models/${encodeURIComponent(this.m.name)}/${action}`,
               { method: 'POST', body: blob, headers: { 'Content-Type': type, 'Accept': accept } });
  }

  async run() {
    if (!this.input) throw new Error('give an input first');
    this.q('.stream-info').hidden = true;
    this.el.dataset.state = 'running';
    const t0 = performance.now();
    const res = await this.post(this.action, this.input.blob, this.input.type, 'audio/wav');
    const blob = await res.blob();
    await this.show(blob, `${this.action} in ${(performance.now() - t0).toFixed(0)} ms ` +
                          `(request ${res.headers.get('X-Request-Id')})`, `${this.m.name}.wav`);
  }

  // Encode the WAV input; a round trip decodes the latents back.
  async encode(roundTrip) {
    if (!this.input || this.input.type !== 'audio/wav') throw new Error('encode takes a WAV');
    this.q('.stream-info').hidden = true;
    this.el.dataset.state = 'running';
    const t0 = performance.now();
    const z = await (await this.post('encode', this.input.blob, 'audio/wav', 'application/x-npy')).blob();
    const shape = parseNpy(await z.arrayBuffer()).shape;
    if (!roundTrip) {
      this.q('.result').hidden = false;
      this.q('.result-info').textContent = `latents (${shape.join(', ')}) in ` +
          `${(performance.now() - t0).toFixed(0)} ms`;
      this.link(z, `${this.m.name}_latents.npy`);
      this.el.dataset.state = 'done';
      return;
    }
    const y = await (await this.post('decode', z, 'application/x-npy', 'audio/wav')).blob();
    await this.show(y, `round trip through latents (${shape.join(', ')}) in ` +
                       `${(performance.now() - t0).toFixed(0)} ms`, `${this.m.name}_roundtrip.wav`);
  }

  link(blob, name) {
    const a = this.q('.download');
    if (a.href) URL.revokeObjectURL(a.href);
    a.href = URL.createObjectURL(blob);
    a.download = name;
  }

  // A WAV answer: the player, the download, the pictures; data-duration for tests.
  async show(blob, info, name) {
    const wav = parseWav(await blob.arrayBuffer());
    const n = wav.channels[0].length;
    this.q('.result').hidden = false;
    this.q('.result-info').textContent = `${(n / wav.rate).toFixed(3)} s, ${wav.rate} Hz, ` +
        `${wav.channels.length} ch · ${info}`;
    this.q('.nyquist').textContent = wav.rate / 2;
    this.link(blob, name);
    const player = this.q('.player');
    player.src = this.q('.download').href;
    drawWave(this.q('.wave'), wav.channels[0]);
    drawSpectrogram(this.q('.spec'), wav.channels[0]);
    this.el.dataset.samples = n;
    this.el.dataset.rate = wav.rate;
    await new Promise((ok) => {
      if (player.readyState >= 1) return ok();
      player.addEventListener('loadedmetadata', ok, { once: true });
      player.addEventListener('error', ok, { once: true });
    });
    this.el.dataset.duration = player.duration;
    this.el.dataset.state = 'done';
  }

  // The input (.npy) as stream frames: one time step of every item, item-major (docs/serve.md).
  framesOf(npy) {
    let { shape, data } = npy;
    const fixed = this.m.input.shape.length;  // e.g. [1, 8, -1, 16]
    if (shape.length === fixed - 1) shape = [1, ...shape];
    if (shape.length !== fixed) throw new Error(`input of shape (${shape}) for ${this.m.input.layout}`);
    const [B, C, T] = shape, F = shape.length === 4 ? shape[3] : 1;
    const frames = new Float32Array(B * C * F * T);
    let o = 0;
    for (let t = 0; t < T; t++)
      for (let b = 0; b < B; b++)
        for (let c = 0; c < C; c++)
          for (let f = 0; f < F; f++) frames[o++] = data[((b * C + c) * T + t) * F + f];
    return { frames, items: B, T, size: B * C * F };
  }

  // Streams the input over the WebSocket and plays each PCM message as it arrives (Web Audio):
  // time to first audio = first frame sent → first audio received; lead = how far the audio
  // received runs ahead of what the speakers play.
  async stream() {
    if (!this.input || this.input.type === 'audio/wav') throw new Error('stream takes an .npy input');
    const { frames, items, T, size } = this.framesOf(parseNpy(await this.input.blob.arrayBuffer()));
    const rate = this.m.output.sample_rate, C = items * this.m.output.channels;
    const ctx = new AudioContext({ sampleRate: rate });
    await ctx.resume();
    const params = { format: 'f32le' };
    if (items > 1) params.items = items;
    const ws = new WebSocket(wsUrl(`v1/models/${encodeURIComponent(this.m.name)}/stream`, params));
    ws.binaryType = 'arraybuffer';
    this.el.dataset.state = 'streaming';
    const st = { chunks: [], n: 0, first: null, minLead: Infinity, maxLead: 0, t0: 0, next: 0,
                 started: 0, ended: 0, onEnd: null };
    const info = this.q('.stream-info');
    info.hidden = false;
    const ms = (s) => isFinite(s) ? (1e3 * s).toFixed(0) + ' ms' : '…';
    const show = (extra = '') => {
      info.textContent = `time to first audio ${st.first === null ? '…' : st.first.toFixed(1) + ' ms'}` +
          ` · ahead of playback ${ms(Math.max(0, st.next - ctx.currentTime))} (most ${ms(st.maxLead)},` +
          ` least ${ms(st.minLead)}) · ${(st.n / rate).toFixed(2)} s received${extra}`;
    };
    const done = new Promise((resolve, reject) => {
      ws.onopen = () => {
        st.t0 = performance.now();
        const group = 8;  // frames per message
        for (let t = 0; t < T; t += group)
          ws.send(frames.slice(t * size, Math.min(T, t + group) * size));
        ws.send(JSON.stringify({ type: 'flush' }));
      };
      ws.onmessage = (ev) => {
        if (typeof ev.data === 'string') {
          const m = JSON.parse(ev.data);
          if (m.type === 'error') return reject(new ServerError(`stream error: ${m.message}`));
          if (m.type === 'done') { st.done = m; ws.close(); resolve(); }
          return;
        }
        const pcm = new Float32Array(ev.data), n = pcm.length / C;
        if (n === 0) return;
        if (st.first === null) {
          st.first = performance.now() - st.t0;
          st.next = ctx.currentTime + 0.05;
        }
        const buf = ctx.createBuffer(C, n, rate);
        for (let c = 0; c < C; c++) {
          const ch = buf.getChannelData(c);
          for (let i = 0; i < n; i++) ch[i] = pcm[i * C + c];
        }
        st.chunks.push(buf);
        const src = ctx.createBufferSource();
        src.buffer = buf;
        src.connect(ctx.destination);
        // The margin left when a later chunk arrives (< 0: playback ran dry and waited).
        if (st.started > 0) st.minLead = Math.min(st.minLead, st.next - ctx.currentTime);
        const at = Math.max(st.next, ctx.currentTime);
        src.onended = () => { if (++st.ended === st.started && st.onEnd) st.onEnd(); };
        src.start(at);
        ++st.started;
        st.next = at + n / rate;
        st.maxLead = Math.max(st.maxLead, st.next - ctx.currentTime);
        st.n += n;
        show();
      };
      ws.onclose = (ev) => { if (!st.done) reject(new ServerError(`stream closed (${ev.code})`)); };
    });
    try {
      await done;
    } catch (e) {
      ctx.close();
      throw e;
    }
    this.el.dataset.firstAudioMs = st.first;
    this.el.dataset.minLeadMs = 1e3 * st.minLead;
    this.el.dataset.maxLeadMs = 1e3 * st.maxLead;
    this.el.dataset.streamSamples = st.n;
    this.el.dataset.doneSamples = st.done.samples;
    show(` · server: first audio ${st.done.first_audio_ms.toFixed(1)} ms, rtf ${st.done.rtf.toFixed(3)}`);
    const planar = Array.from({ length: C }, (_, c) => {
      const out = new Float32Array(st.n);
      let o = 0;
      for (const b of st.chunks) { out.set(b.getChannelData(c), o); o += b.length; }
      return out;
    });
    await this.show(wavBlob(planar, rate), `streamed (${T} frames)`, `${this.m.name}_stream.wav`);
    this.el.dataset.state = 'streamed';
    // Played to the end: every scheduled buffer has ended.
    if (st.ended < st.started) await new Promise((ok) => { st.onEnd = ok; });
    show(` · played to the end`);
    this.el.dataset.state = 'played';
    ctx.close();
  }
}

// ---- the page --------------------------------------------------------------------------------

async function load() {
  const list = document.getElementById('models'), err = document.getElementById('global-error');
  err.hidden = true;
  try {
    const models = (await (await api('v1/models')).json()).models;
    list.replaceChildren(...models.map((m) => new Card(m).el));
    document.getElementById('server-state').textContent =
        `${models.length} model${models.length === 1 ? '' : 's'} · ${location.host}`;
    document.body.dataset.models = models.map((m) => m.name).join(',');
  } catch (e) {
    list.replaceChildren();
    err.textContent = e.message;
    err.hidden = false;
    document.getElementById('server-state').textContent = 'not connected';
  }
  document.body.dataset.loaded = 'true';
}

document.getElementById('api-key').value = apiKey;
document.getElementById('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  apiKey = document.getElementById('api-key').value.trim();
  if (apiKey) localStorage.setItem(KEY_STORE, apiKey);
  else localStorage.removeItem(KEY_STORE);
  load();
});
load();
