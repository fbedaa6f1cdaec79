#!/usr/bin/env python3
"""Reads the VTKHDF files of irregular::io::write_vtkhdf and io::VtkHdfSeries with VTK's own
reader (vtkHDFReader) and checks each against what the writing program computed (test
'vtkhdf_read_with_vtk').

Usage: read_vtkhdf.py DIR WRITER...
  runs WRITER (e.g. `mpiexec -n 3 test/mpi_vtkhdf [files]`) with IRREGULAR_VTKHDF_OUT=DIR, where
  the program keeps its files and appends one line per file to DIR/expected.txt:
    <file> cells N points M bounds x0 x1 y0 y1 z0 z1 sum <field> S
    <index>.vtkhdf.series steps K cells N
  then reads every file named there: the number of cells and points, the bounds, and the sum of
  the field (NaN rows left out) must be what the program wrote; every step of a series must read.

Usage: read_vtkhdf.py --series INDEX [--min-steps K] [--fields A,B,...] [-- WRITER...]
  checks the series INDEX (a .vtkhdf.series file): with a WRITER, INDEX's directory is removed
  first and WRITER run (it must exit 0 and write the series); then the index must list at least K
  steps (default 1) at increasing times, and every file it lists must read with vtkHDFReader,
  have cells, and have each field A, B, ... as cell data with one tuple per cell.

Run it with /usr/bin/python3, where Debian's python3-vtk9 lives: a missing vtk fails the test,
since scripts/bootstrap installs it.
"""
import json
import math
import pathlib
import shutil
import subprocess
import sys


def fail(msg):
    print('FAIL:', msg)
    sys.exit(1)


def read(vtk, path):
    reader = vtk.vtkHDFReader()
    if not reader.CanReadFile(str(path)):
        fail(f'vtkHDFReader cannot read {path}')
    reader.SetFileName(str(path))
    reader.Update()
    return reader.GetOutput()


def field_sum(grid, name):
    array = grid.GetCellData().GetArray(name)
    if array is None:
        fail(f'no cell array {name}')
    total = 0.0
    for t in range(array.GetNumberOfTuples()):
        for c in range(array.GetNumberOfComponents()):
            v = array.GetComponent(t, c)
            if not math.isnan(v):
                total += v
    return total


def read_checked(vtk, path):
    """The grid in `path`, or a failure when the file is missing or VTK reports an error."""
    if not path.is_file():
        fail(f'{path} is missing')
    errors = []
    reader = vtk.vtkHDFReader()
    reader.AddObserver('ErrorEvent', lambda obj, event: errors.append(event))
    # VTK reports some read errors only through its output window: capture them, never print.
    window = vtk.vtkStringOutputWindow()
    previous = vtk.vtkOutputWindow.GetInstance()
    vtk.vtkOutputWindow.SetInstance(window)
    try:
        if not reader.CanReadFile(str(path)):
            fail(f'vtkHDFReader cannot read {path}')
        reader.SetFileName(str(path))
        reader.Update()
    finally:
        vtk.vtkOutputWindow.SetInstance(previous)
    text = window.GetOutput().strip()
    if errors or 'ERROR' in text:
        fail(f'vtkHDFReader reported an error on {path}: {text[:500]}')
    return reader.GetOutput()


