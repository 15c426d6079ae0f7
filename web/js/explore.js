// The Explore view: a design space (a base part and axes of hypothetical
// hardware and deployment), objectives and constraints, sent as one Explore
// stream; an objective-vs-objective scatter with the exact joint Pareto
// front highlighted, and the table of front points.
import { stream, loadCatalogs, ApiError } from './api.js';
import { seconds, toCsv, download } from './format.js';
import { paretoScatter } from './scatter.js';
import { sortableTable, fieldFor } from './table.js';
import { fitsText } from './spill.js';
import { speculativeOption, speculativeControls, SPECULATIVE_FIELDS } from './analyze.js';

const AXES = ['bandwidth_gbs', 'peak_tflops', 'peak_tflops.fp8', 'capacity_gb', 'sram_mb', 'sram_bandwidth_gbs', 'tdp_w',
  'price_usd', 'interconnect_gbs', 'pim_bandwidth_gbs', 'pim_tflops', 'bandwidth_x', 'peak_x', 'capacity_x', 'sram_x',
  'sram_bandwidth_x', 'tdp_x', 'price_x', 'interconnect_x', 'pim_bandwidth_x', 'pim_x', 'batch', 'prompt', 'gen',
  'weights', 'activations', 'kv', 'tensor_parallel', 'speculative_tokens', 'acceptance_rate'];
// Metric -> its natural direction and how a person reads it (docs/explore.md).
const METRICS = {
  decode_tok_s: ['max', 'decode tok/s per sequence'],
  decode_tok_s_total: ['max', 'decode tok/s (batch)'],
  prefill_tok_s: ['max', 'prefill tok/s'],
  ttft_ms: ['min', 'TTFT (ms)'],
  tpot_ms: ['min', 'TPOT (ms)'],
  e2e_ms: ['min', 'end-to-end (ms)'],
  j_per_token: ['min', 'J / token'],
  usd_per_mtoken: ['min', '$ / Mtoken'],
  gco2_per_mtoken: ['min', 'gCO₂e / Mtoken'],
  price_usd: ['min', 'price ($)'],
  power_w: ['min', 'power (W)'],
  gbs_per_w: ['max', 'GB/s per W'],
  tflops_per_w: ['max', 'TFLOPS per W'],
};
// The chart draws every point up to this many grid points; a larger space
// streams (and draws) its front only.
const MAX_DRAWN = 20000;

const DEFAULTS = {
  // Formats as `ridgeline explore` defaults them (--weights, --activations,
  // --kv: bf16 each).
  model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', batch: '1', prompt: '1024', gen: '256', weights: 'bf16', act: 'bf16', kv: 'bf16',
  spec: '', acc: '0.7',
  vary: 'batch=1,2,4,8,16,32,64,128,256;bandwidth_gbs=1000:8000:4',
  objectives: 'decode_tok_s:max,usd_per_mtoken:min',
  constraints: 'tpot_ms<=50',
  x: '0', y: '1',
};
// The form's plain controls (URL key = control name).
const CONTROLS = ['model', 'hardware', 'batch', 'prompt', 'gen', 'weights', 'act', 'kv', 'spec', 'acc', 'constraints'];
const FIELDS = [
  { key: 'model', paths: ['model'] },
  { key: 'hardware', paths: ['hardware'] },
  { key: 'batch', paths: ['workload.batch'] },
  { key: 'prompt', paths: ['workload.prompt_tokens'] },
  { key: 'gen', paths: ['workload.generated_tokens'] },
  { key: 'weights', paths: ['formats', 'formats.weights'] },
  { key: 'act', paths: ['formats.activations'] },
  { key: 'kv', paths: ['formats.kv_cache'] },
  ...SPECULATIVE_FIELDS,
  { key: 'constraints', paths: ['constraints'] },
];

