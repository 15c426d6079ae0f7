// The Compare view: a sweep over hardware × batch sizes, streamed as NDJSON,
// drawn as tok/s, $/Mtoken and J/token against batch, and a sortable table.
import { stream, loadCatalogs, getHardware, ApiError } from './api.js';
import { si, seconds, fixed, toCsv, download } from './format.js';
import { lines } from './charts.js';
import { spills, fitsText, spillWhere } from './spill.js';

const FORMATS = ['bf16', 'fp16', 'fp8', 'int8', 'int4', 'int4-g128', 'nvfp4', 'mxfp4'];
const DEFAULT_HW = 'nvidia-h100-sxm-80gb,amd-mi300x,nvidia-a100-sxm-80gb,nvidia-rtx-4090';
const COLUMNS = [
  { key: 'hardwareId', title: 'hardware', text: true },
  { key: 'batch', title: 'batch', num: true },
  { key: 'ttftSeconds', title: 'TTFT', fmt: seconds },
  { key: 'tpotMeanSeconds', title: 'TPOT', fmt: seconds },
  { key: 'decodeTokensPerSecondTotal', title: 'tok/s', fmt: (v) => si(v) },
  { key: 'usdPerMillionOutputTokens', title: '$/Mtok', fmt: (v) => fixed(v, 3) },
  { key: 'joulesPerOutputToken', title: 'J/token', fmt: (v) => fixed(v, 4) },
  { key: 'gCo2ePerMillionOutputTokens', title: 'gCO₂e/Mtok', fmt: (v) => si(v) },
  // "fits (spilled: weights 14.96 GiB)" when bytes sit off the device.
  { key: 'fits', title: 'fits', text: true, fmt: (v, r) => r.fitsText },
  { key: 'bound', title: 'bound', text: true },
  { key: 'bottleneckOp', title: 'bottleneck', text: true },
];

const TEMPLATE = `
<form class="controls" autocomplete="off" onsubmit="return false">
  <label>Model <select name="model"></select></label>
  <label>Hardware</label><div class="hw-list" data-role="hw"></div>
  <label>Batch sizes (comma-separated) <input name="batch"></label>
  <div class="row">
    <label>Prompt <input name="prompt" type="number"></label>
    <label>Generated <input name="gen" type="number"></label>
    <label>Weights <input name="weights" list="compare-formats"></label>
  </div>
  <datalist id="compare-formats">${FORMATS.map((f) => `<option value="${f}">`).join('')}</datalist>
  <div class="general-error" data-for=""></div>
  <div class="buttons">
    <button type="button" class="small primary" data-role="run">Run sweep</button>
    <button type="button" class="small" data-export="csv">Export CSV</button>
    <button type="button" class="small" data-export="json">Export JSON</button>
    <span class="status" data-role="status"></span>
  </div>
</form>
<div class="results">
  <div class="card wide"><h2>Against batch size <span class="hint">one line per hardware</span></h2>
    <div class="charts3"><div data-role="chart-tps"></div><div data-role="chart-usd"></div><div data-role="chart-joules"></div></div>
    <div class="legend" data-role="legend"></div></div>
  <div class="card wide"><h2>Points <span class="hint">click a column to sort</span></h2><div class="table-wrap"><table class="data" data-role="table"></table></div></div>
</div>`;

export class CompareView {
  constructor(root, onState) {
    this.root = root;
    this.onState = onState;
    root.innerHTML = TEMPLATE;
    this.form = root.querySelector('form');
    this.points = [];
    this.parts = new Map();
    this.sort = { key: 'decodeTokensPerSecondTotal', dir: -1 };
    root.querySelector('[data-role=run]').addEventListener('click', () => this.run());
    this.form.addEventListener('change', () => this.run());
    root.querySelectorAll('[data-export]').forEach((b) => b.addEventListener('click', () => this.export(b.dataset.export)));
  }

  async init(state) {
    const { models, hardware } = await loadCatalogs();
    this.form.elements.model.innerHTML = models.map((x) => `<option value="${x.id}">${x.id}</option>`).join('');
    this.form.elements.model.value = state.model || 'llama-3-8b';
    const chosen = new Set((state.hardware || DEFAULT_HW).split(','));
    // The chosen parts first, so a link's parts are in sight (as Plan).
    const sorted = [...hardware].sort((a, b) => Number(chosen.has(b.id)) - Number(chosen.has(a.id)));
    this.root.querySelector('[data-role=hw]').innerHTML = sorted.map((h) =>
      `<label><input type="checkbox" value="${h.id}" ${chosen.has(h.id) ? 'checked' : ''}>${h.id}</label>`).join('');
    this.form.elements.batch.value = state.batches || '1,4,16,64';
    this.form.elements.prompt.value = state.prompt || '1024';
    this.form.elements.gen.value = state.gen || '128';
    this.form.elements.weights.value = state.weights || 'bf16';
    await this.run();
  }

  values() {
    const hw = [...this.root.querySelectorAll('[data-role=hw] input:checked')].map((i) => i.value);
    return { model: this.form.elements.model.value, hardware: hw.join(','), batches: this.form.elements.batch.value.replace(/\s/g, ''),
      prompt: this.form.elements.prompt.value, gen: this.form.elements.gen.value, weights: this.form.elements.weights.value };
  }

  state() { return Object.assign({ view: 'compare' }, this.values()); }

