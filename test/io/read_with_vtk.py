#!/usr/bin/env python3
"""Reads the .pvtu files of irregular::io::write_pvtu with VTK's own readers
(vtkXMLPUnstructuredGridReader for the whole, vtkXMLUnstructuredGridReader for each piece) and
checks cell counts, cell types, geometry, fields and ranks (test 'vtk_read_with_vtk').

Usage: read_with_vtk.py DIR [--tests WRITER...] [--amm AMM...]
  --tests  runs WRITER (e.g. `mpiexec -n 3 test/mpi_vtk [files]`) with IRREGULAR_VTK_OUT=DIR/tests,
           where the test cases keep grid2d, grid3d and particles, then reads those three;
  --amm    runs AMM (the adaptive multigrid example under mpiexec, as scripts/demo does) with
           `--out DIR/amm` appended, then reads amm.pvtu.
Without a writer, reads whichever of those files DIR/tests and DIR/amm hold.

The interpreter: when this Python cannot import vtk, another one that can (Debian's python3-vtk9
lives in /usr/bin/python3's dist-packages, which a pyenv or venv python3 does not see) runs the
script instead. When none can: exit 1 if python3-vtk9 is installed (dpkg-query), else exit 77
(skipped, for Meson).
"""
import glob
import math
import os
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SKIP = 77
REEXEC = 'IRREGULAR_VTK_PYTHON_TRIED'


def fail(msg):
    print('FAIL:', msg)
    sys.exit(1)


def import_vtk():
    """The vtk module, from this interpreter or, re-executing the script, from another one."""
    try:
        import vtk
        return vtk
    except ImportError as e:
        reason = str(e)
    if os.environ.get(REEXEC):
        return None
    me = os.path.realpath(sys.executable)
    candidates = ['/usr/bin/python3'] + sorted(glob.glob('/usr/bin/python3.[0-9]*'))
    candidates += [p for p in (shutil.which('python3'), shutil.which('python')) if p]
    for c in dict.fromkeys(candidates):
        if not os.access(c, os.X_OK) or os.path.realpath(c) == me or c.endswith('-config'):
            continue
        probe = subprocess.run([c, '-c', 'import vtk'], capture_output=True)
        if probe.returncode == 0:
            print(f'{sys.executable} cannot import vtk ({reason}); running under {c}', flush=True)
            os.execve(c, [c, os.path.abspath(__file__)] + sys.argv[1:], dict(os.environ, **{REEXEC: '1'}))
    print(f'{sys.executable} cannot import vtk ({reason}), nor can {", ".join(dict.fromkeys(candidates))}')
    return None


def package_installed(name):
    """True if the Debian package is installed (False where there is no dpkg)."""
    try:
        r = subprocess.run(['dpkg-query', '-W', '-f=${Status}', name], capture_output=True, text=True)
    except FileNotFoundError:
        return False
    return r.returncode == 0 and 'install ok installed' in r.stdout


def read(vtk, reader_class, path):
    reader = reader_class()
    reader.SetFileName(str(path))
    reader.Update()
    if reader.GetErrorCode() != 0:
        fail(f'{path.name}: VTK reader error {reader.GetErrorCode()}')
    return reader.GetOutput()


def piece_sources(pvtu):
    """The piece files the .pvtu lists, in rank order, and their NumberOfCells (plain XML)."""
    sources = [p.get('Source') for p in ET.parse(pvtu).getroot().iter('Piece')]
    for r, s in enumerate(sources):
        if s != f'{pvtu.stem}_{r}.vtu':
            fail(f'{pvtu.name}: piece {r} is {s!r}, not {pvtu.stem}_{r}.vtu')
    cells = [int(ET.parse(pvtu.parent / s).getroot().find('UnstructuredGrid/Piece').get('NumberOfCells'))
             for s in sources]
    return sources, cells


