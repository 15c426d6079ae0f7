// An objective-vs-objective scatter (SVG, vendored d3) shared by Explore
// and Plan: every point, the Pareto front highlighted, and for a front of
// exactly these two objectives the staircase through it.
import { si } from './format.js';
import { widthOf, showTip, hideTip } from './charts.js';

const d3 = window.d3;

// Tick labels: 3 significant digits without trailing zeros (0.02, 150,
// 2.5 k), SI prefixes from a thousand up.
function short(v) {
  if (Math.abs(v) >= 1e3) return si(v).replace(/\.?0+ /, ' ');
  return String(Number(Number(v).toPrecision(3)));
}

// Log scale when every value is positive and they span two decades or
// more (speed against batch, cost against bandwidth): a linear axis would
// crush all but the largest values into one corner.
function scaleFor(values) {
  const lo = d3.min(values);
  const hi = d3.max(values);
  const log = lo > 0 && hi / lo >= 100;
  const s = (log ? d3.scaleLog() : d3.scaleLinear()).domain(lo === hi ? [lo * 0.9 || -1, hi * 1.1 || 1] : [lo, hi]);
  if (log) s.domain([lo / 1.25, hi * 1.25]);
  else s.nice();
  return { s, log };
}

// points: [{x, y, kind: 'front'|'feasible'|'infeasible', id, tip}];
// opts: {xLabel, yLabel, staircase: {xMax: bool, yMax: bool} or null,
// width, height}. Points without a finite x and y are skipped (an objective
// the part cannot give). Returns the number of points drawn.
// `width` is used only while the container is hidden (0 wide): the chart
// takes its container's width.
export function paretoScatter(container, points, { xLabel, yLabel, staircase = null, width: hiddenWidth = 760, height = 380 }) {
  const root = d3.select(container);
  root.selectAll('*').remove();
  const width = widthOf(container, hiddenWidth);
  const margin = { top: 12, right: 18, bottom: 44, left: width < 640 ? 64 : 78 };
  const svg = root.append('svg').attr('viewBox', `0 0 ${width} ${height}`).attr('width', width).attr('height', height);
  const g = svg.append('g').attr('transform', `translate(${margin.left},${margin.top})`);
  const w = width - margin.left - margin.right;
  const h = height - margin.top - margin.bottom;
  const drawn = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (!drawn.length) {
    g.append('text').attr('x', w / 2).attr('y', h / 2).attr('text-anchor', 'middle').attr('class', 'muted').text('no point to draw');
    return 0;
  }
  const xs = scaleFor(drawn.map((p) => p.x));
  const ys = scaleFor(drawn.map((p) => p.y));
  const x = xs.s.range([0, w]);
  const y = ys.s.range([h, 0]);
  // A log axis has a tick at every 1..9 x 10^k; label only those d3 picks
  // for the count (1, 2, 5 per decade), the others stay bare ticks.
  const tickFmt = (sc, log, count) => {
    if (!log) return short;
    const keep = sc.tickFormat(count);
    return (v) => (keep(v) === '' ? '' : short(v));
  };
  g.append('g').attr('class', 'grid').call(d3.axisLeft(y).ticks(6).tickSize(-w).tickFormat('')).call((a) => a.select('.domain').remove());
  g.append('g').attr('class', 'axis').attr('transform', `translate(0,${h})`).call(d3.axisBottom(x).ticks(w < 400 ? 4 : 7).tickFormat(tickFmt(x, xs.log, w < 400 ? 4 : 7)));
  g.append('g').attr('class', 'axis').call(d3.axisLeft(y).ticks(6).tickFormat(tickFmt(y, ys.log, 6)));
  g.append('text').attr('x', w / 2).attr('y', h + 36).attr('text-anchor', 'middle')
    .text(`${xLabel}${xs.log ? ' (log)' : ''}`);
  g.append('text').attr('transform', 'rotate(-90)').attr('x', -h / 2).attr('y', -margin.left + 16).attr('text-anchor', 'middle')
    .text(`${yLabel}${ys.log ? ' (log)' : ''}`);

  const front = drawn.filter((p) => p.kind === 'front');
  if (staircase && front.length > 1) {
    // Sorted by x from its best end: each next point gives up x for y.
    const sorted = [...front].sort((a, b) => (staircase.xMax ? b.x - a.x : a.x - b.x));
    const path = [];
    sorted.forEach((p, i) => {
      if (i > 0) path.push([x(p.x), y(sorted[i - 1].y)]);
      path.push([x(p.x), y(p.y)]);
    });
    g.append('path').attr('class', 'front-line').attr('d', d3.line()(path));
  }
  // Drawn back to front: infeasible, feasible, then the front on top.
  const order = { infeasible: 0, feasible: 1, front: 2 };
  g.selectAll('circle.scatter-point').data([...drawn].sort((a, b) => order[a.kind] - order[b.kind])).join('circle')
    .attr('class', (p) => `scatter-point ${p.kind}${p.kind === 'front' ? ' front-point' : ''}`)
    .attr('data-id', (p) => p.id)
    .attr('data-x', (p) => p.x)
    .attr('data-y', (p) => p.y)
    .attr('cx', (p) => x(p.x))
    .attr('cy', (p) => y(p.y))
    .attr('r', (p) => (p.kind === 'front' ? 5.5 : 3.5))
    .on('mousemove', (event, p) => showTip(event, p.tip))
    .on('mouseleave', hideTip);
  return drawn.length;
}
