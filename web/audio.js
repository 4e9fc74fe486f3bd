// The audio side of the page of `meshnn serve` (web/app.js uses it): .npy and WAV parsing, a WAV
// writer, the waveform and spectrogram pictures, and the comparison of an answer with a reference
// (PSNR and log-spectral distance as `meshnn verify` defines them, and the difference
// spectrogram as `meshnn verify --report` draws it). Plain JavaScript, no dependencies.
'use strict';

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

// `cols` Hann frames of N samples spread evenly over x → {db: [Float32Array(N / 2)], top}.
function spectrogram(x, N, cols) {
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
  return { db, top };
}

// Paints W × H pixels, colour(column, bin) → [r, g, b], low frequencies at the bottom.
function paint(canvas, cols, bins, colour) {
  const W = canvas.width, H = canvas.height;
  const img = canvas.getContext('2d').createImageData(W, H);
  for (let px = 0; px < W; px++) {
    const c = Math.min(cols - 1, Math.floor(px * cols / W));
    for (let y = 0; y < H; y++) {
      const [r, g, b] = colour(c, Math.min(bins - 1, Math.floor((H - 1 - y) * bins / H)));
      const p = 4 * (y * W + px);
      img.data[p] = r; img.data[p + 1] = g; img.data[p + 2] = b; img.data[p + 3] = 255;
    }
  }
  canvas.getContext('2d').putImageData(img, 0, 0);
}

const spectrumColumns = (canvas, x) => Math.max(1, Math.min(canvas.width, Math.floor(x.length / 64)));

function drawSpectrogram(canvas, x) {
  const cols = spectrumColumns(canvas, x), s = spectrogram(x, 512, cols);
  paint(canvas, cols, 256, (c, k) => heat(1 + (s.db[c][k] - s.top) / 80));
}

// B − A in dB: red where B is louder, blue where quieter, white equal (±20 dB saturates), grey
// where both are more than 80 dB below A's loudest bin.
function drawDifference(canvas, a, b) {
  const cols = spectrumColumns(canvas, a), sa = spectrogram(a, 512, cols);
  const sb = spectrogram(b, 512, cols), floor = sa.top - 80;
  paint(canvas, cols, 256, (c, k) => {
    const da = sa.db[c][k], db = sb.db[c][k];
    if (da < floor && db < floor) return [217, 217, 217];
    const d = Math.max(-1, Math.min(1, (db - da) / 20));
    return d >= 0 ? [255, Math.round(255 * (1 - 0.85 * d)), Math.round(255 * (1 - 0.85 * d))]
                  : [Math.round(255 * (1 + 0.85 * d)), Math.round(255 * (1 + 0.6 * d)), 255];
  });
}

// ---- comparison with a reference (meshnn verify's definitions) ----------------------------------

// PSNR of b against reference a over every channel, dB: 10·log10(peak(a)² / mean((b − a)²)).
function psnrDb(a, b) {
  let se = 0, n = 0, peak = 0;
  for (let c = 0; c < a.length; c++)
    for (let t = 0; t < a[c].length; t++) {
      const d = b[c][t] - a[c][t];
      se += d * d;
      peak = Math.max(peak, Math.abs(a[c][t]));
      n++;
    }
  return se === 0 ? Infinity : 10 * Math.log10(peak * peak / (se / n));
}

// Log-spectral distance of one channel, dB: Hann frames of n_fft 1024, hop 256; per frame the RMS
// over the bins of the dB difference (ε = 1e-10 of the peak power); the mean over the frames
// where the reference is not silent.
function lsdDb(a, b, N = 1024) {
  const hop = N / 4, T = a.length;
  let peak = 0;
  for (let t = 0; t < T; t++) peak = Math.max(peak, Math.abs(a[t]));
  const eps = Math.max(1e-20, 1e-10 * peak * peak * N * N);
  const win = Float64Array.from({ length: N }, (_, i) => 0.5 - 0.5 * Math.cos(2 * Math.PI * i / N));
  const frames = T <= N ? 1 : Math.floor((T - N) / hop) + 1;
  let sum = 0, used = 0;
  for (let f = 0; f < frames; f++) {
    const ar = new Float64Array(N), ai = new Float64Array(N), br = new Float64Array(N),
          bi = new Float64Array(N);
    let energy = 0;
    for (let i = 0; i < N; i++) {
      const t = f * hop + i, va = t < T ? a[t] : 0, vb = t < T ? b[t] : 0;
      ar[i] = va * win[i]; br[i] = vb * win[i]; energy += va * va;
    }
    if (energy <= 1e-8 * peak * peak * N) continue;
    fft(ar, ai); fft(br, bi);
    let acc = 0;
    for (let k = 0; k <= N / 2; k++) {
      const d = 10 * Math.log10(ar[k] * ar[k] + ai[k] * ai[k] + eps) -
                10 * Math.log10(br[k] * br[k] + bi[k] * bi[k] + eps);
      acc += d * d;
    }
    sum += Math.sqrt(acc / (N / 2 + 1));
    used++;
  }
  return used ? sum / used : 0;
}

