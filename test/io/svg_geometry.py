#!/usr/bin/env python3
"""Checks the geometry of the SVG pictures of irregular::io::write_leaves_svg as the examples
draw them: the cells tile the domain's rectangle (tests 'svg_geometry_np1', 'svg_geometry_np4').

Usage:
  svg_geometry.py run DIR RANKS --particles EXE --amm EXE --wator EXE -- MPIEXEC [ARGS...]
      runs the three examples at small sizes on RANKS ranks (`MPIEXEC -n RANKS ARGS... EXE ...`,
      concurrently) into DIR/<example>/, requires the pictures each must write, and checks every
      .svg found there: the element domain (particles: walkthrough, rectangles, hotspot; WaTor on
      a 120x72 ocean, with animals as points) and the cell domain (amm: ranks and levels).
  svg_geometry.py check [--aspect A] FILE.svg...
      checks the given files; A is the domain's height / width (1: the unit square).

What write_leaves_svg writes, and what is read here: <svg width height viewBox="0 0 W Htot">, a
background <rect width="100%" height="100%">, one <rect x y width height> per cell, optional
<circle> points, an optional <polyline> curve and an optional <text> caption in a band under the
drawing. The plot area is x in [0, W], y in [0, H] with H = W * A: the caption band (Htot - H)
must be empty without a caption and hold the caption's baseline otherwise. A picture of panels
(write_comparison_svg: one candidate map each) holds such an <svg> per panel, each checked alone.

Checks of each picture:
  - every cell rectangle is finite, non-empty and inside the plot area;
  - the cells' areas sum to W * H (relative 2e-5: the coordinates are printed with 6 significant
    digits);
  - the union of the cells is the plot area and no two cells overlap: the cell edges cut the plot
    area into a grid (edges closer than the rounding merged) and every grid box lies in exactly
    one cell (an exact pairwise check, in time of the grid's size);
  - points (circles) lie in the plot area.
Exit status 0 when every check passes, 1 otherwise (each failure printed with its file).
"""
import bisect
import math
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'
DIGITS = 1e-5  # relative rounding of a coordinate printed with 6 significant digits (with margin)


class Bad(Exception):
    """A geometry check failed (the message says which and where)."""


def number(el, name):
    v = el.get(name)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise Bad(f'<{el.tag.replace(NS, "")}> has {name}="{v}", not a number')
    if not math.isfinite(x):
        raise Bad(f'<{el.tag.replace(NS, "")}> has {name}="{v}"')
    return x


def clusters(values, eps):
    """Sorted representatives of `values`, those closer than eps to the previous one merged."""
    reps = []
    for v in sorted(values):
        if not reps or v - reps[-1] > eps:
            reps.append(v)
    return reps


def index_of(reps, v, eps):
    """The index of v's representative in reps (clusters() of a set holding v)."""
    i = bisect.bisect_left(reps, v - eps)
    assert i < len(reps) and abs(reps[i] - v) <= eps, (v, reps[max(0, i - 1):i + 2])
    return i


def check_svg(path, aspect):
    """Checks one picture, or each panel of a picture of panels; returns a one-line summary or
    raises Bad."""
    root = ET.parse(path).getroot()
    if root.tag != NS + 'svg':
        raise Bad(f'the root is <{root.tag}>, not <svg>')
    panels = root.findall(NS + 'svg')
    if not panels:
        return check_picture(root, aspect)
    summaries = []
    for k, panel in enumerate(panels):
        try:
            summaries.append(check_picture(panel, aspect))
        except Bad as e:
            raise Bad(f'panel {k}: {e}')
    return f'{len(panels)} panels: ' + '; '.join(summaries)


