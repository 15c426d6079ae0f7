// The Simulate view: one replica's online serving simulation (Simulate):
// model, hardware, formats, parallelism, arrivals (Poisson rate or a closed
// loop of clients), prompt and generated lengths, prefix reuse (a shared
// system prompt, multi-turn sessions, prefix caching on or off). The latency percentiles,
// the run's totals, and over time (the response's timeline, at most 200
// buckets): latencies of the requests arriving in each bucket, the queue
// and running sequences, and KV-cache use.
import { loadCatalogs } from './api.js';
import { FormView } from './form_view.js';
import { seconds, si, fixed, toCsv, download } from './format.js';
import { lines } from './charts.js';
import { sortableTable } from './table.js';
import { tokenLengths, formatSet } from './plan.js';
import { speculativeOption, speculativeControls, SPECULATIVE_FIELDS } from './analyze.js';

const DEFAULTS = {
  model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', formats: '', tp: '', arrivals: 'rate', load: '10',
  prompt: '1024', gen: '256', requests: '', seed: '', framework: '',
  sharedPrefix: '', turns: '', think: '', prefixCaching: 'on', kvOffload: 'off', preemption: 'off',
  spec: '', acc: '0.7',
};
const FRAMEWORKS = ['vllm', 'vllm-rocm', 'tensorrt-llm', 'flashinfer', 'aiter-ck', 'gaudi-sw', 'llama.cpp-cuda', 'llama.cpp-metal'];
const FIELDS = [
  { key: 'model', paths: ['model'] },
  { key: 'hardware', paths: ['hardware'] },
  { key: 'formats', paths: ['formats'] },
  { key: 'tp', paths: ['parallelism'] },
  { key: 'load', paths: ['traffic', 'traffic.rate', 'traffic.concurrency'] },
  { key: 'prompt', paths: ['traffic.prompt_tokens'] },
  { key: 'gen', paths: ['traffic.generated_tokens'] },
  { key: 'requests', paths: ['requests', 'simulation'] },
  { key: 'seed', paths: ['seed'] },
  { key: 'framework', paths: ['calibration'] },
  { key: 'sharedPrefix', paths: ['traffic.shared_prefix_tokens'] },
  { key: 'turns', paths: ['traffic.sessions', 'traffic.sessions.turns'] },
  { key: 'think', paths: ['traffic.sessions.think_time_seconds'] },
  { key: 'prefixCaching', paths: ['serving.prefix_caching'] },
  { key: 'kvOffload', paths: ['serving.kv_offload'] },
  { key: 'preemption', paths: ['serving.preemption'] },
  ...SPECULATIVE_FIELDS,
];
const LATENCIES = [['ttft', 'TTFT'], ['tpot', 'TPOT'], ['itl', 'inter-token'], ['e2e', 'end-to-end'], ['queue', 'queue wait']];

