// The URL holds each view's state, so a link reproduces the view:
// /?model=llama-3-8b&hardware=nvidia-h100-sxm-80gb&batch=8&prompt=1024&gen=128
// (view=analyze is the default; view=compare for a sweep).

export function readState() {
  const out = {};
  for (const [k, v] of new URLSearchParams(location.search)) out[k] = v;
  return out;
}

// Replaces the query with `state` (empty values dropped); no history entry
// per keystroke.
export function writeState(state) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const url = `${location.pathname}?${q.toString()}`;
  if (url !== `${location.pathname}${location.search}`) history.replaceState(null, '', url);
}
