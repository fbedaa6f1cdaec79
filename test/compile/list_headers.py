#!/usr/bin/env python3
"""Prints every public header below include/irregular (detail/ excluded), one per line."""
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
for h in sorted(root.rglob('*.hpp')):
    rel = h.relative_to(root.parent)
    if 'detail' not in rel.parts:
        print(rel.as_posix())
