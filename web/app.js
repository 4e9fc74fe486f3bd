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
    this.q('.reference').addEventListener('change',
                                          (e) => this.guard(() => this.compare(e.target.files[0]), true));
  }

  // Runs `f`, showing its error (the server's words) in the card; the last answer is hidden (it is
  // not this input's) unless `keep`.
  async guard(f, keep = false) {
    this.q('.error').hidden = true;
    try {
      await f();
    } catch (e) {
      this.q('.error').textContent = e.message;
      this.q('.error').hidden = false;
      this.el.dataset.state = 'error';
      this.el.dataset.error = e.message;
      if (!keep) this.q('.result').hidden = true;
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
    this.answer = wav;
    this.q('.compare').hidden = true;
    await new Promise((ok) => {
      if (player.readyState >= 1) return ok();
      player.addEventListener('loadedmetadata', ok, { once: true });
      player.addEventListener('error', ok, { once: true });
    });
    this.el.dataset.duration = player.duration;
    this.el.dataset.state = 'done';
  }

  // The last answer against a reference WAV: meshnn verify's PSNR and log-spectral distance, and
  // the difference spectrogram (the reference is A, the answer B).
  async compare(file) {
    if (!file || !this.answer) return;
    const ref = parseWav(await file.arrayBuffer()), ans = this.answer;
    if (ref.rate !== ans.rate || ref.channels.length !== ans.channels.length)
      throw new Error(`reference ${file.name}: ${ref.rate} Hz, ${ref.channels.length} ch; the ` +
                      `answer is ${ans.rate} Hz, ${ans.channels.length} ch`);
    const n = Math.min(ref.channels[0].length, ans.channels[0].length);
    const a = ref.channels.map((c) => c.subarray(0, n)), b = ans.channels.map((c) => c.subarray(0, n));
    const psnr = psnrDb(a, b);
    const lsd = a.reduce((s, _, c) => s + lsdDb(a[c], b[c]), 0) / a.length;
    this.q('.compare').hidden = false;
    this.q('.compare-info').textContent = `against ${file.name}: PSNR ${psnr.toFixed(2)} dB, ` +
        `log-spectral distance ${lsd.toFixed(3)} dB over ${n} samples` +
        (ref.channels[0].length !== ans.channels[0].length ? ' (the shorter length)' : '');
    drawDifference(this.q('.diff'), a[0], b[0]);
    this.el.dataset.psnr = psnr;
    this.el.dataset.lsd = lsd;
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
