#!/usr/bin/env python3
"""Log-log plot of predicted against measured, as an SVG (no dependencies).

Reads CSV files with `metric`, `measured` and `predicted` columns: the
output of `ridgeline validate --format csv` (or profiles/cross_validation.csv)
and of the serving `validate --format csv` (its `mode` column is kept as
the series name). Each point is one row in its own unit (tok/s, ms, us),
one colour per metric; the diagonal is a perfect prediction.

  scripts/plot_predicted_vs_measured.py --out docs/validation-e2e.svg \
      --title "..." profiles/cross_validation.csv
"""
import argparse
import csv
import math
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def read_points(paths):
    points = []  # (series, measured, predicted)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                try:
                    m = float(row["measured"])
                    p = float(row["predicted"])
                except (KeyError, ValueError):
                    continue  # skipped rows have no prediction
                if m > 0 and p > 0:
                    points.append((row.get("metric", "?"), m, p))
    return points


def svg(points, title, size=560, pad=60):
    lo = min(min(m, p) for _, m, p in points)
    hi = max(max(m, p) for _, m, p in points)
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    span = hi_e - lo_e or 1
    inner = size - 2 * pad

    def x(v):
        return pad + (math.log10(v) - lo_e) / span * inner

    def y(v):
        return size - pad - (math.log10(v) - lo_e) / span * inner

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 170}" '
           f'height="{size}" font-family="sans-serif" font-size="11">',
           f'<rect width="{size + 170}" height="{size}" fill="white"/>',
           f'<text x="{size / 2}" y="20" text-anchor="middle" '
           f'font-size="13">{title}</text>']
    for e in range(lo_e, hi_e + 1):
        v = 10 ** e
        out.append(f'<line x1="{x(v):.1f}" y1="{pad}" x2="{x(v):.1f}" '
                   f'y2="{size - pad}" stroke="#ddd"/>')
        out.append(f'<line x1="{pad}" y1="{y(v):.1f}" x2="{size - pad}" '
                   f'y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x(v):.1f}" y="{size - pad + 15}" '
                   f'text-anchor="middle">1e{e}</text>')
        out.append(f'<text x="{pad - 5}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">1e{e}</text>')
    a, b = 10 ** lo_e, 10 ** hi_e
    out.append(f'<line x1="{x(a):.1f}" y1="{y(a):.1f}" x2="{x(b):.1f}" '
               f'y2="{y(b):.1f}" stroke="black"/>')
    for f in (1.25, 1 / 1.25):
        out.append(f'<line x1="{x(a):.1f}" y1="{y(a * f):.1f}" '
                   f'x2="{x(b):.1f}" y2="{y(b * f):.1f}" stroke="#888" '
                   f'stroke-dasharray="4,3"/>')
    out.append(f'<text x="{size / 2}" y="{size - 15}" text-anchor="middle">'
               f'measured (row unit)</text>')
    out.append(f'<text x="15" y="{size / 2}" text-anchor="middle" '
               f'transform="rotate(-90 15 {size / 2})">predicted (row unit)'
               f'</text>')
    series = sorted({s for s, _, _ in points})
    for i, s in enumerate(series):
        c = COLORS[i % len(COLORS)]
        for _, m, p in (q for q in points if q[0] == s):
            out.append(f'<circle cx="{x(m):.1f}" cy="{y(p):.1f}" r="3" '
                       f'fill="{c}" fill-opacity="0.7"/>')
        n = sum(1 for q in points if q[0] == s)
        out.append(f'<circle cx="{size + 5}" cy="{pad + 16 * i}" r="4" '
                   f'fill="{c}"/>')
        out.append(f'<text x="{size + 14}" y="{pad + 16 * i + 4}">{s} '
                   f'({n})</text>')
    out.append(f'<text x="{size + 5}" y="{pad + 16 * len(series) + 12}">'
               f'solid: y = x; dashed: +-25%</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="predicted vs measured")
    ap.add_argument("csv", nargs="+")
    args = ap.parse_args()
    points = read_points(args.csv)
    if not points:
        sys.exit("no row with a measured and a predicted value")
    with open(args.out, "w") as f:
        f.write(svg(points, args.title))


if __name__ == "__main__":
    main()
