// SVG charts drawn with the vendored d3 (global `d3`). Each function clears
// and redraws its container, so a re-analysis replaces the chart.
import { si, seconds, bytes } from './format.js';

const d3 = window.d3;
const tooltip = () => document.getElementById('tooltip');
const PHASE_COLOR = { prefill: '#dd6b20', decode: '#2b6cb0' };
const TIER_COLORS = ['#2f855a', '#805ad5', '#b7791f', '#c53030', '#2c7a7b', '#97266d', '#4a5568', '#718096'];
const MATH_NAMES = { fp64: 'fp64', fp32: 'fp32', tf32: 'tf32', bf16: 'bf16', fp16: 'fp16', fp8: 'fp8', fp4: 'fp4', int8: 'int8', int4: 'int4', fp16Acc16: 'fp16-acc16' };

// The tooltip beside the pointer, kept inside the window (a phone's too).
export function showTip(event, text) {
  const t = tooltip();
  t.textContent = text;
  t.hidden = false;
  const left = Math.min(event.clientX + 14, window.innerWidth - t.offsetWidth - 8);
  const top = event.clientY + 10 + t.offsetHeight > window.innerHeight ? event.clientY - t.offsetHeight - 10 : event.clientY + 10;
  t.style.left = `${Math.max(4, left)}px`;
  t.style.top = `${Math.max(4, top)}px`;
}
export function hideTip() { tooltip().hidden = true; }

// Charts take their container's width (at least MIN_WIDTH, so a phone's
// column still holds a readable chart); a hidden container (0 wide) gets
// `fallback`. The views redraw on resize (main.js).
export const MIN_WIDTH = 280;
export function widthOf(container, fallback) {
  const w = Math.floor(container.clientWidth || 0);
  return w > 0 ? Math.max(w, MIN_WIDTH) : fallback;
}

function frame(container, width, height, margin) {
  const root = d3.select(container);
  root.selectAll('*').remove();
  const svg = root.append('svg').attr('viewBox', `0 0 ${width} ${height}`).attr('width', width).attr('height', height);
  const g = svg.append('g').attr('transform', `translate(${margin.left},${margin.top})`);
  return { svg, g, w: width - margin.left - margin.right, h: height - margin.top - margin.bottom };
}

export function opLabel(op) {
  return op.layerGroup ? `${op.kind} (${op.layerGroup})` : op.kind;
}

function opText(op, phase) {
  return [
    `${opLabel(op)} — ${phase}`,
    `math        ${op.math}`,
    `FLOPs       ${si(op.flops)}`,
    `bytes       ${bytes(op.bytes)}`,
    `intensity   ${op.intensity.toPrecision(4)} FLOP/B`,
    `attained    ${si(op.attainedFlopsPerSecond, 'FLOP/s')}`,
    `time        ${seconds(op.seconds)}`,
    `  compute   ${seconds(op.computeSeconds)}`,
    `  memory    ${seconds(op.memorySeconds)}`,
    `bound       ${op.bound}${op.executedInTier >= 0 ? ` (in tier ${op.executedInTier})` : ''}`,
  ].join('\n');
}