const TEMPLATE = `
<form class="controls" autocomplete="off" onsubmit="return false">
  <label>Model <select name="model"></select></label>
  <div class="field-error" data-for="model"></div>
  <label>Base hardware <select name="hardware"></select></label>
  <div class="field-error" data-for="hardware"></div>
  <div class="row">
    <label>Batch <input name="batch" type="number"></label>
    <label>Prompt <input name="prompt" type="number"></label>
    <label>Generated <input name="gen" type="number"></label>
  </div>
  <div class="field-error" data-for="batch"></div>
  <div class="field-error" data-for="prompt"></div>
  <div class="field-error" data-for="gen"></div>
  <div class="row">
    <label>Weights <input name="weights" list="explore-formats"></label>
    <label>Activations <input name="act" list="explore-formats"></label>
    <label>KV cache <input name="kv" list="explore-formats"></label>
  </div>
  <div class="field-error" data-for="weights"></div>
  <div class="field-error" data-for="act"></div>
  <div class="field-error" data-for="kv"></div>
  ${speculativeControls('row')}
  <h3>Axes <span class="hint">values: a,b,c or lo:hi:n (log-spaced)</span></h3>
  <div data-role="axes"></div>
  <button type="button" class="small" data-role="add-axis">+ axis</button>
  <h3>Objectives <span class="hint">2 to 6, jointly</span></h3>
  <div data-role="objectives"></div>
  <button type="button" class="small" data-role="add-objective">+ objective</button>
  <label>Constraints <span class="hint">comma-separated: tpot_ms&lt;=50, fits</span><input name="constraints"></label>
  <div class="field-error" data-for="constraints"></div>
  <datalist id="explore-axes">${AXES.map((a) => `<option value="${a}">`).join('')}</datalist>
  <datalist id="explore-metrics">${Object.keys(METRICS).map((m) => `<option value="${m}">`).join('')}</datalist>
  <datalist id="explore-formats">${['bf16', 'fp16', 'fp32', 'fp8', 'fp8-e5m2', 'int8', 'int4', 'int4-g128', 'int4-g32', 'nvfp4', 'mxfp4', 'w4a16'].map((f) => `<option value="${f}">`).join('')}</datalist>
  <div class="general-error" data-for=""></div>
  <div class="buttons">
    <button type="button" class="small primary" data-role="run">Explore</button>
    <button type="button" class="small" data-export="csv">Export CSV</button>
    <button type="button" class="small" data-export="json">Export JSON</button>
    <span class="status" data-role="status"></span>
  </div>
</form>
<div class="results">
  <div class="card wide"><h2>Summary <span class="hint" data-role="subtitle"></span></h2><div class="summary" data-role="summary"></div>
    <p class="warnings" data-role="note"></p></div>
  <div class="card wide"><h2>Objectives
      <label class="inline">x <select data-role="x"></select></label>
      <label class="inline">y <select data-role="y"></select></label>
      <span class="hint">hover a point</span></h2>
    <div data-role="scatter"></div>
    <div class="legend"><span><i class="swatch front"></i>Pareto front (all objectives jointly)</span><span><i class="swatch feasible"></i>feasible, dominated</span><span><i class="swatch infeasible"></i>infeasible (constraint or memory)</span></div></div>
  <div class="card wide"><h2>Front points <span class="hint">click a column to sort</span></h2><div class="table-wrap"><table class="data" data-role="front"></table></div></div>
</div>`;

function parseList(text, sep) {
  return (text || '').split(sep).map((s) => s.trim()).filter(Boolean);
}

// Grid points of the axes as written (before de-duplication), or Infinity
// when a value does not parse (the server then says why).
function gridSize(vary) {
  let n = 1;
  for (const spec of vary) {
    const values = spec.slice(spec.indexOf('=') + 1);
    const range = /^[^:]+:[^:]+:(\d+)$/.exec(values);
    n *= range ? Number(range[1]) : values.split(',').length;
  }
  return n;
}

// 4 significant digits, trailing zeros dropped (8000, 0.04829, 527.3).
const num4 = (v) => (Number.isFinite(v) ? String(Number(Number(v).toPrecision(4))) : '–');

export class ExploreView {
  constructor(root, onState) {
    this.root = root;
    this.onState = onState;
    root.innerHTML = TEMPLATE;
    this.form = root.querySelector('form');
    this.messages = [];
    this.seq = 0;
    this.sort = null;
    this.form.addEventListener('change', () => this.schedule());
    root.querySelector('[data-role=run]').addEventListener('click', () => this.run());
    root.querySelector('[data-role=add-axis]').addEventListener('click', () => { this.addAxis('', ''); });
    root.querySelector('[data-role=add-objective]').addEventListener('click', () => { this.addObjective('j_per_token', 'min'); this.schedule(); });
    for (const role of ['x', 'y']) {
      root.querySelector(`[data-role=${role}]`).addEventListener('change', (e) => {
        this.axisChoice[role] = Number(e.target.value);
        this.onState(this.state());
        this.draw();
      });
    }
    root.querySelectorAll('[data-export]').forEach((b) => b.addEventListener('click', () => this.export(b.dataset.export)));
  }

