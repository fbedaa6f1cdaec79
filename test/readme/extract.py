#!/usr/bin/env python3
"""Extracts every complete C++ program (a ```cpp or ```c++ block containing `int main`) from the
README into OUTDIR/readme_<n>.cpp and prints one line per program: `<file> <mpi|serial> <line>`.
Programs that include Boost.MPI or the MPI layers are run under mpiexec."""
import pathlib
import re
import sys

readme, outdir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
outdir.mkdir(parents=True, exist_ok=True)
lines = readme.read_text().splitlines()
block, start, n = None, 0, 0
for i, line in enumerate(lines, 1):
    if block is None and re.match(r'^```(cpp|c\+\+)\s*$', line):
        block, start = [], i
    elif block is not None and line.startswith('```'):
        text = '\n'.join(block) + '\n'
        if 'int main' in text:
            n += 1
            name = f'readme_{n:02d}.cpp'
            (outdir / name).write_text(f'// README.md line {start}\n' + text)
            mpi = any(s in text for s in ('boost/mpi', 'irregular/irregular.hpp', 'irregular/domain.hpp',
                                          'irregular/mpi/', 'irregular/distributed/'))
            print(name, 'mpi' if mpi else 'serial', start)
        block = None
    elif block is not None:
        block.append(line)