// Log-log roofline: attainable FLOP/s against intensity. One slanted roof
// per memory tier (its read bandwidth), one ceiling per math type the
// hardware publishes, the ridge points of each tier against the matmul
// math, and every op of prefill and of decode as one point.
export function roofline(container, hardware, result) {
  const width = widthOf(container, 860);
  // Narrow (a phone): no right margin for the ceiling labels; they are
  // listed under the chart instead.
  const narrow = width < 640;
  const { g, w, h } = frame(container, width, narrow ? Math.max(300, Math.round(width * 0.9)) : 420,
    { top: 12, right: narrow ? 10 : 190, bottom: 42, left: narrow ? 58 : 70 });
  const peaks = Object.entries(hardware.peakOpsPerSecond || {})
    .filter(([, v]) => v > 0).map(([k, v]) => ({ math: MATH_NAMES[k] || k, peak: v }));
  // Math types at the same peak (bf16 and fp16, say) share one label.
  const labels = d3.rollups(peaks, (ps) => ps.map((p) => p.math).join(' / '), (p) => p.peak);
  const tiers = (hardware.tiers || []).map((t, i) => ({ i, name: t.name, kind: t.kind, bw: t.readBandwidthBytesPerSecond }))
    .filter((t) => t.bw > 0);
  const points = [];
  for (const phase of ['prefill', 'decode']) {
    for (const op of (result[phase] && result[phase].ops) || []) points.push({ phase, op });
  }
  const matmul = peaks.find((p) => p.math === result.matmulMath) || peaks[0];
  const xs = points.map((p) => p.op.intensity).filter((v) => v > 0);
  const ys = points.map((p) => p.op.attainedFlopsPerSecond).filter((v) => v > 0);
  const ridges = matmul ? tiers.map((t) => matmul.peak / t.bw) : [];
  const maxPeak = d3.max(peaks, (p) => p.peak) || d3.max(ys) || 1;
  const xMin = Math.min(d3.min(xs) || 1, 0.1) / 2;
  const xMax = Math.max(d3.max(xs) || 1, d3.max(ridges) || 1) * 4;
  const yMin = Math.min(d3.min(ys) || maxPeak / 1e6, d3.min(tiers, (t) => t.bw * xMin) || maxPeak) / 2;
  const x = d3.scaleLog().domain([xMin, xMax]).range([0, w]).clamp(true);
  const y = d3.scaleLog().domain([yMin, maxPeak * 2]).range([h, 0]).clamp(true);

  g.append('g').attr('class', 'grid').call(d3.axisLeft(y).ticks(6).tickSize(-w).tickFormat('')).call((a) => a.select('.domain').remove());
  g.append('g').attr('class', 'axis').attr('transform', `translate(0,${h})`).call(d3.axisBottom(x).ticks(8, '~s'));
  g.append('g').attr('class', 'axis').call(d3.axisLeft(y).ticks(6, '~s'));
  g.append('text').attr('x', w / 2).attr('y', h + 34).attr('text-anchor', 'middle').text('arithmetic intensity (FLOP/byte)');
  g.append('text').attr('transform', 'rotate(-90)').attr('x', -h / 2).attr('y', narrow ? -46 : -54).attr('text-anchor', 'middle').text('attainable FLOP/s');

  tiers.forEach((t) => {
    const color = TIER_COLORS[t.i % TIER_COLORS.length];
    const xEnd = Math.min(xMax, maxPeak / t.bw);
    g.append('line').attr('class', 'roof').attr('data-tier', t.i).attr('stroke', color)
      .attr('x1', x(xMin)).attr('y1', y(t.bw * xMin)).attr('x2', x(xEnd)).attr('y2', y(t.bw * xEnd))
      .append('title').text(`tier ${t.i} ${t.name}: ${si(t.bw, 'B/s')}`);
    g.append('text').attr('x', x(xMin) + 4).attr('y', y(t.bw * xMin) - 4).attr('fill', color)
      .text(`${t.name} ${si(t.bw, 'B/s')}`);
  });
  peaks.forEach((p) => {
    const fastest = d3.max(tiers, (t) => t.bw) || 1;
    const xStart = Math.max(xMin, p.peak / fastest);
    const isMatmul = matmul && p.math === matmul.math;
    g.append('line').attr('class', 'ceiling').attr('data-math', p.math)
      .attr('stroke', isMatmul ? '#1d2330' : '#a0aec0')
      .attr('x1', x(xStart)).attr('y1', y(p.peak)).attr('x2', x(xMax)).attr('y2', y(p.peak));
  });
  let lastY = -Infinity;
  labels.sort((a, b) => b[0] - a[0]);
  if (narrow) {
    d3.select(container).append('div').attr('class', 'legend ceiling-legend')
      .selectAll('span').data(labels).join('span').text(([peak, names]) => `— — ${names} ${si(peak, 'FLOP/s')}`);
  } else {
    labels.forEach(([peak, names]) => {
      const ly = Math.max(y(peak) + 4, lastY + 12);  // no overlapping labels
      lastY = ly;
      g.append('text').attr('class', 'ceiling-label').attr('x', w + 4).attr('y', ly).attr('fill', '#4a5568').text(`${names} ${si(peak, 'FLOP/s')}`);
    });
  }
  if (matmul) {
    tiers.forEach((t) => {
      const r = matmul.peak / t.bw;
      g.append('path').attr('class', 'ridge').attr('data-tier', t.i)
        .attr('d', d3.symbol(d3.symbolDiamond, 60)())
        .attr('transform', `translate(${x(r)},${y(matmul.peak)})`)
        .attr('fill', TIER_COLORS[t.i % TIER_COLORS.length])
        .append('title').text(`ridge point, ${t.name} × ${matmul.math}: ${r.toPrecision(4)} FLOP/byte`);
    });
  }
  g.selectAll('circle.op-point').data(points).join('circle')
    .attr('class', (d) => `op-point${d.op.intensity > 0 && d.op.attainedFlopsPerSecond > 0 ? '' : ' clamped'}`)
    .attr('data-phase', (d) => d.phase)
    .attr('data-kind', (d) => d.op.kind)
    .attr('data-intensity', (d) => d.op.intensity)
    .attr('data-attained', (d) => d.op.attainedFlopsPerSecond)
    .attr('cx', (d) => x(Math.max(d.op.intensity, xMin)))
    .attr('cy', (d) => y(Math.max(d.op.attainedFlopsPerSecond, yMin)))
    .attr('r', 5)
    .attr('fill', (d) => PHASE_COLOR[d.phase])
    .attr('stroke', (d) => (d.op.intensity > 0 ? '#fff' : PHASE_COLOR[d.phase]))
    .on('mousemove', (event, d) => showTip(event, opText(d.op, d.phase)))
    .on('mouseleave', hideTip);
  return points.length;
}