def check_series(vtk, args):
    """--series INDEX [--min-steps K] [--fields A,B] [-- WRITER...] (see the usage above)."""
    writer = []
    if '--' in args:
        writer = args[args.index('--') + 1:]
        args = args[:args.index('--')]
    index, min_steps, fields = None, 1, []
    i = 0
    while i < len(args):
        if args[i] == '--series' and i + 1 < len(args):
            index = pathlib.Path(args[i + 1])
        elif args[i] == '--min-steps' and i + 1 < len(args):
            min_steps = int(args[i + 1])
        elif args[i] == '--fields' and i + 1 < len(args):
            fields = [f for f in args[i + 1].split(',') if f]
        else:
            fail(f'bad argument {args[i]}\n{__doc__}')
        i += 2
    if index is None:
        fail(__doc__)
    if writer:
        # A stale series from an earlier run must not pass for this one's.
        shutil.rmtree(index.parent, ignore_errors=True)
        run = subprocess.run(writer)
        if run.returncode != 0:
            fail(f'the writer exited with {run.returncode}')
    if not index.is_file():
        fail(f'no series index {index}')
    try:
        steps = json.loads(index.read_text())['files']
    except (ValueError, KeyError, TypeError) as e:
        fail(f'{index} is not a file series: {e}')
    if len(steps) < min_steps:
        fail(f'{index}: {len(steps)} steps, expected at least {min_steps}')
    times = [s['time'] for s in steps]
    if any(b <= a for a, b in zip(times, times[1:])):
        fail(f'{index}: times {times} not increasing')
    for s in steps:
        grid = read_checked(vtk, index.parent / s['name'])
        cells = grid.GetNumberOfCells()
        if cells == 0:
            fail(f"{s['name']}: no cells")
        for name in fields:
            array = grid.GetCellData().GetArray(name)
            if array is None:
                fail(f"{s['name']}: no cell array {name}")
            if array.GetNumberOfTuples() != cells:
                fail(f"{s['name']}: {name} has {array.GetNumberOfTuples()} tuples for {cells} cells")
        print(f"{s['name']} (time {s['time']}): {cells} cells, fields {', '.join(fields) or '-'}")
    print(f'{index}: {len(steps)} steps read')
    print('OK')


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == '--series':
        try:
            import vtk
        except ImportError as e:
            fail(f'{sys.executable} cannot import vtk ({e}): install python3-vtk9 (scripts/bootstrap)')
        check_series(vtk, sys.argv[1:])
        return
    if len(sys.argv) < 3:
        fail(__doc__)
    try:
        import vtk
    except ImportError as e:
        fail(f'{sys.executable} cannot import vtk ({e}): install python3-vtk9 (scripts/bootstrap)')
    out = pathlib.Path(sys.argv[1])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = dict(__import__('os').environ, IRREGULAR_VTKHDF_OUT=str(out))
    run = subprocess.run(sys.argv[2:], env=env)
    if run.returncode != 0:
        fail(f'the writer exited with {run.returncode}')
    lines = (out / 'expected.txt').read_text().splitlines()
    if len(lines) < 3:
        fail(f'expected.txt lists {len(lines)} files')
    for line in lines:
        words = line.split()
        path = out / words[0]
        if words[0].endswith('.series'):
            index = json.loads(path.read_text())
            steps = index['files']
            if len(steps) != int(words[2]):
                fail(f'{path}: {len(steps)} steps, expected {words[2]}')
            times = [s['time'] for s in steps]
            if times != sorted(times):
                fail(f'{path}: times {times} not ascending')
            for s in steps:
                grid = read(vtk, path.parent / s['name'])
                if grid.GetNumberOfCells() != int(words[4]):
                    fail(f"{s['name']}: {grid.GetNumberOfCells()} cells, expected {words[4]}")
            print(f'{words[0]}: {len(steps)} steps of {words[4]} cells read')
            continue
        grid = read(vtk, path)
        cells, points = int(words[2]), int(words[4])
        bounds = [float(x) for x in words[6:12]]
        name, want = words[13], float(words[14])
        if grid.GetNumberOfCells() != cells or grid.GetNumberOfPoints() != points:
            fail(f'{path}: {grid.GetNumberOfCells()} cells, {grid.GetNumberOfPoints()} points; '
                 f'expected {cells}, {points}')
        got_bounds = list(grid.GetBounds())
        if any(abs(a - b) > 1e-12 for a, b in zip(got_bounds, bounds)):
            fail(f'{path}: bounds {got_bounds}, expected {bounds}')
        got = field_sum(grid, name)
        if abs(got - want) > 1e-9 * max(1.0, abs(want)):
            fail(f'{path}: sum of {name} {got!r}, expected {want!r}')
        print(f'{words[0]}: {cells} cells, {points} points, bounds and sum of {name} as written')
    print('OK')


main()
