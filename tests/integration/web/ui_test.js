// The web UI in a real browser: Debian's headless chromium, driven by
// puppeteer-core, against a real ridgeline-server (gRPC, metrics and HTTP on
// 127.0.0.1 port 0). The numbers the page shows are compared with the gRPC
// response for the same request (the `ridgeline --server` CLI is the gRPC
// client). Screenshots of every view go to --artifacts; look at them.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const puppeteer = require('puppeteer-core');

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing --${name}`);
  return process.argv[i + 1];
}
const SERVER_BIN = arg('server-bin');
const CLI_BIN = arg('cli-bin');
// The API refuses any other body type (415): a page on another site cannot
// send JSON without a CORS preflight.
const JSON_TYPE = { 'Content-Type': 'application/json' };
const PLUGIN_DIR = arg('plugin-dir');
const PROFILE_DIR = arg('profile-dir');
const WEB_DIR = arg('web-dir');
const ARTIFACTS = arg('artifacts');
const CHROMIUM = '/usr/bin/chromium';

let server;
let grpcPort;
let httpPort;
let browser;
let userDataDir;
let downloadDir;

function startServer() {
  const env = { ...process.env };
  delete env.RIDGELINE_LISTEN;
  delete env.RIDGELINE_METRICS_LISTEN;
  delete env.RIDGELINE_HTTP_LISTEN;
  const child = spawn(SERVER_BIN, [
    '--listen=127.0.0.1:0', '--metrics-listen=127.0.0.1:0', '--http-listen=127.0.0.1:0',
    `--plugin-dir=${PLUGIN_DIR}`, `--profile-dir=${PROFILE_DIR}`, `--web-dir=${WEB_DIR}`,
  ], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not print its ports')), 30000);
    const ports = {};
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^(metrics |http )?listening on .*:(\d+)$/.exec(line.trim());
      if (!m) return;
      ports[m[1] ? m[1].trim() : 'grpc'] = Number(m[2]);
      if (ports.grpc && ports.http) { clearTimeout(timer); resolve({ child, ports }); }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

async function waitReady() {
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${httpPort}/readyz`)).status === 200) return;
    } catch (e) { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('server never became ready');
}

// The gRPC response for the same scenario, through the real gRPC client.
function grpcAnalyze(batch) {
  const out = execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'analyze',
    '--model', 'llama-3-8b', '--hardware', 'nvidia-h100-sxm-80gb', '--batch', String(batch),
    '--prompt', '1024', '--gen', '128', '--format', 'json'], { encoding: 'utf8' });
  return JSON.parse(out);
}

// "12.34 ms" -> 0.01234 (the page prints 4 significant digits).
function parseShown(text) {
  const m = /^(-?[\d.]+(?:e[-+]?\d+)?)\s*(ns|µs|ms|s|k|M|G|T|P)?/.exec(text.trim());
  assert.ok(m, `not a number: "${text}"`);
  const scale = { ns: 1e-9, 'µs': 1e-6, ms: 1e-3, s: 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 }[m[2]] || 1;
  return Number(m[1]) * scale;
}

async function summary(page) {
  return page.$$eval('#view-analyze .metric', (els) => Object.fromEntries(els.map((e) => [
    e.dataset.metric, { value: e.dataset.value, text: e.querySelector('.v').textContent }])));
}

async function waitAnalysis(page, previousSeq) {
  await page.waitForFunction((prev) => {
    const v = document.getElementById('view-analyze');
    return v && v.dataset.state === 'ready' && v.dataset.seq !== prev &&
      document.querySelector('#view-analyze [data-role=timeline]').dataset.steps;
  }, { timeout: 30000 }, previousSeq ?? null);
  return page.$eval('#view-analyze', (v) => v.dataset.seq);
}

async function newPage() {
  const page = await browser.newPage();
  await page.setViewport({ width: 1360, height: 900 });
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloadDir });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e));
  return page;
}