// Horizontal bars per op, stacked by phase, of one metric.
export function opBars(container, result, metric) {
  const pick = { time: (o) => o.seconds, flops: (o) => o.flops, bytes: (o) => o.bytes }[metric];
  const fmt = { time: seconds, flops: (v) => si(v), bytes }[metric];
  const rows = new Map();
  for (const phase of ['prefill', 'decode']) {
    for (const op of (result[phase] && result[phase].ops) || []) {
      const key = opLabel(op);
      if (!rows.has(key)) rows.set(key, { key, prefill: 0, decode: 0 });
      rows.get(key)[phase] += pick(op);
    }
  }
  const data = [...rows.values()];
  const height = 24 + data.length * 18 + 30;
  const width = widthOf(container, 760);
  const { g, w, h } = frame(container, width, height,
    { top: 8, right: width < 640 ? 62 : 80, bottom: 30, left: Math.min(170, Math.round(width * 0.36)) });
  const stack = d3.stack().keys(['prefill', 'decode'])(data);
  const x = d3.scaleLinear().domain([0, d3.max(data, (d) => d.prefill + d.decode) || 1]).nice().range([0, w]);
  const yb = d3.scaleBand().domain(data.map((d) => d.key)).range([0, h]).padding(0.2);
  g.append('g').attr('class', 'axis').attr('transform', `translate(0,${h})`)
    .call(d3.axisBottom(x).ticks(w < 400 ? 3 : 6).tickFormat((v) => fmt(v)));
  g.append('g').attr('class', 'axis').call(d3.axisLeft(yb));
  g.selectAll('g.layer').data(stack).join('g').attr('class', 'layer').attr('fill', (s) => PHASE_COLOR[s.key])
    .selectAll('rect').data((s) => s.map((v) => Object.assign(v, { phase: s.key }))).join('rect')
    .attr('class', 'op-bar')
    .attr('x', (v) => x(v[0])).attr('width', (v) => Math.max(0, x(v[1]) - x(v[0])))
    .attr('y', (v) => yb(v.data.key)).attr('height', yb.bandwidth())
    .on('mousemove', (event, v) => showTip(event, `${v.data.key} — ${v.phase}\n${fmt(v.data[v.phase])}`))
    .on('mouseleave', hideTip);
  g.selectAll('text.total').data(data).join('text').attr('class', 'total')
    .attr('x', (d) => x(d.prefill + d.decode) + 4).attr('y', (d) => yb(d.key) + yb.bandwidth() - 3)
    .text((d) => fmt(d.prefill + d.decode));
}

// Per memory tier: weights, KV cache and activations against its capacity.
export function memory(container, mem) {
  const tiers = mem.tiers || [];
  const keys = [['weightsBytes', 'weights', '#2b6cb0'], ['kvCacheBytes', 'KV cache', '#dd6b20'], ['activationsBytes', 'activations', '#38a169']];
  const height = 30 + tiers.length * 40 + 26;
  const { g, w, h } = frame(container, widthOf(container, 400), height, { top: 8, right: 30, bottom: 26, left: 10 });
  const x = d3.scaleLinear().domain([0, d3.max(tiers, (t) => Math.max(t.capacityBytes, t.usedBytes)) || 1]).range([0, w]);
  const yb = d3.scaleBand().domain(tiers.map((t) => `${t.tier}: ${t.name}`)).range([0, h]).paddingInner(0.45).paddingOuter(0.4);
  // Ticks at round numbers of the binary unit shown (0, 50, 100 GiB), not
  // at round numbers of bytes (46.57 GiB).
  const max = x.domain()[1];
  const unit = [2 ** 40, 2 ** 30, 2 ** 20, 2 ** 10].find((u) => max >= u) || 1;
  const ticks = d3.scaleLinear().domain([0, max / unit]).ticks(w < 400 ? 3 : 5).map((t) => t * unit);
  g.append('g').attr('class', 'axis').attr('transform', `translate(0,${h})`).call(d3.axisBottom(x).tickValues(ticks).tickFormat(bytes));
  tiers.forEach((t) => {
    const label = `${t.tier}: ${t.name}`;
    g.append('rect').attr('x', 0).attr('y', yb(label)).attr('width', x(t.capacityBytes)).attr('height', yb.bandwidth())
      .attr('fill', 'none').attr('stroke', '#a0aec0').attr('stroke-dasharray', '3 2');
    let at = 0;
    for (const [k, name, color] of keys) {
      const v = t[k] || 0;
      g.append('rect').attr('class', 'mem-bar').attr('data-tier', t.tier).attr('data-operand', name)
        .attr('x', x(at)).attr('y', yb(label)).attr('width', Math.max(0, x(at + v) - x(at))).attr('height', yb.bandwidth())
        .attr('fill', color)
        .on('mousemove', (event) => showTip(event, `${label}\n${name}: ${bytes(v)}`)).on('mouseleave', hideTip);
      at += v;
    }
    g.append('text').attr('x', 0).attr('y', yb(label) - 3)
      .text(`${label} — ${bytes(t.usedBytes)} of ${bytes(t.capacityBytes)}`);
  });
  return keys.map(([, n, c]) => ({ name: n, color: c }));
}