  async run() {
    const s = this.values();
    this.onState(this.state());
    const seq = (this.seq = (this.seq || 0) + 1);
    const status = this.root.querySelector('[data-role=status]');
    const err = this.root.querySelector('.general-error');
    err.textContent = '';
    status.textContent = 'sweeping…';
    const req = {
      models: [{ catalogId: s.model }],
      hardware: s.hardware.split(',').filter(Boolean).map((id) => ({ platformId: id })),
      batchSizes: s.batches.split(',').filter(Boolean),
      promptTokens: s.prompt ? [s.prompt] : [], generatedTokens: s.gen ? [s.gen] : [],
      formats: [{ weights: s.weights }],
      // The memory placement of each point, to say what spilled and how
      // much (BASIC: no per-op tables).
      includeFullResult: true, resultView: 'ANALYSIS_VIEW_BASIC',
    };
    const points = [];
    try {
      await stream('Sweep', req, (p) => { points.push(p); status.textContent = `${points.length} / ${p.totalPoints} points`; });
    } catch (e) {
      if (seq !== this.seq) return;
      err.textContent = e instanceof ApiError ? e.message : String(e);
      status.textContent = e.code || 'error';
      this.root.dataset.state = 'error';
      return;
    }
    // The tiers' kinds of the parts that spilled (cached per part).
    const spilledParts = [...new Set(points.filter((p) => p.summary && p.summary.spilled).map((p) => p.summary.hardwareId))];
    try {
      this.parts = new Map(await Promise.all(spilledParts.map(async (id) => [id, await getHardware(id)])));
    } catch (e) {
      this.parts = new Map();
    }
    if (seq !== this.seq) return;
    this.points = points;
    status.textContent = `${points.length} points`;
    this.render();
    this.root.dataset.state = 'ready';
  }

  rows() {
    return this.points.filter((p) => p.summary && !p.error?.message).map((p) => {
      const sp = p.summary.spilled ? spills(p.result && p.result.memory, this.parts.get(p.summary.hardwareId)) : [];
      return Object.assign({ index: Number(p.index) }, p.summary, {
        batch: Number(p.summary.batch),
        fitsText: fitsText(p.summary.fits, sp.length ? sp : p.summary.spilled),
        spillWhere: spillWhere(sp),
      });
    });
  }

  redraw() { if (this.points.length) this.render(); }

  render() {
    const rows = this.rows();
    const byHw = new Map();
    for (const r of rows) {
      if (!byHw.has(r.hardwareId)) byHw.set(r.hardwareId, []);
      byHw.get(r.hardwareId).push(r);
    }
    const series = (key) => [...byHw].map(([name, rs]) => ({ name, points: rs.map((r) => ({ x: r.batch, y: r[key] })) }));
    const opts = { xLabel: 'batch', logX: true, width: 330, height: 240 };
    let color = lines(this.root.querySelector('[data-role=chart-tps]'), series('decodeTokensPerSecondTotal'), Object.assign({ yLabel: 'decode tok/s' }, opts));
    lines(this.root.querySelector('[data-role=chart-usd]'), series('usdPerMillionOutputTokens'), Object.assign({ yLabel: '$ / Mtoken', yFormat: (v) => fixed(v, 2) }, opts));
    lines(this.root.querySelector('[data-role=chart-joules]'), series('joulesPerOutputToken'), Object.assign({ yLabel: 'J / token', yFormat: (v) => fixed(v, 3) }, opts));
    this.root.querySelector('[data-role=legend]').innerHTML = [...byHw.keys()].map((n) => `<span><i class="swatch" style="background:${color(n)}"></i>${n}</span>`).join('');
    this.drawTable();
  }

  drawTable() {
    const rows = this.rows();
    const { key, dir } = this.sort;
    rows.sort((a, b) => {
      const x = a[key]; const y = b[key];
      if (x === undefined) return 1;
      if (y === undefined) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    const t = this.root.querySelector('[data-role=table]');
    t.innerHTML = `<thead><tr>${COLUMNS.map((c) => `<th data-key="${c.key}" class="${c.text ? 't' : ''} ${c.key === key ? (dir > 0 ? 'sorted-asc' : 'sorted-desc') : ''}">${c.title}</th>`).join('')}</tr></thead>
      <tbody>${rows.map((r) => `<tr>${COLUMNS.map((c) => `<td class="${c.text ? 't' : ''}${c.key === 'fits' && r.spilled ? ' fits-spilled' : ''}" data-key="${c.key}" data-value="${r[c.key] ?? ''}"${c.key === 'fits' && r.spillWhere ? ` title="${r.spillWhere.replace(/"/g, '&quot;')}"` : ''}>${r[c.key] === undefined ? '–' : c.fmt ? c.fmt(r[c.key], r) : r[c.key]}</td>`).join('')}</tr>`).join('')}</tbody>`;
    t.querySelectorAll('th').forEach((th) => th.addEventListener('click', () => {
      const k = th.dataset.key;
      this.sort = { key: k, dir: this.sort.key === k ? -this.sort.dir : (COLUMNS.find((c) => c.key === k).text ? 1 : -1) };
      this.drawTable();
    }));
  }

  export(kind) {
    if (kind === 'json') { download('ridgeline-compare.json', JSON.stringify(this.points, null, 2), 'application/json'); return; }
    const cols = ['index', 'modelId', 'hardwareId', 'batch', 'promptTokens', 'generatedTokens', 'weightsFormat', 'ttftSeconds', 'tpotMeanSeconds', 'decodeTokensPerSecondTotal', 'usdPerMillionOutputTokens', 'joulesPerOutputToken', 'gCo2ePerMillionOutputTokens', 'fits', 'spilled', 'bound', 'bottleneckOp'];
    download('ridgeline-compare.csv', toCsv(cols, this.rows().map((r) => cols.map((c) => r[c]))), 'text/csv');
  }
}