def check_picture(root, aspect):
    """Checks one <svg> element drawn as write_leaves_svg draws it."""
    box = root.get('viewBox', '').split()
    if len(box) != 4 or any(float(b) != 0 for b in box[:2]):
        raise Bad(f'viewBox="{root.get("viewBox")}" is not "0 0 W H"')
    W, Htot = float(box[2]), float(box[3])
    H = W * aspect
    eps = DIGITS * max(W, Htot)

    # The caption band under the plot area: empty without a caption, holding its baseline with one.
    texts = [number(t, 'y') for t in root.iter(NS + 'text')]
    if Htot < H - eps:
        raise Bad(f'the canvas is {W:g}x{Htot:g}, shorter than the plot area {W:g}x{H:g} (height/width {aspect:g})')
    if not texts and Htot > H + eps:
        raise Bad(f'the canvas is {W:g}x{Htot:g} but the plot area is {W:g}x{H:g} and there is no caption')
    for y in texts:
        if not H < y <= Htot + eps:
            raise Bad(f'a caption at y = {y:g} is not in the band under the plot area (y in ({H:g}, {Htot:g}])')

    cells = []
    for r in root.iter(NS + 'rect'):
        if r.get('width', '').endswith('%'):
            continue  # the background
        x, y, w, h = (number(r, k) for k in ('x', 'y', 'width', 'height'))
        if w <= 0 or h <= 0:
            raise Bad(f'an empty cell at ({x:g}, {y:g}): {w:g}x{h:g}')
        if x < -eps or y < -eps or x + w > W + eps or y + h > H + eps:
            raise Bad(f'the cell [{x:g}, {x + w:g}] x [{y:g}, {y + h:g}] leaves the plot area [0, {W:g}] x [0, {H:g}]')
        cells.append((x, y, x + w, y + h))
    if not cells:
        raise Bad('no cell rectangles')
    for c in root.iter(NS + 'circle'):
        cx, cy = number(c, 'cx'), number(c, 'cy')
        if not (-eps <= cx <= W + eps and -eps <= cy <= H + eps):
            raise Bad(f'a point at ({cx:g}, {cy:g}) lies outside the plot area [0, {W:g}] x [0, {H:g}]')

    area = sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in cells)
    if abs(area - W * H) > 2 * DIGITS * W * H:
        raise Bad(f'the {len(cells)} cells cover {area:.6g} px^2, {100 * area / (W * H):.4g}% of the plot area '
                  f'{W:g}x{H:g} = {W * H:.6g} px^2')

    span = (f'the cells span [{min(c[0] for c in cells):g}, {max(c[2] for c in cells):g}] x '
            f'[{min(c[1] for c in cells):g}, {max(c[3] for c in cells):g}]')
    # Tiling: the grid cut by every cell edge (and the plot area's border); each grid box is marked
    # by the cell holding it, and must be marked exactly once.
    xs = clusters([v for c in cells for v in (c[0], c[2])] + [0, W], eps)
    ys = clusters([v for c in cells for v in (c[1], c[3])] + [0, H], eps)
    grid = [bytearray(len(xs) - 1) for _ in range(len(ys) - 1)]
    owner = {}  # (row, column of a cell's first box) -> the cell, to name both of an overlap
    for c in cells:
        c0, c1 = index_of(xs, c[0], eps), index_of(xs, c[2], eps)
        r0, r1 = index_of(ys, c[1], eps), index_of(ys, c[3], eps)
        if c0 == c1 or r0 == r1:
            raise Bad(f'the cell [{c[0]:g}, {c[2]:g}] x [{c[1]:g}, {c[3]:g}] is thinner than the rounding')
        for r in range(r0, r1):
            hit = grid[r].find(1, c0, c1)
            if hit >= 0:
                other = next((o for o in cells if o[0] <= xs[hit] + eps and xs[hit + 1] <= o[2] + eps and
                              o[1] <= ys[r] + eps and ys[r + 1] <= o[3] + eps and o is not c), None)
                raise Bad(f'the cells [{c[0]:g}, {c[2]:g}] x [{c[1]:g}, {c[3]:g}] and '
                          f'[{other[0]:g}, {other[2]:g}] x [{other[1]:g}, {other[3]:g}] overlap ({span})')
            grid[r][c0:c1] = b'\x01' * (c1 - c0)
    for r, row in enumerate(grid):
        gap = row.find(0)
        if gap >= 0:
            raise Bad(f'no cell covers [{xs[gap]:g}, {xs[gap + 1]:g}] x [{ys[r]:g}, {ys[r + 1]:g}] of the plot area '
                      f'[0, {W:g}] x [0, {H:g}] ({span})')
    return f'{len(cells)} cells tile {W:g}x{H:g}'