def check(vtk, pvtu, dim, fields, u_formula=None):
    """Whole file through the parallel reader: cells, types, sides from levels, fields; each piece
    through the serial reader: its cell count and every rank value equal to its index."""
    if not pvtu.exists():
        fail(f'{pvtu} was not written')
    sources, piece_cells = piece_sources(pvtu)
    grid = read(vtk, vtk.vtkXMLPUnstructuredGridReader, pvtu)
    n = grid.GetNumberOfCells()
    if n != sum(piece_cells) or n == 0:
        fail(f'{pvtu.name}: VTK read {n} cells, the pieces hold {sum(piece_cells)}')
    cd = grid.GetCellData()
    for name in ['level', 'rank'] + fields:
        a = cd.GetArray(name)
        if a is None or a.GetNumberOfTuples() != n:
            fail(f'{pvtu.name}: array {name!r} missing or of the wrong length')
    level = cd.GetArray('level')
    want_type = vtk.VTK_QUAD if dim == 2 else vtk.VTK_HEXAHEDRON
    for i in range(n):
        if grid.GetCellType(i) != want_type:
            fail(f'{pvtu.name}: cell {i} has type {grid.GetCellType(i)}, not {want_type}')
        b = grid.GetCell(i).GetBounds()  # xmin, xmax, ymin, ymax, zmin, zmax
        side = 1.0 / 2 ** int(level.GetTuple1(i))
        for a in range(dim):
            if not math.isclose(b[2 * a + 1] - b[2 * a], side, rel_tol=1e-12):
                fail(f'{pvtu.name}: cell {i} has side {b[2 * a + 1] - b[2 * a]} on axis {a}, level says {side}')
        for name in fields:
            for c in range(cd.GetArray(name).GetNumberOfComponents()):
                if not math.isfinite(cd.GetArray(name).GetComponent(i, c)):
                    fail(f'{pvtu.name}: cell {i} has a non-finite {name}')
        if u_formula:
            centre = [(b[2 * a] + b[2 * a + 1]) / 2 for a in range(dim)]
            got = cd.GetArray('u').GetTuple1(i)
            if not math.isclose(got, u_formula(centre), rel_tol=1e-12, abs_tol=1e-12):
                fail(f'{pvtu.name}: cell {i} has u = {got}, want {u_formula(centre)}')
    ranks = []
    for r, s in enumerate(sources):
        piece = read(vtk, vtk.vtkXMLUnstructuredGridReader, pvtu.parent / s)
        m = piece.GetNumberOfCells()
        if m != piece_cells[r]:
            fail(f'{s}: VTK read {m} cells, the file says {piece_cells[r]}')
        rank = piece.GetCellData().GetArray('rank')
        if m and (rank is None or any(int(rank.GetTuple1(i)) != r for i in range(m))):
            fail(f'{s}: rank array is not {r} on every cell')
        if m:
            ranks.append(r)
    whole = {int(cd.GetArray('rank').GetTuple1(i)) for i in range(n)}
    if whole != set(ranks):
        fail(f'{pvtu.name}: ranks {sorted(whole)} in the whole, {ranks} from the pieces')
    print(f'{pvtu.name}: {n} cells in {len(sources)} pieces (ranks {ranks} hold cells), '
          f'fields {["level", "rank"] + fields} ok')
    return cd


def split_writers(args):
    """DIR, then the commands after --tests and --amm."""
    out, groups, key = pathlib.Path(args[0]), {}, None
    for tok in args[1:]:
        if tok in ('--tests', '--amm'):
            key = tok[2:]
            groups[key] = []
        elif key is None:
            fail(f'unexpected argument {tok!r}')
        else:
            groups[key].append(tok)
    return out, groups


def main():
    args = sys.argv[1:]
    if not args or args[0] in ('-h', '--help'):
        print(__doc__)
        return 2
    out, writers = split_writers(args)
    vtk = import_vtk()
    if vtk is None:
        if package_installed('python3-vtk9'):
            fail('python3-vtk9 is installed but no Python interpreter imports vtk')
        print('skipped: no Python imports vtk; install python3-vtk9 (scripts/bootstrap does) to run this check')
        return SKIP
    print(f'VTK {vtk.vtkVersion.GetVTKVersion()} under {sys.executable}')
    if 'tests' in writers:
        shutil.rmtree(out / 'tests', ignore_errors=True)
        (out / 'tests').mkdir(parents=True)
        subprocess.run(writers['tests'], env=dict(os.environ, IRREGULAR_VTK_OUT=str(out / 'tests')), check=True)
    if 'amm' in writers:
        shutil.rmtree(out / 'amm', ignore_errors=True)
        subprocess.run(writers['amm'] + ['--out', str(out / 'amm')], check=True, stdout=subprocess.DEVNULL)
    checked = 0
    if 'tests' in writers or (out / 'tests').is_dir():
        u = lambda x: sum((a + 1) * v for a, v in enumerate(x))  # as test_vtk.cpp's u_at
        check(vtk, out / 'tests' / 'grid2d.pvtu', 2, ['u'], u)
        check(vtk, out / 'tests' / 'grid3d.pvtu', 3, ['u'], u)
        cd = check(vtk, out / 'tests' / 'particles.pvtu', 2, ['elements', 'local_id'])
        elements = cd.GetArray('elements')
        if any(elements.GetTuple1(i) < 0 for i in range(elements.GetNumberOfTuples())):
            fail('particles.pvtu: negative element count')
        checked += 3
    if 'amm' in writers or (out / 'amm').is_dir():
        cd = check(vtk, out / 'amm' / 'amm.pvtu', 2, ['u'])
        u = cd.GetArray('u')
        if max(abs(u.GetTuple1(i)) for i in range(u.GetNumberOfTuples())) == 0:
            fail('amm.pvtu: u is zero everywhere')
        checked += 1
    left = sorted(str(p.relative_to(out)) for p in out.rglob('*.pvtu'))
    if len(left) != checked:
        fail(f'{len(left)} .pvtu files under {out} ({left}), {checked} checked')
    if checked == 0:
        fail(f'no .pvtu files under {out}')
    print(f'{checked} .pvtu files read by VTK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
