// The HTTP/JSON API of ridgeline-server (same origin): unary RPCs as
// POST /v1/<Method>, streaming ones as newline-delimited JSON.

// An error of the API: the gRPC code name, the server's message and the
// request field it names ("" when none).
export class ApiError extends Error {
  constructor(status, body) {
    super(body.message || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || 'UNKNOWN';
    this.field = body.field || '';
  }
}

async function errorOf(resp) {
  let body = {};
  try { body = await resp.json(); } catch (e) { body = { message: `HTTP ${resp.status}` }; }
  return new ApiError(resp.status, body);
}

export async function rpc(method, request, { signal } = {}) {
  const resp = await fetch(`/v1/${method}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(request), signal,
  });
  if (!resp.ok) throw await errorOf(resp);
  return resp.json();
}

// Calls onItem(message) for every line as it arrives; resolves when the
// stream ends. A trailing {"error": {...}} line rejects with an ApiError.
export async function stream(method, request, onItem, { signal } = {}) {
  const resp = await fetch(`/v1/${method}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(request), signal,
  });
  if (!resp.ok) throw await errorOf(resp);
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const handle = (line) => {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (msg.error && Object.keys(msg).length === 1) throw new ApiError(200, msg.error);
    onItem(msg);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      handle(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  }
  handle(buffered);
}

// The catalogs, fetched once.
let catalogs = null;
export function loadCatalogs() {
  if (!catalogs) {
    catalogs = Promise.all([rpc('ListModels', {}), rpc('ListHardware', {})])
      .then(([m, h]) => ({ models: m.models, hardware: h.hardware }));
    catalogs.catch(() => { catalogs = null; });
  }
  return catalogs;
}

const hardwareCache = new Map();
export function getHardware(id) {
  if (!hardwareCache.has(id)) {
    const p = rpc('GetHardware', { id }).then((r) => r.hardware);
    p.catch(() => hardwareCache.delete(id));
    hardwareCache.set(id, p);
  }
  return hardwareCache.get(id);
}
