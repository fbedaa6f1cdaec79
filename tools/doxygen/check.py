#!/usr/bin/env python3
"""Runs Doxygen with the project's Doxyfile and fails on any warning (test 'doxygen', suite docs).

Usage: check.py DOXYGEN DOXYFILE [--pending PATH]...
The HTML goes to a temporary directory. Warnings in files under a --pending path (relative to the
source root, e.g. include/irregular/domain.hpp or include/irregular/checkpoint/) are printed but
do not fail the test: headers being rewritten, documented once they land.
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('doxygen')
    ap.add_argument('doxyfile')
    ap.add_argument('--pending', action='append', default=[])
    a = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parents[2]
    pending = [str(root / p) for p in a.pending]
    with tempfile.TemporaryDirectory(prefix='irregular_doxygen_') as tmp:
        log = pathlib.Path(tmp) / 'warnings.log'
        config = pathlib.Path(tmp) / 'Doxyfile'
        # The project's settings, with the output moved here and warnings collected, not fatal.
        config.write_text(f'@INCLUDE = {a.doxyfile}\n'
                          f'OUTPUT_DIRECTORY = {tmp}/out\n'
                          'WARN_AS_ERROR = NO\n'
                          f'WARN_LOGFILE = {log}\n')
        r = subprocess.run([a.doxygen, str(config)], cwd=tmp, capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            print(f'FAIL: doxygen exited with {r.returncode}')
            return 1
        if not (pathlib.Path(tmp) / 'out' / 'html' / 'index.html').exists():
            print('FAIL: doxygen wrote no html/index.html')
            return 1
        # One warning may span several lines; each starts with "<file>:<line>: warning:".
        warnings = re.split(r'\n(?=\S+:\d+: )', log.read_text().strip()) if log.read_text().strip() else []
    held = [w for w in warnings if any(w.startswith(p) for p in pending)]
    failing = [w for w in warnings if w not in held]
    if held:
        print(f'{len(held)} warnings in headers still being written (not failing):')
        for w in held:
            print('  ' + w.replace(f'{root}/', ''))
    if failing:
        print(f'FAIL: {len(failing)} doxygen warnings:')
        for w in failing:
            print('  ' + w.replace(f'{root}/', ''))
        return 1
    print(f'doxygen: no warnings outside the {len(a.pending)} pending paths')
    return 0


if __name__ == '__main__':
    sys.exit(main())
