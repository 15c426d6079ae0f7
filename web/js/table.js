// A table of rows whose column headers sort it (click again: reverse), and
// the mapping of a server error's field path to the form control it names.

// columns: [{key, title, text?, fmt?}]; rows: objects. sort: {key, dir}
// or null (rows in the order given). Each cell carries data-key and
// data-value (the unformatted value) so tests read the numbers.
export function sortableTable(table, columns, rows, sort, onSort) {
  const shown = [...rows];
  if (sort) {
    const { key, dir } = sort;
    shown.sort((a, b) => {
      const x = a[key]; const y = b[key];
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
  }
  const esc = (v) => String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  const cls = (c) => (c.text ? 't' : '');
  table.innerHTML = `<thead><tr>${columns.map((c) => `<th data-key="${esc(c.key)}" class="${cls(c)} ${sort && c.key === sort.key ? (sort.dir > 0 ? 'sorted-asc' : 'sorted-desc') : ''}">${esc(c.title)}</th>`).join('')}</tr></thead>
    <tbody>${shown.map((r) => `<tr${r.rowClass ? ` class="${r.rowClass}"` : ''}${r.rowId !== undefined ? ` data-id="${esc(r.rowId)}"` : ''}>${columns.map((c) => {
      const v = r[c.key];
      const text = v === undefined || v === null ? '–' : c.fmt ? c.fmt(v, r) : v;
      return `<td class="${cls(c)}" data-key="${esc(c.key)}" data-value="${esc(v ?? '')}">${esc(text)}</td>`;
    }).join('')}</tr>`).join('')}</tbody>`;
  if (onSort) {
    table.querySelectorAll('th').forEach((th) => th.addEventListener('click', () => {
      const k = th.dataset.key;
      const col = columns.find((c) => c.key === k);
      onSort({ key: k, dir: sort && sort.key === k ? -sort.dir : (col.text ? 1 : -1) });
    }));
  }
}

// fields: [{key, paths: ['traffic.rate', ...]}]. The field whose path is
// the longest prefix of `path` ("candidates.formats[0].weights" ->
// candidates.formats), or null.
export function fieldFor(fields, path) {
  let best = null;
  for (const f of fields) {
    for (const p of f.paths) {
      if ((path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)) && (!best || p.length > best.len)) {
        best = { f, len: p.length };
      }
    }
  }
  return best && best.f;
}