async function downloaded(name) {
  const file = path.join(downloadDir, name);
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8');
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no download ${name}`);
}

// RFC 4180 with quoted fields; every row must have the header's width.
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; ++i) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; ++i; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; } else field += c;
  }
  assert.equal(quoted, false, 'unterminated quote');
  assert.equal(field + row.join(''), '', 'CSV must end with a newline');
  return rows;
}

before(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const s = await startServer();
  server = s.child;
  grpcPort = s.ports.grpc;
  httpPort = s.ports.http;
  await waitReady();
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ridgeline-chromium-'));
  downloadDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ridgeline-downloads-'));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', `--user-data-dir=${userDataDir}`],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill('SIGTERM');
  for (const d of [userDataDir, downloadDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

test('a link opens that analysis, computed, equal to the gRPC response', async () => {
  const page = await newPage();
  await page.goto(`http://127.0.0.1:${httpPort}/?model=llama-3-8b&hardware=nvidia-h100-sxm-80gb&batch=8&prompt=1024&gen=128`);
  let seq = await waitAnalysis(page);
  const grpc = grpcAnalyze(8);
  const r = grpc.result;

  // One point per op of prefill and of decode.
  const ops = [...r.prefill.ops, ...r.decode.ops];
  const points = await page.$$eval('#view-analyze circle.op-point', (cs) => cs.map((c) => ({
    phase: c.dataset.phase, kind: c.dataset.kind, intensity: Number(c.dataset.intensity), cy: c.getAttribute('cy') })));
  assert.equal(points.length, ops.length);
  assert.equal(points.filter((p) => p.phase === 'prefill').length, r.prefill.ops.length);
  const key = (kind, i) => `${kind}:${i}`;
  assert.deepEqual(points.map((p) => key(p.kind, p.intensity)).sort(),
    ops.map((o) => key(o.kind, o.intensity)).sort());
  // One roof per memory tier, one ceiling per published math type.
  const hw = JSON.parse(execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'hardware', 'show',
    'nvidia-h100-sxm-80gb', '--format', 'json'], { encoding: 'utf8' }));
  const hwMsg = hw.hardware || hw;
  assert.equal(await page.$$eval('#view-analyze line.roof', (l) => l.length), hwMsg.tiers.length);
  assert.equal(await page.$$eval('#view-analyze line.ceiling', (l) => l.length),
    Object.values(hwMsg.peakOpsPerSecond).filter((v) => v > 0).length);
  assert.equal(await page.$$eval('#view-analyze path.ridge', (l) => l.length), hwMsg.tiers.length);

  // The numbers shown are the gRPC response's.
  const shown = await summary(page);
  for (const [id, field] of [['ttft', 'ttftSeconds'], ['tpot', 'tpotMeanSeconds'], ['e2e', 'e2eSeconds'],
    ['decode-tps', 'decodeTokensPerSecondTotal'], ['prefill-tps', 'prefillTokensPerSecond']]) {
    assert.equal(Number(shown[id].value), r[field], id);
    const v = parseShown(shown[id].text);
    assert.ok(Math.abs(v - r[field]) <= 5e-4 * Math.abs(r[field]), `${id}: shown ${shown[id].text}, gRPC ${r[field]}`);
  }
  assert.equal(Number(shown.usd.value), r.economy.usdPerMillionOutputTokens);
  assert.equal(Number(shown.joules.value), r.economy.joulesPerOutputToken);
  assert.equal(await page.$eval('#view-analyze [data-role=bottleneck]', (e) => e.textContent), r.bottleneck.text);
  assert.equal(await page.$$eval('#view-analyze [data-role=suggestions] li[data-kind]', (l) => l.length), r.suggestions.length);
  // Memory placement: one bar per operand class per tier.
  assert.equal(await page.$$eval('#view-analyze rect.mem-bar', (l) => l.length), 3 * r.memory.tiers.length);
  // Timeline: the first step plus up to 12 sampled steps; TPOT grows with KV.
  const steps = Number(await page.$eval('#view-analyze [data-role=timeline]', (e) => e.dataset.steps));
  assert.equal(steps, 13);

  // Hover shows the op's numbers.
  const first = await page.$('#view-analyze circle.op-point');
  await first.hover();
  const tip = await page.$eval('#tooltip', (t) => ({ hidden: t.hidden, text: t.textContent }));
  assert.equal(tip.hidden, false);
  assert.match(tip.text, /FLOPs/);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(ARTIFACTS, 'analyze.png'), fullPage: true });

  // Change a field: the chart and the numbers follow.
  const input = await page.$('#view-analyze input[name=batch]');
  await input.click({ clickCount: 3 });
  await input.type('64');
  seq = await waitAnalysis(page, seq);
  assert.match(page.url(), /batch=64/);
  const r64 = grpcAnalyze(64).result;
  const shown64 = await summary(page);
  assert.equal(Number(shown64.ttft.value), r64.ttftSeconds);
  assert.notEqual(r64.ttftSeconds, r.ttftSeconds);
  const points64 = await page.$$eval('#view-analyze circle.op-point', (cs) => cs.map((c) => c.getAttribute('cy')));
  assert.equal(points64.length, r64.prefill.ops.length + r64.decode.ops.length);
  assert.notDeepEqual(points64, points.map((p) => p.cy));

  // A bad value shows the server's message next to the field.
  await input.click({ clickCount: 3 });
  await input.type('0');
  await page.waitForFunction(() => document.getElementById('view-analyze').dataset.state === 'error', { timeout: 30000 });
  const resp = await fetch(`http://127.0.0.1:${httpPort}/v1/Analyze`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({
    model: { catalogId: 'llama-3-8b' }, hardware: { platformId: 'nvidia-h100-sxm-80gb' }, workload: { batch: 0 } }) });
  const expected = await resp.json();
  assert.equal(resp.status, 400);
  assert.equal(await page.$eval('#view-analyze .field-error[data-for=batch]', (e) => e.textContent), expected.message);
  assert.equal(await page.$eval('#view-analyze input[name=batch]', (e) => e.classList.contains('invalid')), true);
  await page.screenshot({ path: path.join(ARTIFACTS, 'analyze-error.png') });

  // Back to a valid value; export the per-op table as CSV.
  await input.click({ clickCount: 3 });
  await input.type('8');
  await waitAnalysis(page, seq);
  await page.click('#view-analyze [data-export=csv]');
  const csv = parseCsv(await downloaded('ridgeline-analyze-llama-3-8b-nvidia-h100-sxm-80gb.csv'));
  assert.equal(csv[0][0], 'phase');
  assert.equal(csv.length, 1 + ops.length);
  for (const row of csv) assert.equal(row.length, csv[0].length);
  const flopsCol = csv[0].indexOf('flops');
  assert.deepEqual(csv.slice(1).map((row) => Number(row[flopsCol])), ops.map((o) => o.flops));
  await page.click('#view-analyze [data-export=json]');
  const json = JSON.parse(await downloaded('ridgeline-analyze-llama-3-8b-nvidia-h100-sxm-80gb.json'));
  assert.equal(json.result.ttftSeconds, r.ttftSeconds);

  // A pasted Hugging Face config.json is analysed in place of the catalog
  // model (CodeLlama-7B: 32 layers, 32 heads, no GQA).
  const config = fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'configs', 'codellama-7b.json'), 'utf8');
  const before = await page.$eval('#view-analyze', (v) => v.dataset.seq);
  await page.$eval('#view-analyze textarea[name=config]', (t, text) => {
    t.value = text;
    t.dispatchEvent(new Event('input', { bubbles: true }));
  }, config);
  await waitAnalysis(page, before);
  assert.match(await page.$eval('#view-analyze [data-role=subtitle]', (e) => e.textContent), /^pasted-config on nvidia-h100-sxm-80gb/);
  assert.ok(await page.$$eval('#view-analyze circle.op-point', (c) => c.length) > 0);

  // An engine rule names its field too: 3 devices do not divide 32 heads.
  const tp = await page.$('#view-analyze input[name=tp]');
  await tp.click({ clickCount: 3 });
  await tp.type('3');
  await page.waitForFunction(() => document.getElementById('view-analyze').dataset.state === 'error', { timeout: 30000 });
  assert.match(await page.$eval('#view-analyze .field-error[data-for=tp]', (e) => e.textContent),
    /^parallelism\.tensor_parallel must divide model\.num_attention_heads \(32\), got 3/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('compare: a sweep over hardware x batch as charts and a sortable table', async () => {
  const page = await newPage();
  await page.goto(`http://127.0.0.1:${httpPort}/?view=compare&model=llama-3-8b&hardware=nvidia-h100-sxm-80gb,amd-mi300x&batches=1,8,64&prompt=1024&gen=128`);
  await page.waitForFunction(() => document.getElementById('view-compare')?.dataset.state === 'ready', { timeout: 30000 });
  // 2 hardware x 3 batch sizes = 6 points: one row each, one point per chart.
  assert.equal(await page.$$eval('#view-compare tbody tr', (r) => r.length), 6);
  for (const chart of ['chart-tps', 'chart-usd', 'chart-joules']) {
    assert.equal(await page.$$eval(`#view-compare [data-role=${chart}] circle.line-point`, (c) => c.length), 6, chart);
  }
  const tps = () => page.$$eval('#view-compare tbody td[data-key=decodeTokensPerSecondTotal]', (t) => t.map((c) => Number(c.dataset.value)));
  const desc = await tps();
  assert.deepEqual(desc, [...desc].sort((a, b) => b - a));  // default: tok/s, best first
  await page.click('#view-compare th[data-key=decodeTokensPerSecondTotal]');
  const asc = await tps();
  assert.deepEqual(asc, [...desc].reverse());
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare.png'), fullPage: true });
  await page.click('#view-compare [data-export=csv]');
  const csv = parseCsv(await downloaded('ridgeline-compare.csv'));
  assert.equal(csv.length, 7);
  assert.ok(csv[0].includes('joulesPerOutputToken'));
  for (const row of csv) assert.equal(row.length, csv[0].length);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('explore: the speculative axes vary the draft the form names, as the CLI does', async () => {
  const page = await newPage();
  const vary = ['speculative_tokens=1,4', 'acceptance_rate=0,0.9'];
  const objectives = ['decode_tok_s:max', 'tpot_ms:min'];
  const q = new URLSearchParams({ view: 'explore', model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', batch: '1',
    prompt: '1024', gen: '256', weights: 'bf16', act: 'bf16', kv: 'bf16', spec: 'eagle:2', acc: '0.7',
    vary: vary.join(';'), objectives: objectives.join(','), constraints: '', x: '0', y: '1' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-explore')?.dataset.state === 'ready', { timeout: 60000 });
  const grpc = grpcExplore(['--model', 'llama-3-8b', '--hardware', 'nvidia-h100-sxm-80gb', '--batch', '1', '--prompt',
    '1024', '--gen', '256', '--speculative', 'eagle:2', '--acceptance', '0.7', ...vary.flatMap((v) => ['--vary', v]),
    ...objectives.flatMap((o) => ['--objective', o])]);
  assert.equal(grpc.points.length, 4);
  const front = grpc.points.filter((p) => p.pareto);
  const rows = await page.$$eval('#view-explore [data-role=front] tbody tr', (trs) => trs.map((tr) => ({
    id: tr.dataset.id, o: [0, 1].map((i) => Number(tr.querySelector(`td[data-key=o${i}]`).dataset.value)) })));
  const byId = (list) => [...list].sort((a, b) => Number(a.id) - Number(b.id));
  assert.deepEqual(byId(rows), byId(front.map((p) => ({ id: p.index, o: p.objectives }))));
  // Without a draft the axis is refused, named at its row.
  await page.$eval('#view-explore input[name=spec]', (e) => { e.value = ''; e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); });
  await page.waitForFunction(() => document.getElementById('view-explore').dataset.state === 'error', { timeout: 30000 });
  const rowErrors = await page.$$eval('#view-explore .axis-row .field-error', (es) => es.map((e) => e.textContent));
  assert.match(rowErrors[0], /the base scenario has no speculative decoding/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The gRPC stream for an exploration, through the real gRPC client: every
// point (--all) as JSON lines, then the summary.
function grpcExplore(args) {
  const out = execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'explore', ...args, '--all', '--format', 'json'],
    { encoding: 'utf8' });
  const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { points: lines.filter((l) => l.point).map((l) => l.point), summary: lines.find((l) => l.summary).summary };
}

test('explore: the scatter and the table show the RPC front; a bad axis is named at its row', async () => {
  const page = await newPage();
  // 4 batch sizes x 4 bandwidths = 16 points, three objectives jointly.
  const vary = ['batch=1,4,16,64', 'bandwidth_gbs=1000:8000:4'];
  const objectives = ['decode_tok_s:max', 'usd_per_mtoken:min', 'j_per_token:min'];
  // fp8 activations and KV cache: the form has every format the CLI has
  // (the UI once sent weights only, so it explored bf16 activations).
  const q = new URLSearchParams({ view: 'explore', model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', batch: '1',
    prompt: '1024', gen: '256', weights: 'bf16', act: 'fp8', kv: 'fp8', vary: vary.join(';'), objectives: objectives.join(','), constraints: 'tpot_ms<=50', x: '0', y: '1' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-explore')?.dataset.state === 'ready', { timeout: 60000 });

  const cliArgs = ['--model', 'llama-3-8b', '--hardware', 'nvidia-h100-sxm-80gb', '--batch', '1', '--prompt', '1024',
    '--gen', '256', '--weights', 'bf16', '--activations', 'fp8', '--kv', 'fp8', ...vary.flatMap((v) => ['--vary', v]),
    ...objectives.flatMap((o) => ['--objective', o]), '--constraint', 'tpot_ms<=50'];
  const grpc = grpcExplore(cliArgs);
  // The same exploration in bf16 activations and KV differs: the formats
  // reach the server.
  const bf16 = grpcExplore(cliArgs.map((a) => (a === 'fp8' ? 'bf16' : a)));
  assert.notDeepEqual(bf16.points.map((p) => p.objectives), grpc.points.map((p) => p.objectives));
  assert.equal(await page.$eval('#view-explore input[name=act]', (e) => e.value), 'fp8');
  assert.equal(await page.$eval('#view-explore input[name=kv]', (e) => e.value), 'fp8');
  const front = grpc.points.filter((p) => p.pareto);
  assert.equal(grpc.points.length, 16);
  assert.equal(front.length, Number(grpc.summary.frontSize));
  assert.ok(front.length >= 2 && front.length < 16, `a real trade-off: front of ${front.length}`);

  // One circle per point; the front's circles are exactly the RPC's front,
  // at its values (data-x/-y hold the numbers drawn, as JS prints them).
  const circles = () => page.$$eval('#view-explore circle.scatter-point', (cs) => cs.map((c) => ({
    id: c.dataset.id, x: Number(c.dataset.x), y: Number(c.dataset.y), front: c.classList.contains('front-point') })));
  let drawn = await circles();
  assert.equal(drawn.length, grpc.points.length);
  const byId = (list) => [...list].sort((a, b) => Number(a.id) - Number(b.id));
  assert.deepEqual(byId(drawn.filter((c) => c.front)),
    byId(front.map((p) => ({ id: p.index, x: p.objectives[0], y: p.objectives[1], front: true }))));
  assert.equal(await page.$eval('#view-explore .metric[data-metric=front] .v', (e) => e.textContent), grpc.summary.frontSize);

  // The table: one row per front point, every objective's value.
  const rows = await page.$$eval('#view-explore [data-role=front] tbody tr', (trs) => trs.map((tr) => ({
    id: tr.dataset.id, o: [0, 1, 2].map((i) => Number(tr.querySelector(`td[data-key=o${i}]`).dataset.value)) })));
  assert.deepEqual(byId(rows), byId(front.map((p) => ({ id: p.index, o: p.objectives }))));

  // Another objective on y: the same points, now at their J/token.
  await page.select('#view-explore [data-role=y]', '2');
  assert.match(page.url(), /y=2/);
  drawn = await circles();
  assert.deepEqual(byId(drawn.filter((c) => c.front)).map((c) => c.y), byId(front.map((p) => ({ id: p.index, y: p.objectives[2] }))).map((p) => p.y));
  await page.screenshot({ path: path.join(ARTIFACTS, 'explore.png'), fullPage: true });

  // Export: CSV as the CLI names its columns, one row per point; JSON parses.
  await page.click('#view-explore [data-export=csv]');
  const csv = parseCsv(await downloaded('ridgeline-explore.csv'));
  // The header is `explore --all --format csv`'s (axes, objectives,
  // feasible, fits[, spilled], pareto, violation) and so are the values.
  const cliCsv = parseCsv(execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'explore', ...cliArgs, '--all', '--format', 'csv'],
    { encoding: 'utf8' }));
  assert.deepEqual(csv[0], cliCsv[0]);
  assert.deepEqual(csv[0].slice(0, 7), ['batch', 'bandwidth_gbs', ...objectives, 'feasible', 'fits']);
  assert.equal(csv.length, 1 + grpc.points.length);
  const pareto = csv[0].indexOf('pareto');
  assert.deepEqual(csv.slice(1).map((r) => [r[0], r[1], Number(r[2]), Number(r[3]), Number(r[4]), r[pareto]]),
    grpc.points.map((p) => [...p.axisValues, ...p.objectives, p.pareto ? '1' : '0']));
  await page.click('#view-explore [data-export=json]');
  const json = JSON.parse(await downloaded('ridgeline-explore.json'));
  assert.equal(json.filter((m) => m.point && m.point.pareto).length, front.length);

  // A misspelt axis: the server's message under that axis row.
  const name = (await page.$$('#view-explore .axis-row [name=axis-name]'))[1];
  await name.click({ clickCount: 3 });
  await name.type('bandwith_gbs');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.getElementById('view-explore').dataset.state === 'error', { timeout: 30000 });
  const resp = await fetch(`http://127.0.0.1:${httpPort}/v1/Explore`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({
    model: { catalogId: 'llama-3-8b' }, hardware: { platformId: 'nvidia-h100-sxm-80gb' },
    vary: ['batch=1,4,16,64', 'bandwith_gbs=1000:8000:4'], objectives }) });
  const expected = await resp.json();
  assert.equal(resp.status, 400);
  assert.equal(expected.field, 'vary[1]');
  const rowErrors = await page.$$eval('#view-explore .axis-row .field-error', (es) => es.map((e) => e.textContent));
  assert.deepEqual(rowErrors, ['', expected.message]);
  assert.match(decodeURIComponent(page.url()), /bandwith_gbs=1000:8000:4/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'explore-error.png') });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('plan: deployments in the RPC order, infeasible ones with their reason, a bad rate named at its field', async () => {
  const page = await newPage();
  // Llama-3.1-70B in bf16 does not fit one H100 (141 GB of weights).
  const q = new URLSearchParams({ view: 'plan', model: 'llama-3.1-70b', hardware: 'nvidia-h100-sxm-80gb,amd-mi300x', rate: '20',
    prompt: '2048', gen: '512', ttft: '1000', tpot: '50', tp: '1,2', requests: '200' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-plan')?.dataset.state === 'ready', { timeout: 120000 });
  const cliArgs = ['--server', `127.0.0.1:${grpcPort}`, 'plan', '--model', 'llama-3.1-70b', '--hardware', 'nvidia-h100-sxm-80gb,amd-mi300x',
    '--prompt', '2048', '--gen', '512', '--rate', '20', '--ttft-p90-ms', '1000', '--tpot-p90-ms', '50', '--tensor-parallel', '1,2',
    '--requests', '200'];
  const grpc = JSON.parse(execFileSync(CLI_BIN, [...cliArgs, '--format', 'json'], { encoding: 'utf8' }));
  const feasible = grpc.deployments.filter((d) => d.feasible);
  const infeasible = grpc.deployments.filter((d) => !d.feasible);
  assert.ok(feasible.length >= 2 && infeasible.length >= 1);

  // The table ranks as the server does (meeting the SLO by $/Mtoken, then
  // the rest), with its numbers.
  const rows = await page.$$eval('#view-plan [data-role=table] tbody tr', (trs) => trs.map((tr) => {
    const v = (k) => tr.querySelector(`td[data-key=${k}]`).dataset.value;
    return [v('hardwareId'), v('tensorParallel'), v('formats'), Number(v('usdPerMtoken')), Number(v('e2eP90Seconds'))];
  }));
  assert.deepEqual(rows, feasible.map((d) => [d.hardwareId, d.tensorParallel, d.formats, d.usdPerMtoken, d.e2eP90Seconds]));
  const costs = rows.map((r) => r[3]);
  const meets = feasible.map((d) => d.meetsSlo);
  for (let i = 1; i < rows.length; ++i) if (meets[i] === meets[i - 1]) assert.ok(costs[i] >= costs[i - 1], `rank ${i + 1}`);
  assert.equal(await page.$eval('#view-plan [data-role=headline]', (e) => e.textContent), grpc.headline);
  // Infeasible candidates, each with the server's reason.
  const why = await page.$$eval('#view-plan [data-role=infeasible] li', (ls) => ls.map((l) => l.textContent));
  // Disaggregated candidates (the CLI's default, auto) by their pools.
  const label = (d) => (d.mode === 'disaggregated'
    ? `${d.hardwareId} P ${d.prefillReplicas ?? 0}×TP${d.prefillTensorParallel ?? 0} + D ${d.decodeReplicas ?? 0}×TP${d.decodeTensorParallel ?? 0} ${d.formats}`
    : `${d.hardwareId} TP ${d.tensorParallel} ${d.formats}`);
  // (the same set; the view lists them in its own rank order)
  assert.deepEqual([...why].sort(), infeasible.map((d) => `${label(d)}: ${d.why}`).sort());
  assert.match(why[0], /does not fit/);
  // The cost / latency front: one highlighted point per front deployment.
  assert.equal(await page.$$eval('#view-plan circle.front-point', (c) => c.length),
    feasible.filter((d) => d.pareto && d.meetsSlo && d.usdPerMtoken !== undefined).length);
  await page.screenshot({ path: path.join(ARTIFACTS, 'plan.png'), fullPage: true });

  // Export: the CLI's CSV columns, one row per deployment; JSON = the RPC's.
  await page.click('#view-plan [data-export=csv]');
  const csv = parseCsv(await downloaded('ridgeline-plan.csv'));
  const cliCsv = parseCsv(execFileSync(CLI_BIN, [...cliArgs, '--format', 'csv'], { encoding: 'utf8' }));
  assert.deepEqual(csv[0], cliCsv[0]);
  assert.equal(csv.length, 1 + grpc.deployments.length);
  // The same rows (infeasible ones in the view's rank order, not the RPC's).
  const key = (rows) => rows.slice(1).map((r) => r.slice(0, 3).join('|')).sort();
  assert.deepEqual(key(csv), key(cliCsv));
  await page.click('#view-plan [data-export=json]');
  // The RPC's response (the view asks for the parts in its own list order,
  // so infeasible rows, unranked, may come in another order).
  const byRow = (r) => ({ ...r, deployments: r.deployments.map((d) => JSON.stringify(d)).sort() });
  assert.deepEqual(byRow(JSON.parse(await downloaded('ridgeline-plan.json'))), byRow(grpc));

  // Rate 0: the server's message next to Rate.
  const rate = await page.$('#view-plan input[name=rate]');
  await rate.click({ clickCount: 3 });
  await rate.type('0');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.getElementById('view-plan').dataset.state === 'error', { timeout: 30000 });
  const resp = await fetch(`http://127.0.0.1:${httpPort}/v1/Plan`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({
    model: { catalogId: 'llama-3.1-70b' }, traffic: { rate: 0, promptTokens: { fixed: 2048 }, generatedTokens: { fixed: 512 } },
    slo: { ttftP90Seconds: 1, tpotP90Seconds: 0.05 }, candidates: { hardware: [{ platformId: 'amd-mi300x' }] } }) });
  const expected = await resp.json();
  assert.equal(resp.status, 400);
  assert.equal(expected.field, 'traffic.rate');
  assert.equal(await page.$eval('#view-plan .field-error[data-for=rate]', (e) => e.textContent), expected.message);
  assert.equal(await page.$eval('#view-plan input[name=rate]', (e) => e.classList.contains('invalid')), true);
  assert.match(page.url(), /rate=0/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'plan-error.png') });
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Llama-2-13B in bf16 (13.0e9 params x 2 B = 26.0 GB) overflows the RTX
// 4090's 24 GiB of GDDR6X: the rest sits in host DRAM over PCIe (a tier of
// kind host-link). It fits, but not on the device: never a bare "yes".
test('spill: Analyze and Compare say "fits (spilled: ...)" where bytes sit in host memory', async () => {
  const page = await newPage();
  await page.goto(`http://127.0.0.1:${httpPort}/?model=llama-2-13b&hardware=nvidia-rtx-4090&batch=1&prompt=512&gen=16`);
  await waitAnalysis(page);
  const out = execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'analyze', '--model', 'llama-2-13b',
    '--hardware', 'nvidia-rtx-4090', '--batch', '1', '--prompt', '512', '--gen', '16', '--format', 'json'], { encoding: 'utf8' });
  const r = JSON.parse(out).result;
  const hw = JSON.parse(execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'hardware', 'show', 'nvidia-rtx-4090',
    '--format', 'json'], { encoding: 'utf8' }));
  const tiers = (hw.hardware || hw).tiers;
  assert.equal(r.memory.fits, true);
  assert.notEqual(r.memory.spilled, '');
  // GDDR6X (tier 0) is full of weights; the rest of them, the KV cache and
  // the activations are in the host-link tier: each operand with its bytes
  // there, in the UI's units (MiB here: 2^20 B, 4 significant digits).
  const host = r.memory.tiers.filter((t) => tiers[t.tier].kind === 'host-link');
  assert.equal(host.length, 1);
  const off = [['weights', host[0].weightsBytes], ['KV cache', host[0].kvCacheBytes], ['activations', host[0].activationsBytes]];
  for (const [name, b] of off) assert.ok(b > 0 && b < 2 ** 30, `${name}: ${b} B off the device`);
  const fits = await page.$eval('#view-analyze [data-metric=fits]', (e) => ({ text: e.querySelector('.v').textContent,
    spilled: e.dataset.spilled, title: e.title }));
  assert.equal(fits.spilled, 'weights,KV cache,activations');
  assert.equal(fits.text, `fits (spilled: ${off.map(([name, b]) => `${name} ${(b / 2 ** 20).toPrecision(4)} MiB`).join(', ')})`);
  assert.match(fits.title, /^weights in host DRAM over PCIe/);
  // An H100 holds the same model on the device: a plain yes.
  const hwSelect = await page.$('#view-analyze select[name=hardware]');
  const seq = await page.$eval('#view-analyze', (v) => v.dataset.seq);
  await hwSelect.select('nvidia-h100-sxm-80gb');
  await waitAnalysis(page, seq);
  assert.equal(await page.$eval('#view-analyze [data-metric=fits] .v', (e) => e.textContent), 'yes');

  await page.goto(`http://127.0.0.1:${httpPort}/?view=compare&model=llama-2-13b&hardware=nvidia-rtx-4090,nvidia-h100-sxm-80gb&batches=1&prompt=512&gen=16`);
  await page.waitForFunction(() => document.getElementById('view-compare')?.dataset.state === 'ready', { timeout: 30000 });
  const cells = await page.$$eval('#view-compare tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [
    tr.querySelector('td[data-key=hardwareId]').textContent, tr.querySelector('td[data-key=fits]').textContent])));
  assert.deepEqual(cells, { 'nvidia-rtx-4090': fits.text, 'nvidia-h100-sxm-80gb': 'yes' });
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The Simulate view against `ridgeline --server simulate --format json`
// (the gRPC response): the percentiles, the totals, and every bucket of the
// timeline drawn.
test('simulate: percentiles and the timeline charts equal the RPC; a bad rate is named at its field', async () => {
  const page = await newPage();
  const q = new URLSearchParams({ view: 'simulate', model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', arrivals: 'rate',
    load: '20', prompt: '1024', gen: '256', requests: '400' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-simulate')?.dataset.state === 'ready', { timeout: 60000 });
  const r = JSON.parse(execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'simulate', '--model', 'llama-3-8b',
    '--hardware', 'nvidia-h100-sxm-80gb', '--rate', '20', '--prompt', '1024', '--gen', '256', '--requests', '400',
    '--format', 'json'], { encoding: 'utf8' }));
  const pct = await page.$$eval('#view-simulate [data-role=percentiles] tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [
    tr.dataset.id, ['p50', 'p90', 'p99', 'mean'].map((k) => Number(tr.querySelector(`td[data-key=${k}]`).dataset.value))])));
  const want = {};
  for (const k of ['ttft', 'tpot', 'itl', 'e2e', 'queue']) {
    want[k] = [r[k].p50Seconds, r[k].p90Seconds, r[k].p99Seconds, r[k].meanSeconds];
  }
  assert.deepEqual(pct, want);
  const metric = (id) => page.$eval(`#view-simulate [data-metric=${id}]`, (e) => e.dataset.value);
  assert.equal(Number(await metric('out-tps')), r.outputTokensPerSecond);
  assert.equal(await metric('requests'), String(r.requests));
  // min(200, 400 requests) = 200 buckets spanning the run.
  const t = r.timeline;
  assert.equal(t.arrivals.length, 200);
  assert.ok(Math.abs(t.bucketSeconds * 200 - r.durationSeconds) <= 1e-9 * r.durationSeconds);
  assert.equal(t.arrivals.reduce((a, b) => a + Number(b), 0), 400);
  const series = (chart, name) => page.$$eval(`#view-simulate [data-role=${chart}] circle.line-point[data-series="${name}"]`,
    (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
  const mid = (k) => t.startSeconds + (k + 0.5) * t.bucketSeconds;
  assert.deepEqual(await series('chart-kv', 'device (reserved)'), t.kvUsageMean.map((v, k) => [mid(k), v * 100]));
  assert.deepEqual(await series('chart-queue', 'waiting'), t.queueMean.map((v, k) => [mid(k), v]));
  // Latencies only where requests arrived.
  const arrived = t.arrivals.map((a, k) => [Number(a), k]).filter(([a]) => a > 0).map(([, k]) => k);
  assert.deepEqual(await series('chart-latency', 'TTFT p90'), arrived.map((k) => [mid(k), t.ttftP90Seconds[k]]));
  assert.deepEqual(await series('chart-tpot', 'TPOT p90'), arrived.map((k) => [mid(k), t.tpotP90Seconds[k] * 1e3]));
  await page.screenshot({ path: path.join(ARTIFACTS, 'simulate.png'), fullPage: true });

  // Rate 0: the server's message next to the load field.
  const load = await page.$('#view-simulate input[name=load]');
  await load.click({ clickCount: 3 });
  await load.type('0');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.getElementById('view-simulate').dataset.state === 'error', { timeout: 30000 });
  const resp = await fetch(`http://127.0.0.1:${httpPort}/v1/Simulate`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: { catalogId: 'llama-3-8b' }, hardware: { platformId: 'nvidia-h100-sxm-80gb' },
      traffic: { rate: 0, promptTokens: { fixed: 1024 }, generatedTokens: { fixed: 256 } }, requests: 400 }) });
  const expected = await resp.json();
  assert.equal(resp.status, 400);
  assert.equal(expected.field, 'traffic.rate');
  assert.equal(await page.$eval('#view-simulate .field-error[data-for=load]', (e) => e.textContent), expected.message);
  assert.equal(await page.$eval('#view-simulate input[name=load]', (e) => e.classList.contains('invalid')), true);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Prefix reuse in the Simulate view: multi-turn sessions, the hit rate and
