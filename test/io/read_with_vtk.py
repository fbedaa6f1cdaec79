#!/usr/bin/env python3
"""Reads the .pvtu files of irregular::io::write_pvtu with VTK's own reader
(vtkXMLPUnstructuredGridReader) and checks cell counts, cell types, geometry and arrays.

Usage: read_with_vtk.py DIR [-- WRITER COMMAND...]
With a writer command (e.g. `mpiexec -n 3 test/mpi_vtk [files]`), runs it first with
IRREGULAR_VTK_OUT=DIR so that the test cases keep grid2d, grid3d and particles there.
Exits 77 (skipped, for Meson) when the vtk module cannot be imported (Debian: python3-vtk9).
"""
import math
import os
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SKIP = 77


def fail(msg):
    print('FAIL:', msg)
    sys.exit(1)


def piece_cells(pvtu):
    """Sum of NumberOfCells over the pieces the .pvtu lists, read with a plain XML parser."""
    root = ET.parse(pvtu).getroot()
    sources = [p.get('Source') for p in root.iter('Piece')]
    total = 0
    for s in sources:
        piece = ET.parse(pvtu.parent / s).getroot().find('UnstructuredGrid/Piece')
        total += int(piece.get('NumberOfCells'))
    return len(sources), total


def check(vtk, pvtu, dim, user_fields, u_formula):
    reader = vtk.vtkXMLPUnstructuredGridReader()
    reader.SetFileName(str(pvtu))
    reader.Update()
    grid = reader.GetOutput()
    pieces, expected = piece_cells(pvtu)
    n = grid.GetNumberOfCells()
    if n != expected or n == 0:
        fail(f'{pvtu.name}: VTK read {n} cells, the pieces hold {expected}')
    cd = grid.GetCellData()
    for name in ['level', 'rank'] + user_fields:
        a = cd.GetArray(name)
        if a is None or a.GetNumberOfTuples() != n:
            fail(f'{pvtu.name}: array {name!r} missing or of the wrong length')
    level, rank = cd.GetArray('level'), cd.GetArray('rank')
    u = cd.GetArray('u') if u_formula else None
    want_type = vtk.VTK_QUAD if dim == 2 else vtk.VTK_HEXAHEDRON
    ranks = set()
    for i in range(n):
        if grid.GetCellType(i) != want_type:
            fail(f'{pvtu.name}: cell {i} has type {grid.GetCellType(i)}, not {want_type}')
        b = grid.GetCell(i).GetBounds()  # xmin, xmax, ymin, ymax, zmin, zmax
        side = 1.0 / 2 ** int(level.GetTuple1(i))
        for a in range(dim):
            if not math.isclose(b[2 * a + 1] - b[2 * a], side, rel_tol=1e-12):
                fail(f'{pvtu.name}: cell {i} has side {b[2 * a + 1] - b[2 * a]} on axis {a}, level says {side}')
        r = int(rank.GetTuple1(i))
        if not 0 <= r < pieces:
            fail(f'{pvtu.name}: cell {i} has rank {r} outside [0, {pieces})')
        ranks.add(r)
        if u is not None:
            centre = [(b[2 * a] + b[2 * a + 1]) / 2 for a in range(dim)]
            if not math.isclose(u.GetTuple1(i), u_formula(centre), rel_tol=1e-12, abs_tol=1e-12):
                fail(f'{pvtu.name}: cell {i} has u = {u.GetTuple1(i)}, want {u_formula(centre)}')
    print(f'{pvtu.name}: {n} cells in {pieces} pieces, ranks {sorted(ranks)}, arrays ok')
    return cd


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    out = pathlib.Path(args[0])
    writer = args[2:] if len(args) > 1 and args[1] == '--' else []
    try:
        import vtk
    except ImportError as e:
        print(f'skipped: cannot import vtk ({e}); install python3-vtk9 to run this check')
        return SKIP
    if writer:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        env = dict(os.environ, IRREGULAR_VTK_OUT=str(out))
        subprocess.run(writer, env=env, check=True)
    u = lambda x: sum((a + 1) * v for a, v in enumerate(x))  # as test_vtk.cpp's u_at
    check(vtk, out / 'grid2d.pvtu', 2, ['u'], u)
    check(vtk, out / 'grid3d.pvtu', 3, ['u'], u)
    cd = check(vtk, out / 'particles.pvtu', 2, ['elements', 'local_id'], None)
    elements = cd.GetArray('elements')
    if any(elements.GetTuple1(i) < 0 for i in range(elements.GetNumberOfTuples())):
        fail('particles.pvtu: negative element count')
    return 0


if __name__ == '__main__':
    sys.exit(main())