const TEMPLATE = `
<form class="controls" autocomplete="off" onsubmit="return false">
  <label>Model <select name="model"></select></label>
  <div class="field-error" data-for="model"></div>
  <label>Hardware <select name="hardware"></select></label>
  <div class="field-error" data-for="hardware"></div>
  <div class="row2">
    <label>Formats <input name="formats" placeholder="model's: bf16" title="W or W/A/KV, e.g. fp8 or int4-g128/bf16/fp8"></label>
    <label>Tensor parallel <input name="tp" type="number" placeholder="1"></label>
  </div>
  <div class="field-error" data-for="formats"></div>
  <div class="field-error" data-for="tp"></div>
  <div class="row2">
    <label>Arrivals <select name="arrivals" title="Poisson arrivals at a rate, or a closed loop of clients"><option value="rate">rate (req/s)</option><option value="concurrency">clients</option></select></label>
    <label>Rate or clients <input name="load"></label>
  </div>
  <div class="field-error" data-for="load"></div>
  <div class="row2">
    <label>Prompt <input name="prompt" placeholder="N or MIN..MAX"></label>
    <label>Generated <input name="gen" placeholder="N or MIN..MAX"></label>
  </div>
  <div class="field-error" data-for="prompt"></div>
  <div class="field-error" data-for="gen"></div>
  <div class="row">
    <label>Requests <input name="requests" placeholder="1000"></label>
    <label>Seed <input name="seed" placeholder="1"></label>
    <label>Calibration <input name="framework" list="simulate-frameworks" placeholder="roofline"></label>
  </div>
  <div class="field-error" data-for="requests"></div>
  <div class="field-error" data-for="seed"></div>
  <div class="field-error" data-for="framework"></div>
  <div class="row">
    <label>Shared prefix <input name="sharedPrefix" type="number" placeholder="0" title="every prompt starts with the same N tokens (a system prompt)"></label>
    <label>Turns <input name="turns" type="number" placeholder="1" title="multi-turn sessions: each turn's prompt is the conversation so far plus the prompt's new tokens; the rate starts sessions"></label>
    <label>Think (s) <input name="think" placeholder="0" title="seconds between a turn's end and the next turn"></label>
  </div>
  <div class="row">
    <label>Prefix caching <select name="prefixCaching" title="automatic prefix caching of full prompt blocks (vLLM V1's default)"><option value="on">on</option><option value="off">off</option></select></label>
    <label>KV offload <select name="kvOffload" title="where evicted cached blocks go: the part's host-link tiers, or flash too"><option value="off">off</option><option value="host">host</option><option value="all">all</option></select></label>
    <label>Preemption <select name="preemption" title="off: each request reserves its whole KV life at admission; recompute: blocks as tokens come, the last admitted preempted and recomputed (vLLM V1); swap: its KV moved to the offload tier and back (vLLM V0, needs KV offload)"><option value="off">off</option><option value="recompute">recompute</option><option value="swap">swap</option></select></label>
  </div>
  <div class="field-error" data-for="sharedPrefix"></div>
  <div class="field-error" data-for="turns"></div>
  <div class="field-error" data-for="think"></div>
  <div class="field-error" data-for="prefixCaching"></div>
  <div class="field-error" data-for="kvOffload"></div>
  <div class="field-error" data-for="preemption"></div>
  ${speculativeControls('row2')}
  <datalist id="simulate-frameworks">${FRAMEWORKS.map((f) => `<option value="${f}">`).join('')}</datalist>
  <div class="general-error" data-for=""></div>
  <div class="buttons">
    <button type="button" class="small primary" data-role="run">Simulate</button>
    <button type="button" class="small" data-export="csv">Export CSV</button>
    <button type="button" class="small" data-export="json">Export JSON</button>
    <span class="status" data-role="status"></span>
  </div>
</form>
<div class="results">
  <div class="card wide"><h2>Summary <span class="hint" data-role="subtitle"></span></h2><div class="summary" data-role="summary"></div>
    <p class="warnings" data-role="warnings"></p>
    <h2>Latency percentiles <span class="hint">TTFT and e2e include the queue wait</span></h2>
    <div class="table-wrap percentiles"><table class="data" data-role="percentiles"></table></div></div>
  <div class="card"><h2>Latency over time <span class="hint">requests by arrival time</span></h2><div data-role="chart-latency"></div><div class="legend" data-role="legend-latency"></div></div>
  <div class="card"><h2>TPOT over time <span class="hint">p90 of the requests arriving</span></h2><div data-role="chart-tpot"></div></div>
  <div class="card"><h2>Queue and batch <span class="hint">time-weighted per bucket</span></h2><div data-role="chart-queue"></div><div class="legend" data-role="legend-queue"></div></div>
  <div class="card"><h2>KV cache use <span class="hint">device: reserved; offload tiers: cached and swapped out; % of each tier's capacity</span></h2><div data-role="chart-kv"></div><div class="legend" data-role="legend-kv"></div></div>
</div>`;

// The timeline's buckets as points at their midpoints; latency series
// skip buckets where no request arrived.
export function timelineSeries(t) {
  const n = (t.arrivals || []).length;
  const mid = (k) => t.startSeconds + (k + 0.5) * t.bucketSeconds;
  const series = (key, scale = 1, always = false) => Array.from({ length: n }, (_, k) => ({
    x: mid(k), y: always || Number(t.arrivals[k]) > 0 ? t[key][k] * scale : null,
  }));
  return {
    ttftP50: series('ttftP50Seconds'), ttftP90: series('ttftP90Seconds'), e2eP90: series('e2eP90Seconds'),
    tpotP90: series('tpotP90Seconds', 1e3), queue: series('queueMean', 1, true),
    running: series('runningMean', 1, true), kv: series('kvUsageMean', 100, true),
    tiers: (t.kvTiers || []).map((tier) => ({
      name: tier.name, points: Array.from({ length: n }, (_, k) => ({ x: mid(k), y: (tier.usageMean || [])[k] * 100 })),
    })),
  };
}

export class SimulateView extends FormView {
  constructor(root, onState) {
    super(root, onState, TEMPLATE, FIELDS);
  }

