#!/usr/bin/env python3
"""Compiles a snippet that must NOT compile; passes when the compiler rejects it and its
diagnostic names the expected concept (so the user sees what is missing)."""
import subprocess
import sys

compiler, include_dir, source, expected = sys.argv[1:5]
extra = sys.argv[5:]
r = subprocess.run([compiler, '-std=c++20', '-fsyntax-only', '-I', include_dir] + extra + [source],
                   capture_output=True, text=True)
if r.returncode == 0:
    print(f'{source} compiled, but it must be rejected')
    sys.exit(1)
if expected not in r.stderr:
    print(f'{source} was rejected, but the diagnostic does not name {expected}:\n{r.stderr[:4000]}')
    sys.exit(1)
print(f'{source}: rejected, naming {expected}')