// A line chart of series [{name, points: [{x, y}]}]; log x when asked.
// `width` is used only while the container is hidden (0 wide).
export function lines(container, series, { xLabel, yLabel, yFormat = (v) => si(v), xFormat = null, logX = false, yFromZero = true, width = 760, height = 300, r = 3.5 }) {
  const { g, w, h } = frame(container, widthOf(container, width), height, { top: 10, right: 16, bottom: 40, left: 74 });
  const all = series.flatMap((s) => s.points).filter((p) => p.y !== undefined && p.y !== null);
  if (!all.length) {
    g.append('text').attr('x', w / 2).attr('y', h / 2).attr('text-anchor', 'middle').attr('class', 'muted').text('no data');
    return () => '#999';
  }
  const x = (logX ? d3.scaleLog() : d3.scaleLinear()).domain(d3.extent(all, (p) => p.x)).range([0, w]);
  if (!logX) x.nice();
  const [lo, hi] = d3.extent(all, (p) => p.y);
  const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.05 || 1;
  const y = d3.scaleLinear().domain(yFromZero ? [0, (hi || 1) * 1.08] : [lo - pad, hi + pad]).nice().range([h, 0]);
  g.append('g').attr('class', 'grid').call(d3.axisLeft(y).ticks(5).tickSize(-w).tickFormat('')).call((a) => a.select('.domain').remove());
  const xAxis = d3.axisBottom(x).ticks(6);
  // Log x: a tick at each value swept (batch 1, 8, 64), not at decades.
  if (logX) xAxis.tickValues([...new Set(all.map((p) => p.x))].sort((a, b) => a - b)).tickFormat(d3.format('~s'));
  else if (xFormat) xAxis.tickFormat(xFormat);
  if (w < 320) xAxis.ticks(4);
  g.append('g').attr('class', 'axis').attr('transform', `translate(0,${h})`).call(xAxis);
  g.append('g').attr('class', 'axis').call(d3.axisLeft(y).ticks(5).tickFormat(yFormat));
  g.append('text').attr('x', w / 2).attr('y', h + 34).attr('text-anchor', 'middle').text(xLabel);
  g.append('text').attr('transform', 'rotate(-90)').attr('x', -h / 2).attr('y', -60).attr('text-anchor', 'middle').text(yLabel);
  const color = d3.scaleOrdinal(d3.schemeTableau10).domain(series.map((s) => s.name));
  for (const s of series) {
    const pts = s.points.filter((p) => p.y !== undefined && p.y !== null);
    g.append('path').attr('fill', 'none').attr('stroke', color(s.name)).attr('stroke-width', 2)
      .attr('d', d3.line().x((p) => x(p.x)).y((p) => y(p.y))(pts));
    g.selectAll(null).data(pts).join('circle').attr('class', 'line-point').attr('data-series', s.name)
      .attr('data-x', (p) => p.x).attr('data-y', (p) => p.y)
      .attr('cx', (p) => x(p.x)).attr('cy', (p) => y(p.y)).attr('r', r).attr('fill', color(s.name))
      .on('mousemove', (event, p) => showTip(event, `${s.name}\n${xLabel}: ${xFormat ? xFormat(p.x) : p.x}\n${yLabel}: ${yFormat(p.y)}`))
      .on('mouseleave', hideTip);
  }
  return (name) => color(name);
}