def check_files(files, aspect):
    """Checks each file; prints one line per file; returns the number that failed."""
    failed = 0
    for f in files:
        try:
            print(f'ok    {f}: {check_svg(f, aspect)}')
        except (Bad, ET.ParseError, OSError) as e:
            print(f'FAIL  {f}: {e}')
            failed += 1
    return failed


# The examples at small sizes: options (the output directory is appended or given with --out),
# the pictures each must write, and the domain's height / width.
WATOR_W, WATOR_H = 120, 72


def examples(out):
    return {
        # The walkthrough's domain (2 swirl steps), the rectangles run (and the advisor's panels of
        # its candidate maps) and the hotspot story.
        'particles': (['--quick', '--steps', '2', out['particles']],
                      ['showcase_morton.svg', 'showcase_hilbert.svg', 'showcase_peano.svg', 'domain_step0.svg',
                       'domain_step2.svg', 'rectangles.svg', 'advisor.svg', 'hotspot_first.svg',
                       'hotspot_last.svg'], 1.0),
        # The cell domain: the adaptive multigrid's hierarchy by rank and by level.
        'amm': (['--problem', '2', '--l0', '4', '--lmax', '6', '--hold', '3', '--stages', '3', '--strategies', 'RA',
                 '--out', out['amm']], ['amm_ranks.svg', 'amm_levels.svg'], 1.0),
        # A non-square ocean whose leaves (at most 32 occupants) are of two sizes, a picture every
        # 2 steps.
        'wator': (['--width', str(WATOR_W), '--height', str(WATOR_H), '--steps', '4', '--leaf-capacity', '32',
                   '--progress', '0', '--svg-every', '2', '--out', out['wator']],
                  [f'wator_SFC_balanced_step{s}.svg' for s in (0, 2, 4)], WATOR_H / WATOR_W),
    }


def run(argv):
    if len(argv) < 2 or '--' not in argv:
        sys.exit(__doc__)
    split = argv.index('--')
    launcher, argv = argv[split + 1:], argv[:split]
    base, ranks, rest = argv[0], argv[1], argv[2:]
    exes = dict(zip(rest[0::2], rest[1::2]))
    if sorted(exes) != ['--amm', '--particles', '--wator'] or not launcher:
        sys.exit(__doc__)
    out = {name: os.path.join(base, name) for name in ('particles', 'amm', 'wator')}
    specs = examples(out)
    jobs = {}
    start = time.monotonic()
    for name, (args, _, _) in specs.items():
        shutil.rmtree(out[name], ignore_errors=True)
        os.makedirs(out[name])
        cmd = [launcher[0], '-n', ranks] + launcher[1:] + [exes['--' + name]] + args
        jobs[name] = (cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    failed = 0
    # The slowest (particles: its hotspot story sleeps) last, so the others are checked meanwhile.
    for name in ('amm', 'wator', 'particles'):
        cmd, job = jobs[name]
        log = job.communicate()[0]
        print(f'{name} ran in {time.monotonic() - start:.1f} s on {ranks} ranks')
        if job.returncode != 0:
            print(log)
            print(f'FAIL  {name}: exit status {job.returncode} from {" ".join(cmd)}')
            failed += 1
        _, wanted, aspect = specs[name]
        found = sorted(f for f in os.listdir(out[name]) if f.endswith('.svg'))
        for f in wanted:
            if f not in found:
                print(f'FAIL  {name}: {f} was not written (found: {", ".join(found) or "none"})')
                failed += 1
        failed += check_files([os.path.join(out[name], f) for f in found], aspect)
    return failed


def main():
    argv = sys.argv[1:]
    if argv and argv[0] == 'run':
        failed = run(argv[1:])
    elif argv and argv[0] == 'check':
        aspect, files = 1.0, argv[1:]
        if files[:1] == ['--aspect']:
            aspect, files = float(files[1]), files[2:]
        if not files:
            sys.exit(__doc__)
        failed = check_files(files, aspect)
    else:
        sys.exit(__doc__)
    print(f'{failed} failure(s)' if failed else 'every picture tiles its plot area')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