  async init(state) {
    const { models, hardware } = await loadCatalogs();
    const s = Object.assign({}, DEFAULTS, state);
    this.form.elements.model.innerHTML = models.map((x) => `<option value="${x.id}">${x.id}</option>`).join('');
    this.form.elements.hardware.innerHTML = hardware.map((x) => `<option value="${x.id}">${x.displayName || x.id}</option>`).join('');
    for (const k of CONTROLS) this.form.elements[k].value = s[k];
    for (const spec of parseList(s.vary, ';')) {
      const eq = spec.indexOf('=');
      this.addAxis(eq < 0 ? spec : spec.slice(0, eq), eq < 0 ? '' : spec.slice(eq + 1));
    }
    for (const spec of parseList(s.objectives, ',')) {
      const [metric, dir] = spec.split(':');
      this.addObjective(metric, dir || (METRICS[metric] || ['min'])[0]);
    }
    this.axisChoice = { x: Number(s.x) || 0, y: s.y === undefined ? 1 : Number(s.y) };
    await this.run();
  }

  addAxis(name, values) {
    const list = this.root.querySelector('[data-role=axes]');
    const row = document.createElement('div');
    row.className = 'spec-row axis-row';
    row.innerHTML = `<input name="axis-name" list="explore-axes" placeholder="axis">
      <input name="axis-values" placeholder="values">
      <button type="button" class="small remove" title="remove">×</button>
      <div class="field-error"></div>`;
    row.querySelector('[name=axis-name]').value = name;
    row.querySelector('[name=axis-values]').value = values;
    row.querySelector('.remove').addEventListener('click', () => { row.remove(); this.schedule(); });
    list.appendChild(row);
  }

  addObjective(metric, dir) {
    const list = this.root.querySelector('[data-role=objectives]');
    const row = document.createElement('div');
    row.className = 'spec-row objective-row';
    row.innerHTML = `<input name="objective-metric" list="explore-metrics">
      <select name="objective-dir"><option value="max">max</option><option value="min">min</option></select>
      <button type="button" class="small remove" title="remove">×</button>
      <div class="field-error"></div>`;
    row.querySelector('input').value = metric;
    row.querySelector('select').value = dir === 'max' ? 'max' : 'min';
    row.querySelector('input').addEventListener('change', (e) => {
      const m = METRICS[e.target.value.trim()];
      if (m) row.querySelector('select').value = m[0];
    });
    row.querySelector('.remove').addEventListener('click', () => { row.remove(); this.schedule(); });
    list.appendChild(row);
  }

  vary() {
    return [...this.root.querySelectorAll('.axis-row')].map((r) =>
      `${r.querySelector('[name=axis-name]').value.trim()}=${r.querySelector('[name=axis-values]').value.replace(/\s/g, '')}`)
      .filter((s) => s !== '=');
  }

  objectives() {
    return [...this.root.querySelectorAll('.objective-row')].map((r) =>
      `${r.querySelector('input').value.trim()}:${r.querySelector('select').value}`);
  }

  values() {
    const out = {};
    for (const k of CONTROLS) out[k] = this.form.elements[k].value.trim();
    out.vary = this.vary().join(';');
    out.objectives = this.objectives().join(',');
    return out;
  }

  state() {
    const c = this.axisChoice || { x: 0, y: 1 };
    return Object.assign({ view: 'explore' }, this.values(), { x: String(c.x), y: String(c.y) });
  }

