#!/usr/bin/env python3
"""Runs the same benchmarks from two builds, alternated, and prints one before/after table.

usage: bench/alternate.py BEFORE_BUILD AFTER_BUILD [--runs N] [--ranks P] [--only TEXT]

Each run of each benchmark alternates the two builds (before, after, before, after, ...), so a
change of machine load hits both alike. Every markdown table the benchmarks print is parsed; the
figures listed in FIGURES are reported as the median (min-max) over the runs, with the ratio of
the medians and the spread between repeats of the same build (the noise a ratio must exceed).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

# (benchmark command, section heading regex, row label regex, column regex, label)
FIGURES = [
    ('bench_anchors --mesh-only', r'anchor mesh', r'^irregular IrregularDomain::rebalance \(Sfc', r'^wall', 'anchors: IrregularDomain::rebalance wall ms'),
    ('bench_anchors --mesh-only', r'anchor mesh', r'^p4est_partition_ext', r'^wall', 'anchors: p4est_partition_ext wall ms'),
    ('bench_cells --reps 5', r'circle mesh', r'^refine', r'^ours wall', 'cells 2D: refine wall ms'),
    ('bench_cells --reps 5', r'circle mesh', r'^balance', r'^ours wall', 'cells 2D: balance wall ms'),
    ('bench_cells --reps 5', r'circle mesh', r'^rebalance', r'^ours wall', 'cells 2D: rebalance wall ms'),
    ('bench_cells --reps 5', r'circle mesh', r'^rebalance', r'^ours / p4est wall', 'cells 2D: rebalance / p4est'),
    ('bench_cells --reps 5', r'sphere mesh', r'^refine', r'^ours wall', 'cells 3D: refine wall ms'),
    ('bench_cells --reps 5', r'sphere mesh', r'^balance', r'^ours wall', 'cells 3D: balance wall ms'),
    ('bench_cells --reps 5', r'sphere mesh', r'^rebalance', r'^ours wall', 'cells 3D: rebalance wall ms'),
    ('bench_cells --reps 5', r'sphere mesh', r'^rebalance', r'^ours / p4est wall', 'cells 3D: rebalance / p4est'),
    ('bench_ghost', r'Ghost layer construction', r'^ours IFP collect_ghosts', r'^wall', 'ghost: IFP collect_ghosts wall ms'),
    ('bench_ghost', r'Ghost layer construction', r'^ours RA collect_ghosts', r'^wall', 'ghost: RA collect_ghosts wall ms'),
    ('bench_ghost', r'Ghost layer construction', r'^p4est_ghost_new\(FULL\)', r'^wall', 'ghost: p4est_ghost_new wall ms'),
    ('bench_ghost', r'Ghost layer construction', r'^ours exchange_ghosts', r'^wall', 'ghost: exchange_ghosts wall us'),
    ('bench_dist --sort', r'sort study', r'^2 \| Morton \| 10000000 \| optimal \| 1 ', r'^build ms', 'dist --sort: build ms, 1 rank'),
    ('bench_dist --sort', r'sort study', r'^2 \| Morton \| 10000000 \| optimal \| 2 ', r'^build ms', 'dist --sort: build ms, 2 ranks'),
]


def number(cell):
    m = re.match(r'^\s*\*{0,2}(-?[0-9.]+(?:e[-+]?[0-9]+)?)', cell)
    return float(m.group(1)) if m else None


def parse(text):
    """{(section, row key, column): value}; a row key is its leading cells joined by ' | '."""
    out = {}
    section = ''
    header = None
    for line in text.splitlines():
        if line.startswith('#'):
            section = line
            header = None
            continue
        if not line.startswith('|'):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if header is None:
            header = cells
            continue
        if set(''.join(cells)) <= set('-: '):
            continue
        key = ' | '.join(cells) + ' '
        for name, cell in zip(header, cells):
            v = number(cell)
            if v is not None:
                out[(section, key, name)] = v
    return out


def pick(parsed, sec, row, col):
    for (s, k, c), v in parsed.items():
        if re.search(sec, s) and re.search(row, k) and re.search(col, c):
            return v
    return None


def run(build, command, ranks):
    args = ['mpiexec', '-n', str(ranks), '--oversubscribe', os.path.join(build, 'bench', command.split()[0])]
    args += command.split()[1:]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('before')
    ap.add_argument('after')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--only', default='', help='run only the benchmarks whose command contains this')
    a = ap.parse_args()
    values = {}
    for command in dict.fromkeys(f[0] for f in FIGURES if a.only in f[0]):
        for r in range(a.runs):
            for which, build in (('before', a.before), ('after', a.after)):
                parsed = parse(run(build, command, a.ranks))
                for cmd, sec, row, col, label in FIGURES:
                    if cmd == command:
                        v = pick(parsed, sec, row, col)
                        if v is not None:
                            values.setdefault((label, which), []).append(v)
            print(f'{command}: run {r + 1}/{a.runs}', file=sys.stderr)
    print('| figure | before: median (min-max) | after: median (min-max) | after / before | spread of repeats |')
    print('|---|---|---|---:|---:|')
    for cmd, *_, label in FIGURES:
        if a.only not in cmd:
            continue
        b, f = values.get((label, 'before')), values.get((label, 'after'))
        if not b or not f:
            print(f'| {label} | n/a | n/a | | |')
            continue
        mb, mf = statistics.median(b), statistics.median(f)
        spread = max((max(x) - min(x)) / statistics.median(x) for x in (b, f) if statistics.median(x))
        ratio = mf / mb if mb else float('nan')
        print(f'| {label} | {mb:.3g} ({min(b):.3g}-{max(b):.3g}) | {mf:.3g} ({min(f):.3g}-{max(f):.3g}) | '
              f'{ratio:.2f} | {spread:.0%} |')


if __name__ == '__main__':
    main()
