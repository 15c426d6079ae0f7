// The Analyze view: one scenario, recomputed as the form changes.
import { rpc, stream, loadCatalogs, getHardware, ApiError } from './api.js';
import { si, seconds, bytes, fixed, toCsv, download } from './format.js';
import { roofline, opBars, memory, lines, opLabel } from './charts.js';
import { spills, fitsText, spillWhere } from './spill.js';

const FORMATS = ['bf16', 'fp16', 'fp32', 'fp8', 'fp8-e5m2', 'int8', 'int4', 'int4-g128', 'int4-g32', 'nvfp4', 'mxfp4', 'gguf-q4_0', 'gguf-q8_0', 'gguf-q4_k_m', 'w4a16'];
const FRAMEWORKS = ['vllm-rocm', 'aiter-ck', 'flashinfer', 'gaudi-sw', 'llama.cpp-cuda', 'llama.cpp-metal', 'qualcomm-genie-qnn', 'tensorrt-llm'];
// How many decode steps the timeline samples (one Sweep over generated
// lengths; each point's last step is the step at that KV length).
const TIMELINE_SAMPLES = 12;

// The form's controls: URL key, request field path(s) the server names in
// its errors, and default.
const FIELDS = [
  { key: 'model', paths: ['model'], def: 'llama-3-8b' },
  { key: 'config', paths: ['model.hf_config_json'], def: '' },
  { key: 'hardware', paths: ['hardware'], def: 'nvidia-h100-sxm-80gb' },
  { key: 'batch', paths: ['workload.batch'], def: '1' },
  { key: 'prompt', paths: ['workload.prompt_tokens'], def: '1024' },
  { key: 'gen', paths: ['workload.generated_tokens'], def: '128' },
  { key: 'weights', paths: ['formats.weights'], def: 'bf16' },
  { key: 'act', paths: ['formats.activations'], def: 'bf16' },
  { key: 'kv', paths: ['formats.kv_cache'], def: 'bf16' },
  { key: 'tp', paths: ['parallelism.tensor_parallel', 'parallelism'], def: '1' },
  { key: 'framework', paths: ['calibration'], def: '' },
  { key: 'spec', paths: ['options.speculative'], def: '' },
  { key: 'acc', paths: ['options.speculative.acceptance_rate', 'options.speculative.acceptance_by_position'], def: '0.7' },
];

// The speculative-decoding controls every view shares (method as
// --speculative spells it, acceptance as --acceptance) in a `row` (three
// columns: the method spans two) or a `row2`, and their field paths.
export function speculativeControls(rowClass) {
  const span = rowClass === 'row' ? ' style="grid-column: span 2"' : '';
  return `<div class="${rowClass}">
    <label${span}>Speculative decoding <input name="spec" placeholder="off, or draft:llama-3.2-1b:4 / mtp:1 / eagle:3"></label>
    <label>Acceptance <input name="acc" placeholder="0.7 or 0.8,0.6,0.4"></label>
  </div>
  <div class="field-error" data-for="spec"></div>
  <div class="field-error" data-for="acc"></div>`;
}
export const SPECULATIVE_FIELDS = [
  { key: 'spec', paths: ['options.speculative'] },
  { key: 'acc', paths: ['options.speculative.acceptance_rate', 'options.speculative.acceptance_by_position'] },
];

// "draft:MODEL:k", "mtp:k", "eagle:k" (as --speculative) into the request's
// options.speculative; the service checks k and the acceptance rate.
export function speculativeOption(text, acceptance) {
  const t = (text || '').trim();
  if (!t || t === 'none') return undefined;
  const parts = t.split(':');
  const out = { method: parts[0], tokens: Number(parts[parts.length - 1]) };
  if (parts[0] === 'draft') out.draftModel = parts.slice(1, -1).join(':');
  const rates = String(acceptance ?? '').split(',').filter((x) => x.trim() !== '').map(Number);
  if (rates.length > 1) out.acceptanceByPosition = rates;
  else if (rates.length === 1) out.acceptanceRate = rates[0];
  return out;
}

function fieldFor(path) {
  let best = null;
  for (const f of FIELDS) {
    for (const p of f.paths) {
      if ((path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)) && (!best || p.length > best.len)) {
        best = { f, len: p.length };
      }
    }
  }
  return best && best.f;
}

