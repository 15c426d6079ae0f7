// The Plan view: a traffic (rate, lengths), p90 SLOs and candidate
// hardware sent as one Plan call; the deployments in the server's order
// (meeting the SLO by $/Mtoken first), the cost / p90 e2e front, and the
// infeasible candidates with the reason for each.
import { loadCatalogs } from './api.js';
import { FormView } from './form_view.js';
import { seconds, fixed, si, toCsv, download } from './format.js';
import { paretoScatter } from './scatter.js';
import { sortableTable } from './table.js';
import { speculativeOption, speculativeControls, SPECULATIVE_FIELDS } from './analyze.js';

const DEFAULTS = {
  model: 'llama-3.1-70b', hardware: 'nvidia-h100-sxm-80gb,nvidia-h200-sxm-141gb,amd-mi300x,nvidia-b200-180gb',
  rate: '20', prompt: '2048', gen: '512', ttft: '1000', tpot: '50', tp: '', formats: '', framework: '', requests: '',
  spec: '', acc: '0.7',
};
const FRAMEWORKS = ['vllm', 'vllm-rocm', 'tensorrt-llm', 'flashinfer', 'aiter-ck', 'gaudi-sw', 'llama.cpp-cuda', 'llama.cpp-metal'];
const FIELDS = [
  { key: 'model', paths: ['model'] },
  { key: 'hardware', paths: ['candidates.hardware', 'candidates'] },
  { key: 'rate', paths: ['traffic.rate', 'traffic'] },
  { key: 'prompt', paths: ['traffic.prompt_tokens'] },
  { key: 'gen', paths: ['traffic.generated_tokens'] },
  { key: 'ttft', paths: ['slo.ttft_p90_seconds', 'slo'] },
  { key: 'tpot', paths: ['slo.tpot_p90_seconds'] },
  { key: 'tp', paths: ['candidates.tensor_parallel'] },
  { key: 'formats', paths: ['candidates.formats'] },
  { key: 'framework', paths: ['candidates.calibration'] },
  { key: 'requests', paths: ['requests', 'simulation'] },
  ...SPECULATIVE_FIELDS,
];
const COLUMNS = [
  // The server's rank; ★ on the cost / latency front, ✗ SLO missed.
  { key: 'rank', title: '#', fmt: (v, d) => `${v}${d.pareto ? ' ★' : ''}${d.meetsSlo ? '' : ' ✗'}` },
  { key: 'hardwareId', title: 'hardware', text: true },
  { key: 'tensorParallel', title: 'TP' },
  { key: 'pipelineParallel', title: 'PP' },
  { key: 'expertParallel', title: 'EP' },
  { key: 'formats', title: 'formats', text: true },
  { key: 'replicas', title: 'replicas' },
  { key: 'devices', title: 'devices' },
  { key: 'maxRatePerReplica', title: 'req/s/replica', fmt: (v) => fixed(v, 2) },
  { key: 'ttftP90Seconds', title: 'TTFT p90', fmt: seconds },
  { key: 'tpotP90Seconds', title: 'TPOT p90', fmt: seconds },
  { key: 'e2eP90Seconds', title: 'e2e p90', fmt: seconds },
  { key: 'usdPerMtoken', title: '$/Mtoken', fmt: (v) => fixed(v, 3) },
  { key: 'costBasis', title: 'basis', text: true, fmt: (v) => BASIS[v] || v },
  { key: 'joulesPerToken', title: 'J/token', fmt: (v) => fixed(v, 3) },
  { key: 'gCo2ePerMtoken', title: 'gCO₂e/Mtok', fmt: (v) => si(v) },
  { key: 'limitingResource', title: 'limit', text: true },
];
// Shown when a disaggregated row is ranked: the P/D split and the KV transfer.
const POOLS = [
  { key: 'mode', title: 'mode', text: true, fmt: (v) => v || 'aggregated' },
  { key: 'prefillHardwareId', title: 'prefill', text: true, fmt: (v, d) => (isDisagg(d) ? `${d.prefillReplicas} × ${v} TP ${d.prefillTensorParallel}` : '') },
  { key: 'decodeHardwareId', title: 'decode', text: true, fmt: (v, d) => (isDisagg(d) ? `${d.decodeReplicas} × ${v} TP ${d.decodeTensorParallel}` : '') },
  { key: 'kvTransferP90Seconds', title: 'KV transfer p90', fmt: (v, d) => (isDisagg(d) && v !== undefined ? seconds(v) : '') },
];
function isDisagg(d) { return d.mode === 'disaggregated'; }
const PROFILE = { key: 'profile', title: 'profile', text: true, fmt: (v) => v || 'roofline' };
const BASIS = { 'energy-only': 'ENERGY ONLY' };
// CSV columns as `ridgeline plan --format csv` names them, from the
// response's fields (times in ms there).
const CSV = [
  ['hardware', (d) => d.hardwareId], ['tensor_parallel', (d) => d.tensorParallel], ['formats', (d) => d.formats],
  ['replicas', (d) => d.replicas], ['devices', (d) => d.devices], ['max_rate_per_replica', (d) => d.maxRatePerReplica],
  ['ttft_p90_ms', (d) => d.ttftP90Seconds * 1e3], ['tpot_p90_ms', (d) => d.tpotP90Seconds * 1e3],
  ['e2e_p90_ms', (d) => d.e2eP90Seconds * 1e3], ['usd_per_mtoken', (d) => d.usdPerMtoken],
  ['cost_basis', (d) => d.costBasis], ['joules_per_token', (d) => d.joulesPerToken],
  ['g_co2e_per_mtoken', (d) => d.gCo2ePerMtoken], ['ttft_headroom', (d) => d.ttftHeadroom],
  ['tpot_headroom', (d) => d.tpotHeadroom], ['max_concurrency', (d) => d.maxConcurrency],
  ['kv_capacity_tokens', (d) => d.kvCapacityTokens],
  ['offline_output_tokens_per_second', (d) => d.offlineOutputTokensPerSecond],
  ['limiting_resource', (d) => d.limitingResource], ['meets_slo', (d) => (d.meetsSlo ? 1 : 0)],
  ['feasible', (d) => (d.feasible ? 1 : 0)], ['pareto', (d) => (d.pareto ? 1 : 0)], ['profile', (d) => d.profile],
  ['why', (d) => d.why],
  ['pipeline_parallel', (d) => Number(d.pipelineParallel) || 1], ['expert_parallel', (d) => Number(d.expertParallel) || 1],
  ['profile_fallback', (d) => d.profileFallback || ''],
  ['mode', (d) => d.mode || 'aggregated'],
  ['prefill_hardware', (d) => (isDisagg(d) ? d.prefillHardwareId : '')],
  ['prefill_tensor_parallel', (d) => (isDisagg(d) ? d.prefillTensorParallel : '')],
  ['prefill_replicas', (d) => (isDisagg(d) ? d.prefillReplicas : '')],
  ['decode_hardware', (d) => (isDisagg(d) ? d.decodeHardwareId : '')],
  ['decode_tensor_parallel', (d) => (isDisagg(d) ? d.decodeTensorParallel : '')],
  ['decode_replicas', (d) => (isDisagg(d) ? d.decodeReplicas : '')],
  ['kv_transfer_p90_ms', (d) => (isDisagg(d) && d.kvTransferP90Seconds !== undefined ? d.kvTransferP90Seconds * 1e3 : '')],
  // A calibrated deployment's devices on the pure roofline, and why it is
  // more than 3x them (issue 21).
  ['bound_devices', (d) => Number(d.boundDevices || 0)],
  ['bound_warning', (d) => d.boundWarning || ''],
];

