#!/usr/bin/env python3
"""Prints every public header below include/irregular (detail/ excluded), one per line.
--without-hdf5 leaves out those that need HDF5 built for MPI (io/vtkhdf*.hpp)."""
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
without_hdf5 = '--without-hdf5' in sys.argv[2:]
for h in sorted(root.rglob('*.hpp')):
    rel = h.relative_to(root.parent)
    if without_hdf5 and rel.name.startswith('vtkhdf'):
        continue
    if 'detail' not in rel.parts:
        print(rel.as_posix())
