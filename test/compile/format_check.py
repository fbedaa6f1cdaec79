#!/usr/bin/env python3
"""Every header below include/ is clang-format clean under the repository's .clang-format.

usage: format_check.py <clang-format> <source root>
Prints each header whose formatting differs, with its first differing line; exits 1 if any.
"""
import pathlib
import subprocess
import sys


def main():
    clang_format, root = sys.argv[1], pathlib.Path(sys.argv[2])
    bad = []
    for h in sorted((root / 'include').rglob('*.hpp')):
        text = h.read_text()
        out = subprocess.run([clang_format, '--style=file', f'--assume-filename={h}'], input=text,
                             capture_output=True, text=True, cwd=root, check=True).stdout
        if out != text:
            a, b = text.splitlines(), out.splitlines()
            line = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            bad.append(f'{h.relative_to(root)}:{line + 1}: not clang-format clean')
    for b in bad:
        print(b)
    print(f'{len(bad)} headers not clang-format clean')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