const TEMPLATE = `
<form class="controls" autocomplete="off" onsubmit="return false">
  <label>Model <select name="model"></select></label>
  <div class="field-error" data-for="model"></div>
  <label>Candidate hardware</label><div class="hw-list" data-role="hw"></div>
  <div class="field-error" data-for="hardware"></div>
  <div class="row">
    <label>Rate (req/s) <input name="rate"></label>
    <label>Prompt <input name="prompt" placeholder="N or MIN..MAX"></label>
    <label>Generated <input name="gen" placeholder="N or MIN..MAX"></label>
  </div>
  <div class="field-error" data-for="rate"></div>
  <div class="field-error" data-for="prompt"></div>
  <div class="field-error" data-for="gen"></div>
  <div class="row2">
    <label>TTFT p90 ≤ (ms) <input name="ttft"></label>
    <label>TPOT p90 ≤ (ms) <input name="tpot"></label>
  </div>
  <div class="field-error" data-for="ttft"></div>
  <div class="field-error" data-for="tpot"></div>
  <div class="row2">
    <label>Tensor parallel <input name="tp" placeholder="1,2,4,8"></label>
    <label>Formats <input name="formats" placeholder="bf16,fp8"></label>
  </div>
  <div class="field-error" data-for="tp"></div>
  <div class="field-error" data-for="formats"></div>
  <div class="row2">
    <label>Calibration framework <input name="framework" list="plan-frameworks" placeholder="none: pure roofline"></label>
    <label>Requests simulated <input name="requests" placeholder="600"></label>
  </div>
  <div class="field-error" data-for="framework"></div>
  <div class="field-error" data-for="requests"></div>
  ${speculativeControls('row2')}
  <datalist id="plan-frameworks">${FRAMEWORKS.map((f) => `<option value="${f}">`).join('')}</datalist>
  <div class="general-error" data-for=""></div>
  <div class="buttons">
    <button type="button" class="small primary" data-role="run">Plan</button>
    <button type="button" class="small" data-export="csv">Export CSV</button>
    <button type="button" class="small" data-export="json">Export JSON</button>
    <span class="status" data-role="status"></span>
  </div>
</form>
<div class="results">
  <div class="card wide"><h2>Cheapest <span class="hint" data-role="subtitle"></span></h2><p class="headline" data-role="headline"></p>
    <ul class="notes" data-role="notes"></ul></div>
  <div class="card wide"><h2>Cost against p90 end-to-end latency <span class="hint">deployments meeting the SLO; hover a point</span></h2>
    <div data-role="scatter"></div>
    <div class="legend"><span><i class="swatch front"></i>cost / latency Pareto front</span><span><i class="swatch feasible"></i>meets the SLO, dominated</span></div></div>
  <div class="card wide"><h2>Deployments <span class="hint">ranked by the server: meeting the SLO by $/Mtoken, then the rest (✗ misses it); ★ on the front; click a column to sort</span></h2>
    <div class="table-wrap"><table class="data compact" data-role="table"></table></div></div>
  <div class="card wide"><h2>Infeasible candidates</h2><ul class="infeasible" data-role="infeasible"></ul></div>
</div>`;

