// A view with a form whose every change runs one unary RPC (Plan,
// Simulate): debounced runs, one status line, errors shown at the form
// field they name, and only the newest answer rendered.
import { rpc, ApiError } from './api.js';
import { fieldFor } from './table.js';

export class FormView {
  // `fields`: the view's FIELDS (key and request field path, table.js).
  constructor(root, onState, template, fields) {
    this.root = root;
    this.onState = onState;
    this.fields = fields;
    root.innerHTML = template;
    this.form = root.querySelector('form');
    this.response = null;
    this.seq = 0;
    root.querySelector('[data-role=run]').addEventListener('click', () => this.run());
    this.form.addEventListener('change', () => this.schedule());
    root.querySelectorAll('[data-export]').forEach((b) => b.addEventListener('click', () => this.export(b.dataset.export)));
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), 300);
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

  showError(err) {
    const f = err.field ? fieldFor(this.fields, err.field) : null;
    const target = f && this.root.querySelector(`.field-error[data-for="${f.key}"]`);
    (target || this.root.querySelector('.general-error')).textContent = err.message;
    if (f && this.form.elements[f.key]) this.form.elements[f.key].classList.add('invalid');
    this.setStatus(err.code || 'error', true);
  }

  // Calls `method` with this.request(), `busy` in the status meanwhile; a
  // newer run supersedes this one. On an answer: this.response, the status
  // `done(resp)`, render(), and data-state / data-seq for tests.
  async runRpc(method, busy, done) {
    clearTimeout(this.timer);
    const seq = ++this.seq;
    if (this.abort) this.abort.abort();
    const abort = (this.abort = new AbortController());
    this.onState(this.state());
    this.setStatus(busy);
    let resp;
    try {
      resp = await rpc(method, this.request(), { signal: abort.signal });
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
    this.setStatus(done(resp));
    this.render();
    this.root.dataset.state = 'ready';
    this.root.dataset.seq = String(seq);
  }

  redraw() { if (this.response) this.render(); }
}
