#!/usr/bin/python3
"""Kernel rows of one more GPU from aiconfigurator's tables, at the shapes of kernels-aic.csv.

kernels-aic.csv (../shared/data/measurements) holds TensorRT-LLM GEMM and decode-attention
timings of H100 SXM and A100 SXM. This script writes the same kind of rows for another GPU of
the same aiconfigurator commit and TensorRT-LLM version, at the shapes of every --every'th H100
row there, so that the kernel fit can be tested on GPUs it never saw (leave one platform out).

Input: the GPU's gemm_perf and generation_attention_perf tables as JSON lines
(dump_parquet.mjs). Values are the tables' latencies, ms converted to us (an exact decimal
shift); nothing else is changed. Rows are printed as CSV in the columns of kernels-aic.csv.
"""
import argparse
import csv
import json
import math
import re
import sys

COMMIT = '095f58a'
TABLES = 'aic-core/src/aiconfigurator_core/systems/data/{system}/{kind}/trtllm/{version}/{table}.parquet'
FORMATS = {'bfloat16': 'bf16', 'fp8': 'fp8'}
MIB = 1 << 20


def gemm_key(fmt, m, n, k):
    return ('gemm', fmt, m, n, k)


def attention_key(kv_format, batch, q_heads, kv_heads, head_dim, step):
    return ('attention', kv_format, batch, q_heads, kv_heads, head_dim, step)


def read_tables(gemm_path, attention_path):
    """Latency (ms) and device name by shape key; full attention, one new token only."""
    latency, device = {}, None
    for line in open(gemm_path):
        r = json.loads(line)
        if r['gemm_dtype'] in FORMATS:
            latency[gemm_key(FORMATS[r['gemm_dtype']], r['m'], r['n'], r['k'])] = r['latency']
            device = r['device']
    for line in open(attention_path):
        r = json.loads(line)
        if (r['kv_cache_dtype'] in FORMATS and r['window_size'] == 0 and r['isl'] == 1
                and r['beam_width'] == 1 and r['attn_dtype'] == 'bfloat16'):
            key = attention_key(FORMATS[r['kv_cache_dtype']], r['batch_size'], r['num_heads'],
                                r['num_key_value_heads'], r['head_dim'], r['step'])
            latency[key] = r['latency']
    return latency, device


def shape_key(row):
    """The shape key of a kernels-aic.csv row, from its columns and note."""
    note = row['note']
    if row['model_id'] == 'gemm-kernel':
        m, n, k = map(int, re.search(r'M=(\d+) N=(\d+) K=(\d+)', note).groups())
        return gemm_key(row['weight_format'], m, n, k)
    q, kv, dim = map(int, re.search(r'(\d+) q heads = (\d+) kv heads, head_dim (\d+)',
                                    note).groups())
    step = int(re.search(r'aic step (\d+)', note).group(1))
    return attention_key(row['kv_format'], int(row['batch']), q, kv, dim, step)


def size_text(nbytes):
    return f'{nbytes / MIB:g} MiB' if nbytes >= MIB else f'{nbytes / 1024:g} KiB'


def l2_text(weight_bytes, l2_mib):
    """The 1.3.0rc20 collector cycles min(5, ceil(L2 / weight bytes)) weight copies."""
    if l2_mib is None:
        return 'L2 size unknown (not in hardware_specs.csv), weights warm or cold'
    copies = min(5, math.ceil(l2_mib * MIB / weight_bytes))
    if copies * weight_bytes >= l2_mib * MIB:
        return (f'weights rotated over {copies} copies of {size_text(weight_bytes)} '
                f'>= L2 {l2_mib:g} MiB (cold)')
    return f'{copies} copies of {size_text(weight_bytes)} fit in the {l2_mib:g} MiB L2 (warm)'


def gemm_note(key, l2_mib, device, origin):
    _, fmt, m, n, k = key
    weight_bytes = n * k * (2 if fmt == 'bf16' else 1)
    what = ('bf16 Linear, no quantisation' if fmt == 'bf16' else
            'fp8 per-tensor W8A8 Linear, dynamic activation quantisation inside the call')
    return (f'kernel shape: GEMM M={m} N={n} K={k}; {what}; {l2_text(weight_bytes, l2_mib)}; '
            f'device {device}; shape of kernels-aic.csv {origin}; the rest as that file '
            '(data/measurements/README.md)')


def attention_note(key, device, origin):
    _, kv_format, batch, q, kv, dim, step = key
    return (f'kernel shape: attention op only: {q} q heads = {kv} kv heads, head_dim {dim}; '
            f'{kv_format} KV; kv_len = prompt_len = {step + 1} (aic step {step} + the new token), '
            f'batch {batch}; the same KV cache every call (L2-warm where it fits); '
            f'device {device}; shape of kernels-aic.csv {origin}; the rest as that file '
            '(data/measurements/README.md)')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--shapes', required=True, help='kernels-aic.csv (its H100 rows give the shapes)')
    ap.add_argument('--gemm', required=True, help='gemm_perf as JSON lines')
    ap.add_argument('--attention', required=True, help='generation_attention_perf as JSON lines')
    ap.add_argument('--system', required=True, help="aiconfigurator's folder, e.g. h200_sxm")
    ap.add_argument('--hardware-id', required=True)
    ap.add_argument('--l2-mib', type=float, help='L2 size from hardware_specs.csv (omit if unknown)')
    ap.add_argument('--version', default='1.3.0rc20', help='TensorRT-LLM version of the tables')
    ap.add_argument('--id-prefix', required=True, help='row ids are PREFIX0001, PREFIX0002, ...')
    ap.add_argument('--every', type=int, default=3, help='keep every N-th H100 shape')
    ap.add_argument('--header', action='store_true')
    args = ap.parse_args()

    latency, device = read_tables(args.gemm, args.attention)
    writer = csv.writer(sys.stdout, lineterminator='\n')
    shapes = csv.DictReader(open(args.shapes))
    if args.header:
        writer.writerow(shapes.fieldnames)
    h100 = [r for r in shapes if r['hardware_id'] == 'nvidia-h100-sxm-80gb']
    written = missing = 0
    for index, row in enumerate(h100):
        if index % args.every:
            continue
        key = shape_key(row)
        if key not in latency:
            missing += 1
            continue
        gemm = key[0] == 'gemm'
        kind, table = ('gemm', 'gemm_perf') if gemm else ('attention', 'generation_attention_perf')
        source = f'github:ai-dynamo/aiconfigurator@{COMMIT}:' + TABLES.format(
            system=args.system, kind=kind, version=args.version, table=table)
        origin = f'row {row["id"]}'
        note = (gemm_note(key, args.l2_mib, device, origin) if gemm
                else attention_note(key, device, origin))
        written += 1
        writer.writerow([
            f'{args.id_prefix}{written:04d}', args.hardware_id, 1, 1, row['model_id'],
            row['weight_format'], row['weight_bits_effective'], row['kv_format'], row['batch'],
            row['prompt_len'], row['gen_len'], f'tensorrt-llm-{args.version}', 'kernel_us',
            repr(latency[key] * 1000.0), 'us', 1, source, note])
    print(f'{args.hardware_id}: {written} rows, {missing} H100 shapes not in its tables',
          file=sys.stderr)


if __name__ == '__main__':
    main()