// "1024" -> {fixed}; "512..2048" -> {uniform}; "" -> unset (the server
// names the missing field).
export function tokenLengths(text) {
  const t = (text || '').replace(/\s/g, '');
  if (!t) return undefined;
  const range = /^(.+)\.\.(.+)$/.exec(t);
  if (range) return { uniform: { min: range[1], max: range[2] } };
  return { fixed: t };
}

// Milliseconds as typed -> seconds; text that is not a number goes as is
// so the server names the field.
function msToSeconds(text) {
  const t = (text || '').trim();
  if (t === '') return undefined;
  const v = Number(t);
  return Number.isFinite(v) ? v / 1e3 : t;
}

// "fp8" or "W/A/KV" (missing parts repeat the last one given).
export function formatSet(text) {
  const [weights, activations, kvCache] = text.split('/');
  return { weights, activations: activations || weights, kvCache: kvCache || activations || weights };
}

export class PlanView extends FormView {
  constructor(root, onState) {
    super(root, onState, TEMPLATE, FIELDS);
    this.sort = null;  // null: the server's ranking
  }

  async init(state) {
    const { models, hardware } = await loadCatalogs();
    const s = Object.assign({}, DEFAULTS, state);
    this.form.elements.model.innerHTML = models.map((x) => `<option value="${x.id}">${x.id}</option>`).join('');
    const chosen = new Set(s.hardware.split(','));
    const list = this.root.querySelector('[data-role=hw]');
    // The chosen parts first, so a link's candidates are in sight.
    const sorted = [...hardware].sort((a, b) => Number(chosen.has(b.id)) - Number(chosen.has(a.id)));
    for (const h of sorted) {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = h.id;
      box.checked = chosen.has(h.id);
      label.append(box, h.id);
      list.appendChild(label);
    }
    for (const k of Object.keys(DEFAULTS)) if (k !== 'hardware') this.form.elements[k].value = s[k];
    await this.run();
  }

  values() {
    const out = {};
    for (const k of Object.keys(DEFAULTS)) if (k !== 'hardware') out[k] = this.form.elements[k].value.trim();
    out.hardware = [...this.root.querySelectorAll('[data-role=hw] input:checked')].map((i) => i.value).join(',');
    return out;
  }

  state() { return Object.assign({ view: 'plan' }, this.values()); }

  request() {
    const s = this.values();
    const list = (t) => t.split(',').map((x) => x.trim()).filter(Boolean);
    const req = {
      model: { catalogId: s.model },
      traffic: { rate: s.rate === '' ? undefined : s.rate, promptTokens: tokenLengths(s.prompt), generatedTokens: tokenLengths(s.gen) },
      slo: { ttftP90Seconds: msToSeconds(s.ttft), tpotP90Seconds: msToSeconds(s.tpot) },
      candidates: {
        hardware: list(s.hardware).map((id) => ({ platformId: id })),
        tensorParallel: list(s.tp),
        formats: list(s.formats).map(formatSet),
        // Both kinds of candidates, as `ridgeline plan` asks by default.
        disaggregated: 'auto',
      },
    };
    if (s.framework) req.candidates.calibration = { framework: s.framework };
    if (s.requests) req.requests = s.requests;
    const speculative = speculativeOption(s.spec, s.acc);
    if (speculative) req.options = { speculative };
    return req;
  }

