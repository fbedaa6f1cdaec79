#!/usr/bin/env python3
"""Fails when a paragraph is written twice in the documentation.

usage: duplicates.py <source root> [--inject]

The documentation is README.md, bench/README.md and every doc/**/*.md. A block of WINDOW (6) or
more consecutive non-blank lines that appears in two of these files, or twice in one file, is
reported with both places (exit 1). Lines are compared with their surrounding white space
stripped, so re-indenting a copy does not hide it.

--inject runs the same check on a temporary copy of the documentation in which the first block
of README.md is also appended to one chapter of doc/, and exits 0 only if the copy is rejected at
that place: the check is known to fail when a paragraph is repeated.
"""
import pathlib
import shutil
import sys
import tempfile

WINDOW = 6


def documents(root):
    root = pathlib.Path(root)
    files = [root / 'README.md', root / 'bench' / 'README.md']
    files += sorted((root / 'doc').rglob('*.md'))
    return [f for f in files if f.is_file()]


def windows(path):
    """(key, first line number) for every run of WINDOW consecutive non-blank lines."""
    lines = [line.strip() for line in path.read_text(encoding='utf-8').splitlines()]
    for i in range(len(lines) - WINDOW + 1):
        block = lines[i:i + WINDOW]
        if all(block):
            yield tuple(block), i + 1


def duplicates(root):
    root = pathlib.Path(root)
    seen = {}
    problems = []
    reported = set()
    for path in documents(root):
        rel = path.relative_to(root)
        for key, line in windows(path):
            if key in seen:
                first_rel, first_line = seen[key]
                if first_rel == rel and line - first_line < WINDOW:
                    continue  # the same lines seen again from an overlapping window
                where = (first_rel, rel)
                # One report per pair of places: a long copy gives many overlapping windows.
                if (where, first_line - line) in reported:
                    continue
                reported.add((where, first_line - line))
                problems.append(f'{rel}:{line}: repeats {first_rel}:{first_line}: "{key[0][:70]}"')
            else:
                seen[key] = (rel, line)
    return problems


def inject(root):
    """A copy of the documentation with README.md's first block appended to a doc/ chapter."""
    root = pathlib.Path(root)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix='irregular-docs-'))
    for path in documents(root):
        target = tmp / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    block = next(windows(root / 'README.md'), None)
    chapters = sorted((tmp / 'doc').rglob('*.md'))
    if block is None or not chapters:
        raise SystemExit('duplicates.py --inject: nothing to copy (no block in README.md or no doc/ chapter)')
    target = chapters[0]
    with target.open('a', encoding='utf-8') as f:
        f.write('\n\n' + '\n'.join(block[0]) + '\n')
    line = len(target.read_text(encoding='utf-8').splitlines()) - WINDOW + 1
    return tmp, f'{target.relative_to(tmp)}:{line}:'


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    root = args[0]
    if '--inject' in args[1:]:
        tmp, place = inject(root)
        try:
            problems = [p for p in duplicates(tmp) if p.startswith(place)]
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if problems:
            print(f'rejected as it should be: {problems[0]}')
            return 0
        print('a repeated block was not found: the check cannot fail')
        return 1
    problems = duplicates(root)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} repeated block(s) of {WINDOW} or more lines: say each thing once and link to it')
        return 1
    print(f'no block of {WINDOW} lines appears twice in {len(documents(root))} documents')
    return 0


if __name__ == '__main__':
    sys.exit(main())