const TEMPLATE = `
<form class="controls" autocomplete="off" onsubmit="return false">
  <label>Model <select name="model"></select></label>
  <label>or a pasted Hugging Face config.json <textarea name="config" placeholder='{"architectures": ["LlamaForCausalLM"], ...}'></textarea></label>
  <div class="field-error" data-for="config"></div>
  <div class="field-error" data-for="model"></div>
  <label>Hardware <select name="hardware"></select></label>
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
    <label>Weights <input name="weights" list="formats-list"></label>
    <label>Activations <input name="act" list="formats-list"></label>
    <label>KV cache <input name="kv" list="formats-list"></label>
  </div>
  <div class="field-error" data-for="weights"></div>
  <div class="field-error" data-for="act"></div>
  <div class="field-error" data-for="kv"></div>
  <div class="row">
    <label>Tensor parallel <input name="tp" type="number"></label>
    <label style="grid-column: span 2">Calibration framework <input name="framework" list="frameworks-list" placeholder="none: pure roofline"></label>
  </div>
  <div class="field-error" data-for="tp"></div>
  <div class="field-error" data-for="framework"></div>
${speculativeControls('row')}
  <datalist id="formats-list">${FORMATS.map((f) => `<option value="${f}">`).join('')}</datalist>
  <datalist id="frameworks-list">${FRAMEWORKS.map((f) => `<option value="${f}">`).join('')}</datalist>
  <div class="general-error" data-for=""></div>
  <div class="buttons">
    <button type="button" class="small" data-export="csv">Export CSV</button>
    <button type="button" class="small" data-export="json">Export JSON</button>
    <span class="status" data-role="status"></span>
  </div>
</form>
<div class="results">
  <div class="card wide"><h2>Summary <span class="hint" data-role="subtitle"></span></h2><div class="summary" data-role="summary"></div>
    <p class="warnings" data-role="warnings"></p></div>
  <div class="card wide"><h2>Roofline <span class="hint">every op of prefill and decode; hover a point</span></h2>
    <div data-role="roofline"></div>
    <div class="legend"><span><i class="swatch" style="background:#dd6b20"></i>prefill op</span><span><i class="swatch" style="background:#2b6cb0"></i>decode op (all steps)</span><span>◆ ridge point (tier × matmul math)</span><span>— — compute ceiling per math type</span></div></div>
  <div class="card wide"><h2>Bottleneck and suggestions</h2><p class="bottleneck" data-role="bottleneck"></p><ul class="suggestions" data-role="suggestions"></ul></div>
  <div class="card wide"><h2>Per-op <select data-role="metric"><option value="time">time</option><option value="flops">FLOPs</option><option value="bytes">bytes</option></select>
    <span class="hint">stacked: prefill + decode (all steps)</span></h2><div data-role="bars"></div></div>
  <div class="card"><h2>Memory placement per tier</h2><div data-role="memory"></div><div class="legend" data-role="memory-legend"></div></div>
  <div class="card"><h2>Decode timeline <span class="hint">TPOT of sampled steps as the KV cache grows; flat line: the mean</span></h2><div data-role="timeline"></div></div>
</div>`;

export function analyzeRequest(s) {
  const num = (v) => (v === '' || v === undefined ? undefined : v);
  const req = {
    model: s.config ? { hfConfigJson: s.config, id: 'pasted-config' } : { catalogId: s.model },
    hardware: { platformId: s.hardware },
    workload: { batch: num(s.batch), promptTokens: num(s.prompt), generatedTokens: num(s.gen) },
    formats: { weights: s.weights, activations: s.act, kvCache: s.kv },
    parallelism: { tensorParallel: num(s.tp) },
  };
  if (s.framework) req.calibration = { framework: s.framework };
  const speculative = speculativeOption(s.spec, s.acc);
  if (speculative) req.options = { speculative };
  return req;
}

export function opsCsv(result) {
  const headers = ['phase', 'op', 'layer_group', 'layers', 'math', 'flops', 'bytes', 'intensity', 'compute_seconds', 'memory_seconds', 'overhead_seconds', 'seconds', 'bound', 'attained_flops_per_second'];
  const rows = [];
  for (const phase of ['prefill', 'decode']) {
    for (const o of (result[phase] && result[phase].ops) || []) {
      rows.push([phase, o.kind, o.layerGroup, o.layers, o.math, o.flops, o.bytes, o.intensity, o.computeSeconds, o.memorySeconds, o.overheadSeconds, o.seconds, o.bound, o.attainedFlopsPerSecond]);
    }
  }
  return toCsv(headers, rows);
}

export class AnalyzeView {
  constructor(root, onState) {
    this.root = root;
    this.onState = onState;
    root.innerHTML = TEMPLATE;
    this.form = root.querySelector('form');
    this.seq = 0;
    this.response = null;
    this.timer = null;
    this.form.addEventListener('input', () => this.schedule());
    this.form.addEventListener('change', () => this.schedule());
    root.querySelector('[data-role=metric]').addEventListener('change', () => this.drawBars());
    root.querySelectorAll('[data-export]').forEach((b) => b.addEventListener('click', () => this.export(b.dataset.export)));
  }