  async init(state) {
    const { models, hardware } = await loadCatalogs();
    const s = Object.assign({}, DEFAULTS, state);
    this.form.elements.model.innerHTML = models.map((x) => `<option value="${x.id}">${x.id}</option>`).join('');
    this.form.elements.hardware.innerHTML = hardware.map((x) => `<option value="${x.id}">${x.displayName || x.id}</option>`).join('');
    for (const k of Object.keys(DEFAULTS)) this.form.elements[k].value = s[k];
    await this.run();
  }

  values() {
    const out = {};
    for (const k of Object.keys(DEFAULTS)) out[k] = this.form.elements[k].value.trim();
    return out;
  }

  state() { return Object.assign({ view: 'simulate' }, this.values()); }

  request() {
    const s = this.values();
    const traffic = { promptTokens: tokenLengths(s.prompt), generatedTokens: tokenLengths(s.gen) };
    // Unset (empty) goes as is so the server names the missing field.
    if (s.load !== '') traffic[s.arrivals === 'concurrency' ? 'concurrency' : 'rate'] = s.load;
    const req = {
      model: { catalogId: s.model },
      hardware: { platformId: s.hardware },
      traffic,
    };
    if (s.formats) req.formats = formatSet(s.formats);
    if (s.tp) req.parallelism = { tensorParallel: s.tp };
    if (s.requests) req.requests = s.requests;
    if (s.seed) req.seed = s.seed;
    if (s.framework) req.calibration = { framework: s.framework };
    if (s.sharedPrefix) traffic.sharedPrefixTokens = s.sharedPrefix;
    if (s.turns || s.think) traffic.sessions = { turns: s.turns || '1', thinkTimeSeconds: s.think || '0' };
    if (s.prefixCaching === 'off' || s.kvOffload !== 'off' || s.preemption !== 'off') {
      req.serving = {};
      if (s.prefixCaching === 'off') req.serving.prefixCaching = false;
      if (s.kvOffload !== 'off') req.serving.kvOffload = s.kvOffload;
      if (s.preemption !== 'off') req.serving.preemption = s.preemption;
    }
    const speculative = speculativeOption(s.spec, s.acc);
    if (speculative) req.options = { speculative };
    return req;
  }

  run() { return this.runRpc('Simulate', 'simulating…', (resp) => `${resp.steps} steps`); }

  render() {
    const r = this.response;
    const s = this.values();
    this.root.querySelector('[data-role=subtitle]').textContent =
      `${s.model} on ${s.hardware}, ${s.arrivals === 'concurrency' ? `${s.load} clients` : `${s.load} req/s`} — ${r.profile ? `calibrated (${r.profile})` : 'pure roofline: an upper bound on speed'}`;
    const metrics = [
      ['requests', 'requests', r.requests, (v) => v],
      ['duration', 'duration', r.durationSeconds, seconds],
      ['rps', 'requests / s', r.requestsPerSecond, (v) => si(v)],
      ['out-tps', 'output tok/s', r.outputTokensPerSecond, (v) => si(v)],
      ['offline-tps', 'offline max output tok/s', r.offlineMaxOutputTokensPerSecond, (v) => si(v)],
      ['limit', 'limited by', r.limitingResource, (v) => v],
      ['running', 'mean running', r.meanRunning, (v) => fixed(v, 1)],
      ['kv-mean', 'KV use (mean)', r.kvUsageMean, (v) => `${fixed(v * 100, 1)} %`],
      ['kv-peak', 'KV use (peak)', r.kvUsagePeak, (v) => `${fixed(v * 100, 1)} %`],
      ['max-waiting', 'longest queue', r.maxWaiting, (v) => v],
      ['kv-capacity', 'KV capacity (tokens)', r.kvCapacityTokens, (v) => si(Number(v))],
      ['max-concurrency', 'max concurrency', r.maxConcurrency, (v) => v],
      ['prefix-hit-rate', 'prefix cache hits', r.prefixHitRate ?? 0, (v) => `${fixed(v * 100, 1)} % of prompt tokens`],
      ['prefill-saved', 'prefill tokens saved', r.prefillTokensSaved ?? '0', (v) => si(Number(v))],
      ['preemptions', 'preemptions', r.preemptions ?? '0', (v) => v],
      ['swapped-preemptions', 'swapped to the offload tier', r.swappedPreemptions ?? '0', (v) => v],
      ['offload-hit-rate', 'reloaded from offload', r.kvOffloadHitRate ?? 0, (v) => `${fixed(v * 100, 1)} % of prompt tokens`],
      ...(r.kvTiers || []).map((t, k) => [`tier-${k}`, `${t.name} (mean / peak)`, t.usageMean ?? 0,
        () => `${fixed((t.usageMean ?? 0) * 100, 1)} % / ${fixed((t.usagePeak ?? 0) * 100, 1)} %`]),
    ];
    this.root.querySelector('[data-role=summary]').innerHTML = metrics.map(([id, k, v, f]) =>
      `<div class="metric" data-metric="${id}" data-value="${v ?? ''}"><div class="k">${k}</div><div class="v">${v === undefined ? '–' : f(v)}</div></div>`).join('');
    this.root.querySelector('[data-role=warnings]').textContent = (r.warnings || []).join(' · ');
    const rows = LATENCIES.map(([key, name]) => Object.assign({ metric: name, rowId: key }, r[key] && {
      p50: r[key].p50Seconds, p90: r[key].p90Seconds, p99: r[key].p99Seconds, mean: r[key].meanSeconds }));
    sortableTable(this.root.querySelector('[data-role=percentiles]'),
      [{ key: 'metric', title: 'latency', text: true }, { key: 'p50', title: 'p50', fmt: seconds },
        { key: 'p90', title: 'p90', fmt: seconds }, { key: 'p99', title: 'p99', fmt: seconds },
        { key: 'mean', title: 'mean', fmt: seconds }], rows, null, null);
    this.drawCharts();
  }