  run() { return this.runRpc('Plan', 'planning… (a simulation per candidate)', (resp) => `${resp.simulations} simulations`); }


  // The deployments as the server ranked them, numbered from 1.
  ranked() {
    return (this.response.deployments || []).map((d, i) => Object.assign({}, d, {
      rank: i + 1, rowId: String(i),
      tensorParallel: Number(d.tensorParallel), replicas: Number(d.replicas), devices: Number(d.devices),
      pipelineParallel: Number(d.pipelineParallel) || 1, expertParallel: Number(d.expertParallel) || 1,
      rowClass: d.meetsSlo ? (d.pareto ? 'front' : '') : 'missed',
    }));
  }

  render() {
    const r = this.response;
    const s = this.values();
    this.root.querySelector('[data-role=subtitle]').textContent =
      `${r.modelId} at ${s.rate} req/s, prompt ${s.prompt}, generated ${s.gen}; p90 TTFT ≤ ${s.ttft} ms, TPOT ≤ ${s.tpot} ms`;
    this.root.querySelector('[data-role=headline]').textContent = r.headline || 'no deployment meets the SLO';
    this.root.querySelector('[data-role=notes]').innerHTML = '';
    for (const n of r.notes || []) {
      const li = document.createElement('li');
      li.textContent = n;
      this.root.querySelector('[data-role=notes]').appendChild(li);
    }
    const rows = this.ranked();
    const feasible = rows.filter((d) => d.feasible);
    const label = (d) => (isDisagg(d)
      ? `${d.hardwareId} P ${d.prefillReplicas}×TP${d.prefillTensorParallel} + D ${d.decodeReplicas}×TP${d.decodeTensorParallel} ${d.formats}`
      : `${d.hardwareId} TP ${d.tensorParallel} ${d.formats}`);
    const pts = feasible.filter((d) => d.meetsSlo && d.usdPerMtoken !== undefined).map((d) => ({
      x: d.e2eP90Seconds, y: d.usdPerMtoken, id: d.rowId, kind: d.pareto ? 'front' : 'feasible',
      tip: [`#${d.rank} ${label(d)}${d.pareto ? ' — on the front' : ''}`,
        `replicas      ${d.replicas} (${d.devices} devices)`,
        ...(isDisagg(d) ? [
          `P/D split     ${d.prefillReplicas} prefill × ${d.prefillHardwareId} TP ${d.prefillTensorParallel} : ${d.decodeReplicas} decode × ${d.decodeHardwareId} TP ${d.decodeTensorParallel}`,
          `KV transfer   ${seconds(d.kvTransferP90Seconds || 0)} p90 (${d.kvLink})`] : []),
        `$/Mtoken      ${fixed(d.usdPerMtoken, 4)} (${d.costBasis})`,
        `e2e p90       ${seconds(d.e2eP90Seconds)}`,
        `TTFT p90      ${seconds(d.ttftP90Seconds)}`,
        `TPOT p90      ${seconds(d.tpotP90Seconds)}`,
        `limit         ${d.limitingResource}`].join('\n'),
    }));
    paretoScatter(this.root.querySelector('[data-role=scatter]'), pts,
      { xLabel: 'e2e p90 (s)', yLabel: '$ / Mtoken', staircase: { xMax: false }, height: 320 });
    this.drawTable();
    const ul = this.root.querySelector('[data-role=infeasible]');
    ul.innerHTML = '';
    for (const d of rows.filter((x) => !x.feasible)) {
      const li = document.createElement('li');
      li.dataset.id = d.rowId;
      const b = document.createElement('b');
      b.textContent = label(d);
      li.append(b, `: ${d.why}`);
      ul.appendChild(li);
    }
    if (!ul.children.length) ul.innerHTML = '<li class="muted">none: every candidate fits and can reach the SLO</li>';
  }

  drawTable() {
    const rows = this.ranked().filter((d) => d.feasible);
    // The profile column only when a calibration was used.
    let columns = rows.some((d) => d.profile) ? [...COLUMNS, PROFILE] : COLUMNS;
    if (rows.some(isDisagg)) columns = [...columns, ...POOLS];
    sortableTable(this.root.querySelector('[data-role=table]'), columns, rows, this.sort,
      (sort) => { this.sort = sort; this.drawTable(); });
  }

  export(kind) {
    if (!this.response) return;
    if (kind === 'json') {
      download('ridgeline-plan.json', JSON.stringify(this.response, null, 2), 'application/json');
      return;
    }
    download('ridgeline-plan.csv', toCsv(CSV.map(([h]) => h), (this.response.deployments || []).map((d) => CSV.map(([, f]) => f(d)))), 'text/csv');
  }
}