  async init(state) {
    const { models, hardware } = await loadCatalogs();
    const m = this.form.elements.model;
    m.innerHTML = models.map((x) => `<option value="${x.id}">${x.id}</option>`).join('');
    const h = this.form.elements.hardware;
    h.innerHTML = hardware.map((x) => `<option value="${x.id}">${x.displayName || x.id}</option>`).join('');
    for (const f of FIELDS) this.form.elements[f.key].value = state[f.key] ?? f.def;
    await this.run();
  }

  values() {
    const out = {};
    for (const f of FIELDS) out[f.key] = this.form.elements[f.key].value.trim();
    return out;
  }

  state() { return Object.assign({ view: 'analyze' }, this.values()); }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), 200);
  }

  setStatus(text, error = false) {
    const s = this.root.querySelector('[data-role=status]');
    s.textContent = text;
    s.classList.toggle('error', error);
  }

  clearErrors() {
    this.root.querySelectorAll('.field-error, .general-error').forEach((e) => { e.textContent = ''; });
    this.form.querySelectorAll('.invalid').forEach((e) => e.classList.remove('invalid'));
  }

  showError(err) {
    const f = err.field ? fieldFor(err.field) : null;
    const target = f && this.root.querySelector(`.field-error[data-for="${f.key}"]`);
    (target || this.root.querySelector('.general-error')).textContent = err.message;
    if (f) this.form.elements[f.key].classList.add('invalid');
    this.setStatus(err.code || 'error', true);
  }

  async run() {
    const seq = ++this.seq;
    const s = this.values();
    this.onState(this.state());
    this.setStatus('computing…');
    let resp;
    let hw;
    try {
      // Analyze first: its error names the request field (GetHardware's would
      // name its own `id`).
      resp = await rpc('Analyze', analyzeRequest(s));
      hw = await getHardware(s.hardware);
    } catch (err) {
      if (seq !== this.seq) return;
      this.clearErrors();
      this.showError(err instanceof ApiError ? err : { message: String(err) });
      this.root.dataset.state = 'error';
      return;
    }
    if (seq !== this.seq) return;
    this.clearErrors();
    this.response = resp;
    this.hardware = hw;
    this.render(resp, hw);
    this.setStatus('');
    this.root.dataset.state = 'ready';
    this.root.dataset.seq = String(seq);
    this.timeline(s, seq);
  }

  render(resp, hw) {
    const r = resp.result;
    const e = r.economy || {};
    const spilled = spills(r.memory, hw);
    const metrics = [
      ['ttft', 'TTFT', r.ttftSeconds, seconds],
      ['tpot', 'TPOT (mean)', r.tpotMeanSeconds, seconds],
      ['e2e', 'end-to-end', r.e2eSeconds, seconds],
      ['decode-tps', 'decode tok/s (total)', r.decodeTokensPerSecondTotal, (v) => si(v)],
      ['decode-tps-seq', 'decode tok/s per sequence', r.decodeTokensPerSecondPerSequence, (v) => si(v)],
      ['prefill-tps', 'prefill tok/s', r.prefillTokensPerSecond, (v) => si(v)],
      ['usd', '$ / Mtoken', e.usdPerMillionOutputTokens, (v) => fixed(v, 3)],
      ['cost-basis', 'cost basis', e.costBasis || undefined, (v) => v],
      ['joules', 'J / token', e.joulesPerOutputToken, (v) => fixed(v, 4)],
      ['co2', 'gCO₂e / Mtoken', e.gCo2ePerMillionOutputTokens, (v) => si(v)],
      ['fits', 'fits in memory', fitsText(r.memory.fits, spilled), (v) => v],
      ['math', 'matmul math', r.matmulMath, (v) => v],
      ['ridge', 'ridge point (FLOP/B)', r.ridgePointFlopsPerByte, (v) => v.toPrecision(4)],
    ];
    if (r.speculative) {
      const x = r.speculative;
      metrics.push(
        ['spec-tokens', `accepted tokens / step (${x.method})`, x.acceptedTokensPerStep, (v) => fixed(v, 3)],
        ['spec-split', 'draft vs verify / step', x.verifySecondsPerStep, () => `${seconds(x.draftSecondsPerStep || 0)} + ${seconds(x.verifySecondsPerStep || 0)}`],
        ['spec-speedup', 'speed-up vs plain decode', x.speedup, (v) => `${fixed(v, 2)}×`]);
    }
    this.root.querySelector('[data-role=summary]').innerHTML = metrics.map(([id, k, v, f]) =>
      `<div class="metric" data-metric="${id}" data-value="${v === undefined ? '' : v}"><div class="k">${k}</div><div class="v">${v === undefined ? '–' : f(v)}</div></div>`).join('');
    const fitsEl = this.root.querySelector('[data-metric=fits]');
    fitsEl.dataset.spilled = spilled.map((x) => x.operand).join(',');
    fitsEl.title = spillWhere(spilled);
    fitsEl.classList.toggle('long', spilled.length > 0);  // two cells wide
    const cal = resp.calibration && resp.calibration.profileName;
    this.root.querySelector('[data-role=subtitle]').textContent =
      `${r.modelId} on ${r.hardwareId} — ${cal ? `calibrated (${cal})` : 'pure roofline: an upper bound on speed'}`;
    this.root.querySelector('[data-role=warnings]').textContent =
      [...(r.warnings || []), r.memory.notFitting, e.note].filter(Boolean).join(' · ');
    const n = roofline(this.root.querySelector('[data-role=roofline]'), hw, r);
    this.root.querySelector('[data-role=roofline]').dataset.points = String(n);
    this.drawBars();
    const legend = memory(this.root.querySelector('[data-role=memory]'), r.memory);
    this.root.querySelector('[data-role=memory-legend]').innerHTML =
      legend.map((l) => `<span><i class="swatch" style="background:${l.color}"></i>${l.name}</span>`).join('');
    const b = r.bottleneck || {};
    this.root.querySelector('[data-role=bottleneck]').textContent = b.text || '';
    this.root.querySelector('[data-role=suggestions]').innerHTML =
      (r.suggestions || []).map((x) => `<li data-kind="${x.kind}">${x.text}</li>`).join('') || '<li class="muted">none</li>';
  }

  drawBars() {
    if (!this.response) return;
    opBars(this.root.querySelector('[data-role=bars]'), this.response.result,
      this.root.querySelector('[data-role=metric]').value);
  }

  // TPOT of decode steps at KV lengths prompt+1 .. prompt+gen: a Sweep over
  // generated lengths whose points each report their last step.
  async timeline(s, seq) {
    const el = this.root.querySelector('[data-role=timeline]');
    const r = this.response.result;
    this.timelinePoints = null;
    const gen = Number(s.gen || 0);
    if (gen < 1) { el.innerHTML = '<p class="muted">no decode steps (gen = 0)</p>'; return; }
    const n = Math.min(TIMELINE_SAMPLES, gen);
    const gens = [...new Set(Array.from({ length: n }, (_, i) => Math.max(1, Math.round(((i + 1) * gen) / n))))];
    const base = analyzeRequest(s);
    const req = {
      models: [base.model], hardware: [base.hardware], formats: [base.formats],
      batchSizes: base.workload.batch ? [base.workload.batch] : [],
      promptTokens: base.workload.promptTokens ? [base.workload.promptTokens] : [],
      generatedTokens: gens, parallelism: base.parallelism, calibration: base.calibration, options: base.options,
      includeFullResult: true, resultView: 'ANALYSIS_VIEW_BASIC',
    };
    const pts = [{ x: Number(r.decodeFirstStep.kvLength), y: r.tpotFirstSeconds * 1e3 }];
    try {
      await stream('Sweep', req, (p) => {
        if (p.result) pts.push({ x: Number(p.result.decodeLastStep.kvLength), y: p.result.tpotLastSeconds * 1e3 });
      });
    } catch (err) { if (seq === this.seq) el.textContent = err.message; return; }
    if (seq !== this.seq) return;
    pts.sort((a, b) => a.x - b.x);
    this.timelinePoints = pts;
    this.drawTimeline();
    el.dataset.steps = String(pts.length);
  }

  drawTimeline() {
    const pts = this.timelinePoints;
    if (!pts || !this.response) return;
    const r = this.response.result;
    lines(this.root.querySelector('[data-role=timeline]'), [{ name: 'TPOT', points: pts }, { name: 'mean', points: [{ x: pts[0].x, y: r.tpotMeanSeconds * 1e3 }, { x: pts[pts.length - 1].x, y: r.tpotMeanSeconds * 1e3 }] }],
      { xLabel: 'KV length (tokens)', yLabel: 'TPOT (ms)', yFormat: (v) => v.toPrecision(4), yFromZero: false, width: 380, height: 260 });
  }

  // The charts again at the current width (main.js calls it on resize).
  redraw() {
    if (!this.response) return;
    this.render(this.response, this.hardware);
    this.drawTimeline();
  }

  export(kind) {
    if (!this.response) return;
    const r = this.response.result;
    const name = `ridgeline-analyze-${r.modelId}-${r.hardwareId}`;
    if (kind === 'csv') download(`${name}.csv`, opsCsv(r), 'text/csv');
    else download(`${name}.json`, JSON.stringify(this.response, null, 2), 'application/json');
  }
}

export { opLabel, bytes };
