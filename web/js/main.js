// The UI's shell: the nav and its views. A view is a class with
// init(state), state(), redraw() (its charts at the current width) and a
// root element; adding one (Explore, Plan) is one entry in VIEWS.
import { readState, writeState } from './state.js';
import { AnalyzeView } from './analyze.js';
import { CompareView } from './compare.js';
import { ExploreView } from './explore.js';
import { PlanView } from './plan.js';
import { SimulateView } from './simulate.js';

const VIEWS = [
  { id: 'analyze', title: 'Analyze', View: AnalyzeView },
  { id: 'compare', title: 'Compare', View: CompareView },
  { id: 'explore', title: 'Explore', View: ExploreView },
  { id: 'simulate', title: 'Simulate', View: SimulateView },
  { id: 'plan', title: 'Plan', View: PlanView },
];

const nav = document.getElementById('nav');
const main = document.getElementById('views');
const mounted = new Map();
let current = null;

function show(id, state) {
  const spec = VIEWS.find((v) => v.id === id) || VIEWS[0];
  current = spec.id;
  nav.querySelectorAll('button').forEach((b) => b.classList.toggle('active', b.dataset.view === spec.id));
  for (const [vid, v] of mounted) v.root.hidden = vid !== spec.id;
  if (!mounted.has(spec.id)) {
    const root = document.createElement('section');
    root.className = 'view';
    root.id = `view-${spec.id}`;
    main.appendChild(root);
    const view = new spec.View(root, (s) => { if (current === spec.id) writeState(s); });
    mounted.set(spec.id, view);
    view.init(state).catch((e) => { root.dataset.state = 'error'; root.insertAdjacentHTML('afterbegin', `<p class="general-error">${e.message}</p>`); });
  } else {
    writeState(mounted.get(spec.id).state());
    redraw();  // drawn while hidden, or at another width
  }
}

// Charts are drawn at their container's width: redraw the shown view when
// that changes (a rotated phone, a resized window), once it settles.
let lastWidth = main.clientWidth;
let resizeTimer = null;
function redraw() {
  const view = mounted.get(current);
  if (view && view.redraw) view.redraw();
  lastWidth = main.clientWidth;
}
new ResizeObserver(() => {
  if (main.clientWidth === lastWidth) return;
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(redraw, 120);
}).observe(main);

for (const v of VIEWS) {
  const b = document.createElement('button');
  b.textContent = v.title;
  b.dataset.view = v.id;
  b.addEventListener('click', () => show(v.id, {}));
  nav.appendChild(b);
}
const initial = readState();
show(initial.view || 'analyze', initial);