  request() {
    const s = this.values();
    const vary = this.vary();
    const num = (v) => (v === '' ? undefined : v);
    return {
      model: { catalogId: s.model },
      hardware: { platformId: s.hardware },
      workload: { batch: num(s.batch), promptTokens: num(s.prompt), generatedTokens: num(s.gen) },
      formats: { weights: s.weights, activations: s.act, kvCache: s.kv },
      options: { speculative: speculativeOption(s.spec, s.acc) },
      vary,
      objectives: this.objectives(),
      constraints: parseList(s.constraints, ','),
      includeAll: gridSize(vary) <= MAX_DRAWN,
    };
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), 250);
  }

  setStatus(text, error = false) {
    const st = this.root.querySelector('[data-role=status]');
    st.textContent = text;
    st.classList.toggle('error', error);
  }

  clearErrors() {
    this.root.querySelectorAll('.field-error, .general-error').forEach((e) => { e.textContent = ''; });
    this.form.querySelectorAll('.invalid').forEach((e) => e.classList.remove('invalid'));
  }

  // The server's message next to what its field path names: an axis row
  // (vary[1]), an objective row (objectives[0]) or a form control.
  showError(err) {
    const m = /^(vary|objectives)\[(\d+)\]/.exec(err.field || '');
    let target = null;
    let control = null;
    if (m) {
      const row = this.root.querySelectorAll(m[1] === 'vary' ? '.axis-row' : '.objective-row')[Number(m[2])];
      if (row) {
        target = row.querySelector('.field-error');
        control = row;  // the name or the values: both are marked
      }
    } else if (err.field) {
      const f = fieldFor(FIELDS, err.field);
      if (f) {
        target = this.root.querySelector(`.field-error[data-for="${f.key}"]`);
        control = this.form.elements[f.key];
      }
    }
    (target || this.root.querySelector('.general-error')).textContent = err.message;
    if (control && control.classList.contains('spec-row')) control.querySelectorAll('input').forEach((i) => i.classList.add('invalid'));
    else if (control) control.classList.add('invalid');
    this.setStatus(err.code || 'error', true);
  }

  async run() {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    if (this.abort) this.abort.abort();  // the server stops the old stream
    const abort = (this.abort = new AbortController());
    this.onState(this.state());
    const req = this.request();
    this.setStatus('exploring…');
    const messages = [];
    try {
      await stream('Explore', req, (msg) => {
        if (msg.progress) {
          if (seq === this.seq) this.setStatus(`${msg.progress.pointsDone} / ${msg.progress.pointsTotal} points`);
        } else {
          messages.push(msg);
        }
      }, { signal: abort.signal });
    } catch (err) {
      if (seq !== this.seq) return;
      this.clearErrors();
      this.showError(err instanceof ApiError ? err : { message: String(err) });
      this.root.dataset.state = 'error';
      return;
    }
    if (seq !== this.seq) return;
    this.clearErrors();
    this.messages = messages;
    this.includeAll = req.includeAll;
    this.objectiveSpecs = req.objectives;
    this.setStatus('');
    this.render();
    this.root.dataset.state = 'ready';
    this.root.dataset.seq = String(seq);
  }

  points() { return this.messages.filter((m) => m.point).map((m) => m.point); }
  summary() { return (this.messages.find((m) => m.summary) || {}).summary || {}; }

  // The scatter again at the current width (main.js calls it on resize).
  redraw() { if (this.messages.length) this.draw(); }

  render() {
    const sum = this.summary();
    const objs = sum.objectiveNames || [];
    const dirs = this.objectiveSpecs.map((o) => o.split(':')[1]);
    const metrics = [
      ['evaluated', 'points evaluated', `${sum.evaluated} of ${sum.totalPoints}`],
      ['feasible', 'feasible', sum.feasible],
      ['front', 'on the front', sum.frontSize],
      ['hypervolume', `hypervolume${sum.hypervolumeExact ? '' : ' (Monte-Carlo)'}`, num4(sum.hypervolume)],
      ['seconds', 'server time', seconds(sum.seconds)],
    ];
    this.root.querySelector('[data-role=summary]').innerHTML = metrics.map(([id, k, v]) =>
      `<div class="metric" data-metric="${id}"><div class="k">${k}</div><div class="v">${v ?? '–'}</div></div>`).join('');
    this.root.querySelector('[data-role=subtitle]').textContent =
      `${this.form.elements.model.value} around ${this.form.elements.hardware.value}: ${(sum.axisNames || []).join(' × ')}`;
    this.root.querySelector('[data-role=note]').textContent = this.includeAll ? '' :
      `More than ${MAX_DRAWN.toLocaleString()} grid points: only the front was streamed and is drawn.`;
    const options = objs.map((o, i) => `<option value="${i}">${o}:${dirs[i]} — ${(METRICS[o] || [0, o])[1]}</option>`).join('');
    const c = this.axisChoice;
    if (!(c.x < objs.length)) c.x = 0;
    if (!(c.y < objs.length) || c.y === c.x) c.y = c.x === 0 ? 1 : 0;
    for (const role of ['x', 'y']) {
      const sel = this.root.querySelector(`[data-role=${role}]`);
      sel.innerHTML = options;
      sel.value = String(c[role]);
    }
    this.draw();
    this.drawTable();
  }

  draw() {
    const c = this.axisChoice;
    c.x = Number(this.root.querySelector('[data-role=x]').value);
    c.y = Number(this.root.querySelector('[data-role=y]').value);
    const sum = this.summary();
    const objs = sum.objectiveNames || [];
    const axes = sum.axisNames || [];
    const dirs = this.objectiveSpecs.map((o) => o.split(':')[1]);
    const label = (i) => `${(METRICS[objs[i]] || [0, objs[i]])[1]} — ${dirs[i]}`;
    const pts = this.points().map((p) => ({
      x: p.objectives[c.x], y: p.objectives[c.y], id: p.index,
      kind: p.pareto ? 'front' : p.feasible ? 'feasible' : 'infeasible',
      tip: [`point #${p.index}${p.pareto ? ' — on the front' : p.feasible ? '' : ' — infeasible'}`,
        ...axes.map((a, i) => `${a.padEnd(18)} ${p.axisValues[i]}`),
        ...objs.map((o, i) => `${o.padEnd(18)} ${num4(p.objectives[i])}`),
        `${'fits'.padEnd(18)} ${fitsText(p.fits, p.spilled === true)}`].join('\n'),
    }));
    const el = this.root.querySelector('[data-role=scatter]');
    // The 2-D staircase is the front only when there are two objectives.
    const n = paretoScatter(el, pts, { xLabel: label(c.x), yLabel: label(c.y),
      staircase: objs.length === 2 ? { xMax: dirs[c.x] === 'max' } : null });
    el.dataset.points = String(n);
  }

  drawTable() {
    const sum = this.summary();
    const objs = sum.objectiveNames || [];
    const axes = sum.axisNames || [];
    const dirs = this.objectiveSpecs.map((o) => o.split(':')[1]);
    const columns = [{ key: 'index', title: '#' },
      ...axes.map((a, i) => ({ key: `a${i}`, title: a, fmt: (v) => (typeof v === 'number' ? num4(v) : v) })),
      ...objs.map((o, i) => ({ key: `o${i}`, title: `${o}:${dirs[i]}`, fmt: num4 })),
      { key: 'fits', title: 'fits', text: true }];
    const rows = this.points().filter((p) => p.pareto).map((p) => {
      const r = { index: Number(p.index), rowId: p.index };
      p.axisValues.forEach((v, i) => { r[`a${i}`] = v !== '' && Number.isFinite(Number(v)) ? Number(v) : v; });
      p.objectives.forEach((v, i) => { r[`o${i}`] = v; });
      r.fits = fitsText(p.fits, p.spilled === true);
      return r;
    });
    sortableTable(this.root.querySelector('[data-role=front]'), columns, rows, this.sort,
      (sort) => { this.sort = sort; this.drawTable(); });
  }

  // CSV as `ridgeline explore [--all] --format csv` writes it: one column
  // per axis, one per objective (direction included), feasible, fits,
  // spilled (when the server reports it per point), pareto (1/0), and with
  // every point the violation.
  export(kind) {
    const sum = this.summary();
    if (kind === 'json') {
      download('ridgeline-explore.json', JSON.stringify(this.messages, null, 2), 'application/json');
      return;
    }
    const pts = this.points();
    const spilled = pts.some((p) => 'spilled' in p);
    // Every point streamed (include_all): the violation too, as `--all` adds it.
    const all = this.includeAll;
    const headers = [...(sum.axisNames || []), ...this.objectiveSpecs, 'feasible', 'fits', ...(spilled ? ['spilled'] : []), 'pareto',
      ...(all ? ['violation'] : []), 'ties'];
    // ties: on a front row the points sharing its objectives (the RPC's
    // uint64 arrives as a string), empty off the front, as the CLI prints.
    const rows = pts.map((p) => [...p.axisValues, ...p.objectives, p.feasible ? 1 : 0, p.fits ? 1 : 0, ...(spilled ? [p.spilled ? 1 : 0] : []),
      p.pareto ? 1 : 0, ...(all ? [p.violation] : []), p.pareto ? Number(p.ties || 1) : '']);
    download('ridgeline-explore.csv', toCsv(headers, rows), 'text/csv');
  }
}

