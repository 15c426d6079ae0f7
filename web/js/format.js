// Number formatting for people, and CSV/JSON export.
//
// Units (one convention for the UI, its tooltips and the CLI; docs/web.md
// "Units"): sizes of memory and data in binary prefixes (KiB, MiB, GiB,
// TiB: 2^10 steps), as device memory is sold (an "80 GB" H100 holds
// 80 GiB); rates and counts in decimal SI prefixes (GB/s, TFLOP/s, k
// tok/s: 10^3 steps), as bandwidth and compute are published. 4
// significant digits.

const SI = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];

export function si(v, unit = '') {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  for (const [f, p] of SI) if (a >= f) return `${(v / f).toPrecision(4)} ${p}${unit}`;
  return `${Number(v).toPrecision(4)} ${unit}`.trim();
}

export function seconds(v) {
  if (v === undefined || v === null) return '–';
  const a = Math.abs(v);
  if (a >= 1) return `${v.toPrecision(4)} s`;
  if (a >= 1e-3) return `${(v * 1e3).toPrecision(4)} ms`;
  if (a >= 1e-6) return `${(v * 1e6).toPrecision(4)} µs`;
  return `${(v * 1e9).toPrecision(4)} ns`;
}

// A size: "14.96 GiB", "512.0 KiB", "96 B".
export function bytes(v) {
  if (v === undefined || v === null) return '–';
  const units = [[2 ** 50, 'PiB'], [2 ** 40, 'TiB'], [2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']];
  for (const [f, u] of units) if (Math.abs(v) >= f) return `${(v / f).toPrecision(4)} ${u}`;
  return `${Math.round(v)} B`;
}

export function fixed(v, digits = 3) {
  return v === undefined || v === null ? '–' : Number(v).toFixed(digits);
}

// RFC 4180: quote fields holding a comma, quote or newline.
export function toCsv(headers, rows) {
  const cell = (v) => {
    const s = v === undefined || v === null ? '' : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [headers, ...rows].map((r) => r.map(cell).join(',')).join('\n') + '\n';
}

export function download(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