  drawCharts() {
    const t = this.response.timeline || {};
    const ts = timelineSeries(t);
    const opts = { xLabel: 'time (s)', xFormat: (v) => Number(v.toPrecision(4)), width: 480, height: 260, r: 2 };
    const legend = (role, names, color) => {
      this.root.querySelector(`[data-role=${role}]`).innerHTML =
        names.map((n) => `<span><i class="swatch" style="background:${color(n)}"></i>${n}</span>`).join('');
    };
    const latency = ['TTFT p50', 'TTFT p90', 'e2e p90'];
    legend('legend-latency', latency, lines(this.root.querySelector('[data-role=chart-latency]'),
      [{ name: latency[0], points: ts.ttftP50 }, { name: latency[1], points: ts.ttftP90 }, { name: latency[2], points: ts.e2eP90 }],
      Object.assign({ yLabel: 'latency (s)', yFormat: (v) => Number(v.toPrecision(3)) }, opts)));
    lines(this.root.querySelector('[data-role=chart-tpot]'), [{ name: 'TPOT p90', points: ts.tpotP90 }],
      Object.assign({ yLabel: 'TPOT (ms)', yFormat: (v) => Number(v.toPrecision(3)) }, opts));
    legend('legend-queue', ['waiting', 'running'], lines(this.root.querySelector('[data-role=chart-queue]'),
      [{ name: 'waiting', points: ts.queue }, { name: 'running', points: ts.running }],
      Object.assign({ yLabel: 'requests', yFormat: (v) => Number(v.toPrecision(3)) }, opts)));
    const kv = [{ name: 'device (reserved)', points: ts.kv }, ...ts.tiers];
    legend('legend-kv', kv.map((x) => x.name), lines(this.root.querySelector('[data-role=chart-kv]'), kv,
      Object.assign({ yLabel: 'KV use (% of each tier)', yFormat: (v) => Number(v.toPrecision(3)) }, opts)));
    this.root.querySelector('[data-role=chart-kv]').dataset.buckets = String((t.arrivals || []).length);
  }

  redraw() { if (this.response) this.drawCharts(); }

  // CSV: the timeline, one row per bucket; JSON: the SimulateResponse.
  export(kind) {
    if (!this.response) return;
    if (kind === 'json') {
      download('ridgeline-simulate.json', JSON.stringify(this.response, null, 2), 'application/json');
      return;
    }
    const t = this.response.timeline || {};
    const keys = ['arrivals', 'ttftP50Seconds', 'ttftP90Seconds', 'tpotP90Seconds', 'e2eP90Seconds', 'queueMean', 'runningMean', 'kvUsageMean'];
    const headers = ['start_s', 'arrivals', 'ttft_p50_s', 'ttft_p90_s', 'tpot_p90_s', 'e2e_p90_s', 'queue_mean', 'running_mean', 'kv_usage_mean'];
    const tiers = t.kvTiers || [];
    headers.push(...tiers.map((tier) => `kv_usage_mean[${tier.name}]`));
    const rows = (t.arrivals || []).map((_, k) => [t.startSeconds + k * t.bucketSeconds, ...keys.map((key) => t[key][k]),
      ...tiers.map((tier) => (tier.usageMean || [])[k])]);
    download('ridgeline-simulate.csv', toCsv(headers, rows), 'text/csv');
  }
}