// the tokens saved equal the RPC's; a bad turn count is named at its field.
test('simulate: sessions and prefix-cache hits equal the RPC', async () => {
  const page = await newPage();
  const q = new URLSearchParams({ view: 'simulate', model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', arrivals: 'rate',
    load: '1', prompt: '512', gen: '64', requests: '60', turns: '3', think: '1', sharedPrefix: '256', kvOffload: 'host' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-simulate')?.dataset.state === 'ready', { timeout: 60000 });
  const r = JSON.parse(execFileSync(CLI_BIN, ['--server', `127.0.0.1:${grpcPort}`, 'simulate', '--model', 'llama-3-8b',
    '--hardware', 'nvidia-h100-sxm-80gb', '--rate', '1', '--prompt', '512', '--gen', '64', '--requests', '60',
    '--turns', '3', '--think-time', '1', '--shared-prefix', '256', '--kv-offload', 'host', '--format', 'json'],
    { encoding: 'utf8' }));
  const metric = (id) => page.$eval(`#view-simulate [data-metric=${id}]`, (e) => e.dataset.value);
  assert.ok(r.prefixHitRate > 0.5, `hit rate ${r.prefixHitRate}`);
  assert.equal(Number(await metric('prefix-hit-rate')), r.prefixHitRate);
  assert.equal(await metric('prefill-saved'), String(r.prefillTokensSaved));
  // The host tier's use, named as the plugin names it.
  assert.equal(r.kvTiers[0].name, 'host DRAM over PCIe 5.0 x16');
  assert.equal(Number(await metric('tier-0')), r.kvTiers[0].usageMean ?? 0);
  assert.equal(await metric('swapped-preemptions'), String(r.swappedPreemptions ?? '0'));
  // Over time: the tier's series in the KV chart, next to the device's.
  const t = r.timeline;
  assert.equal(t.kvTiers[0].name, r.kvTiers[0].name);
  const tierPoints = await page.$$eval(`#view-simulate [data-role=chart-kv] circle.line-point[data-series="${t.kvTiers[0].name}"]`,
    (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
  assert.deepEqual(tierPoints, t.kvTiers[0].usageMean.map((v, k) => [t.startSeconds + (k + 0.5) * t.bucketSeconds, v * 100]));
  const turns = await page.$('#view-simulate input[name=turns]');
  await turns.click({ clickCount: 3 });
  await turns.type('0');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.getElementById('view-simulate').dataset.state === 'error', { timeout: 30000 });
  assert.match(await page.$eval('#view-simulate .field-error[data-for=turns]', (e) => e.textContent),
    /traffic\.sessions\.turns: must be in \[1, 1000\]; got 0/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('simulate and plan: the speculative draft the form names reaches the RPC, as --speculative does', async () => {
  const page = await newPage();
  const common = ['--server', `127.0.0.1:${grpcPort}`];
  const spec = ['--speculative', 'eagle:3', '--acceptance', '0.7'];
  let q = new URLSearchParams({ view: 'simulate', model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', arrivals: 'rate',
    load: '5', prompt: '512', gen: '128', requests: '100', spec: 'eagle:3', acc: '0.7' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-simulate')?.dataset.state === 'ready', { timeout: 60000 });
  const simArgs = [...common, 'simulate', '--model', 'llama-3-8b', '--hardware', 'nvidia-h100-sxm-80gb', '--rate', '5',
    '--prompt', '512', '--gen', '128', '--requests', '100', '--format', 'json'];
  const sim = JSON.parse(execFileSync(CLI_BIN, [...simArgs, ...spec], { encoding: 'utf8' }));
  const plain = JSON.parse(execFileSync(CLI_BIN, simArgs, { encoding: 'utf8' }));
  assert.ok(sim.tpot.p50Seconds < plain.tpot.p50Seconds, `speculation speeds decode: ${sim.tpot.p50Seconds} vs ${plain.tpot.p50Seconds}`);
  const tpot = await page.$eval('#view-simulate [data-role=percentiles] tbody tr[data-id=tpot] td[data-key=p50]', (e) => Number(e.dataset.value));
  assert.equal(tpot, sim.tpot.p50Seconds);

  q = new URLSearchParams({ view: 'plan', model: 'llama-3-8b', hardware: 'nvidia-h100-sxm-80gb', rate: '5', prompt: '512',
    gen: '128', ttft: '1000', tpot: '50', tp: '1', formats: 'bf16', requests: '100', spec: 'eagle:3', acc: '0.7' });
  await page.goto(`http://127.0.0.1:${httpPort}/?${q}`);
  await page.waitForFunction(() => document.getElementById('view-plan')?.dataset.state === 'ready', { timeout: 120000 });
  const plan = JSON.parse(execFileSync(CLI_BIN, [...common, 'plan', '--model', 'llama-3-8b', '--hardware', 'nvidia-h100-sxm-80gb',
    '--rate', '5', '--prompt', '512', '--gen', '128', '--ttft-p90-ms', '1000', '--tpot-p90-ms', '50', '--tensor-parallel', '1',
    '--formats', 'bf16', '--requests', '100', ...spec, '--format', 'json'], { encoding: 'utf8' }));
  const feasible = plan.deployments.filter((d) => d.feasible);
  const rows = await page.$$eval('#view-plan [data-role=table] tbody tr', (trs) => trs.map((tr) =>
    Number(tr.querySelector('td[data-key=e2eP90Seconds]').dataset.value)));
  assert.deepEqual(rows, feasible.map((d) => d.e2eP90Seconds));
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Every view at a phone's width (390 px) and a desktop's (1,400 px): the
// form stacks above the results on the phone and sits beside them on the
// desktop, nothing overflows the page sideways, and each chart takes (at
// least 90 % of) its card's width and never less than 300 px.
const VIEW_URLS = {
  analyze: '/?model=llama-3-8b&hardware=nvidia-h100-sxm-80gb&batch=8&prompt=1024&gen=128',
  compare: '/?view=compare&model=llama-3-8b&hardware=nvidia-h100-sxm-80gb,amd-mi300x&batches=1,8,64&prompt=1024&gen=128',
  explore: '/?view=explore&vary=batch=1,4,16,64;bandwidth_gbs=1000:8000:4&objectives=decode_tok_s:max,usd_per_mtoken:min',
  simulate: '/?view=simulate&load=10&prompt=1024&gen=128&requests=200',
  plan: '/?view=plan&model=llama-3-8b&hardware=nvidia-h100-sxm-80gb&rate=5&prompt=1024&gen=128&ttft=1000&tpot=50&tp=1&requests=100&formats=bf16',
};

async function layout(page, view) {
  return page.$eval(`#view-${view}`, (root) => {
    const box = (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width }; };
    const form = box(root.querySelector('form.controls'));
    const results = box(root.querySelector('.results'));
    const charts = [...root.querySelectorAll('.results svg')].filter((s) => s.closest('.legend') === null).map((svg) => {
      const holder = svg.parentElement;
      const cs = getComputedStyle(holder);
      return { role: holder.dataset.role, width: svg.getBoundingClientRect().width,
        room: holder.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) };
    });
    return { form, results, charts, scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth };
  });
}

// Checks the layout of `view` at the page's current width; null when it
// holds, else what is wrong.
async function layoutProblem(page, view, phone) {
  const l = await layout(page, view);
  const width = l.viewport;
  if (l.scrollWidth > width) return `${view}: the page is ${l.scrollWidth} px wide in a ${width} px viewport`;
  if (phone && !(l.form.bottom <= l.results.top)) return `${view}: the form is not above the results`;
  if (phone && !(l.results.width >= width - 40)) return `${view}: results ${l.results.width} px wide`;
  if (!phone && !(l.form.right < l.results.left)) return `${view}: the form is not beside the results`;
  if (!phone && !(l.results.width >= 1000)) return `${view}: results ${l.results.width} px wide`;
  if (!l.charts.length) return `${view}: no chart`;
  for (const c of l.charts) {
    if (!(c.width >= 300)) return `${view} ${c.role}: chart ${c.width} px wide`;
    if (!(c.width >= 0.9 * c.room)) return `${view} ${c.role}: chart ${c.width} px in ${c.room} px`;
  }
  const roof = l.charts.find((c) => c.role === 'roofline');
  if (roof && !phone && !(roof.width >= 950)) return `roofline ${roof.width} px`;
  return null;
}

// Each view opened at a phone's width (390 px), then the window widened to
// 1,400 px under it: the layout follows and the charts are redrawn at the
// new width.
test('layout at 390 px and 1,400 px: the form stacks on a phone, charts take the width at both', async () => {
  const page = await newPage();
  for (const [view, url] of Object.entries(VIEW_URLS)) {
    await page.setViewport({ width: 390, height: 844 });
    await page.goto(`http://127.0.0.1:${httpPort}${url}`);
    await page.waitForFunction((v) => document.getElementById(`view-${v}`)?.dataset.state === 'ready' &&
      (v !== 'analyze' || document.querySelector('#view-analyze [data-role=timeline]').dataset.steps), { timeout: 120000 }, view);
    assert.equal(await layoutProblem(page, view, true), null);
    await page.screenshot({ path: path.join(ARTIFACTS, `${view}-390.png`), fullPage: true });
    await page.evaluate(() => { window.notReloaded = true; });
    await page.setViewport({ width: 1400, height: 900 });
    // The redraw follows the resize once it settles (120 ms), in the same
    // page (not a reload).
    let problem = 'not checked';
    for (const deadline = Date.now() + 10000; problem && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 100));
      problem = await layoutProblem(page, view, false);
    }
    assert.equal(problem, null);
    assert.equal(await page.evaluate(() => window.notReloaded), true);
    await page.screenshot({ path: path.join(ARTIFACTS, `${view}-1400.png`), fullPage: true });
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});
