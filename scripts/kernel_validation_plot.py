#!/usr/bin/env python3
"""Per-kind error tables and a log-log plot (SVG) of predicted against
measured kernel times, from the per-row results `ridgeline calibrate` (or
`ridgeline validate --format csv`) writes, joined by id with the measurement
file for each row's kind. Standard library only.

  scripts/kernel_validation_plot.py --results profiles/kernels/cross_validation.csv \
      --measurements ../shared/data/measurements/kernels-aic.csv \
      --svg docs/kernel-validation.svg --title "leave-one-platform-out"

Prints a Markdown table per (hardware, kind) with rows, median and p90
absolute error, soundness (share of rows not faster than the bound by more
than 5 %) over the rows with a bound, and how many rows have none (their
operands fit an L2 whose bandwidth no source gives: empty `bound`).
"""
import argparse
import csv
import math
import re
import sys


def kind_of(row):
    if row["model_id"] == "gemm-kernel":
        m = int(re.search(r"M=(\d+)", row["note"]).group(1))
        regime = "m<=16" if m <= 16 else ("m<=128" if m <= 128 else "m>128")
        return f"gemm {row['weight_format']} {regime}", f"gemm {row['weight_format']}"
    fmt = row["kv_format"]
    return f"attention kv {fmt}", f"attention kv {fmt}"


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    return v[max(0, min(len(v) - 1, math.ceil(p * len(v)) - 1))]


def median(values):
    v = sorted(values)
    n = len(v)
    if n == 0:
        return float("nan")
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--measurements", required=True)
    ap.add_argument("--svg")
    ap.add_argument("--title", default="")
    ap.add_argument("--every", type=int, default=4,
                    help="plot every N-th row (the tables use all rows)")
    args = ap.parse_args()
    meas = {r["id"]: r for r in csv.DictReader(open(args.measurements, newline=""))}
    points = []  # (hardware, kind, family-kind, measured, predicted, bound)
    for r in csv.DictReader(open(args.results, newline="")):
        if r["status"] != "ok" or r["id"] not in meas or not r["predicted"]:
            continue
        m = meas[r["id"]]
        kind, coarse = kind_of(m)
        points.append((m["hardware_id"], kind, coarse, float(r["measured"]),
                       float(r["predicted"]), float(r["bound"]) if r["bound"] else None))
    if not points:
        sys.exit("no evaluated rows")

    def table(key):
        groups = {}
        for p in points:
            groups.setdefault(key(p), []).append(p)
        print("| group | rows | median error | p90 error | sound (<= 5 % below bound) "
              "| bound unknown (L2) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name in sorted(groups):
            g = groups[name]
            e = [abs(p[4] - p[3]) / p[3] for p in g]
            bounded = [p for p in g if p[5] is not None]
            sound = (sum(1 for p in bounded if p[3] * 1.05 >= p[5]) / len(bounded)
                     if bounded else 1.0)
            print(f"| {name} | {len(g)} | {100 * median(e):.1f} % | {100 * pct(e, 0.9):.1f} % "
                  f"| {100 * sound:.1f} % | {len(g) - len(bounded)} |")
        print()

    table(lambda p: "all")
    table(lambda p: f"{p[0]} {p[2]}")
    table(lambda p: f"{p[0]} {p[1]}")

    if args.svg:
        write_svg(points[::args.every], args.svg, args.title)


def write_svg(points, path, title):
    w, h, pad = 640, 640, 70
    lo = min(min(p[3], p[4]) for p in points)
    hi = max(max(p[3], p[4]) for p in points)
    lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))

    def pos(v, size):
        return pad + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (size - 2 * pad)

    # Colour by GPU, shape by kind: 5 GPUs x 4 kinds stay apart.
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    hardware = sorted({p[0] for p in points})
    kinds = sorted({p[2] for p in points})

    def mark(shape, x, y, r, colour, opacity):
        style = f'fill="{colour}" fill-opacity="{opacity}"'
        if shape == 0:
            return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" {style}/>'
        if shape == 1:
            return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" {style}/>'
        if shape == 2:
            return (f'<polygon points="{x:.1f},{y - r:.1f} {x - r:.1f},{y + r:.1f} '
                    f'{x + r:.1f},{y + r:.1f}" {style}/>')
        return (f'<polygon points="{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} '
                f'{x - r:.1f},{y:.1f}" {style}/>')

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="24" text-anchor="middle" font-size="14">{title}</text>']
    decade = lo
    while decade <= hi * 1.0001:
        x, y = pos(decade, w), h - pos(decade, h)
        out.append(f'<line x1="{x:.1f}" y1="{pad}" x2="{x:.1f}" y2="{h - pad}" stroke="#ddd"/>')
        out.append(f'<line x1="{pad}" y1="{y:.1f}" x2="{w - pad}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{h - pad + 16}" text-anchor="middle">{decade:g}</text>')
        out.append(f'<text x="{pad - 6}" y="{y + 4:.1f}" text-anchor="end">{decade:g}</text>')
        decade *= 10
    out.append(f'<line x1="{pos(lo, w):.1f}" y1="{h - pos(lo, h):.1f}" x2="{pos(hi, w):.1f}" '
               f'y2="{h - pos(hi, h):.1f}" stroke="black" stroke-dasharray="4 3"/>')
    for p in points:
        c = colours[hardware.index(p[0]) % len(colours)]
        out.append(mark(kinds.index(p[2]) % 4, pos(p[3], w), h - pos(p[4], h), 1.8, c, 0.45))
    for i, hw in enumerate(hardware):
        y = pad + 8 + 16 * i
        out.append(mark(0, pad + 10, y, 4, colours[i % len(colours)], 1))
        out.append(f'<text x="{pad + 20}" y="{y + 4}">{hw}</text>')
    for i, k in enumerate(kinds):
        y = pad + 8 + 16 * (len(hardware) + 1 + i)
        out.append(mark(i % 4, pad + 10, y, 4, "#555", 1))
        out.append(f'<text x="{pad + 20}" y="{y + 4}">{k}</text>')
    out.append(f'<text x="{w / 2}" y="{h - 20}" text-anchor="middle">measured (us, log)</text>')
    out.append(f'<text x="18" y="{h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {h / 2})">predicted (us, log)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
