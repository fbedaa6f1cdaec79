#!/usr/bin/env python3
"""Extracts every complete C++ program of the documentation, so the docs cannot rot.

usage: extract.py <source root> <outdir>
       extract.py <source root> --check-excerpts

The documentation is README.md and every doc/**/*.md. A complete program is a ```cpp or ```c++
block that contains `int main`. Each one is written to OUTDIR/<name>.cpp, where <name> names the
file and the first line of the block (README.md line 28: readme_line_28; doc/guide/domain.md
line 52: guide_domain_line_52), and this prints one line per program:

    program <name> <mpi|serial> <file>:<line>

Programs that include Boost.MPI or the MPI layers are run under mpiexec. Before the programs it
prints `source <file>` for every document read, so that the build reconfigures when one changes.

A block whose first line is `// excerpt: <path>` is an excerpt of a file of this repository (the
tutorials walk through examples/ this way) and is never compiled here: its file is built
elsewhere. --check-excerpts checks every excerpt against its file instead: each run of lines
between `// ...` lines must appear in the file, in order, white space around lines ignored.
"""
import pathlib
import re
import sys

MPI_MARKERS = ('boost/mpi', 'irregular/irregular.hpp', 'irregular/domain.hpp', 'irregular/cell_domain.hpp',
               'irregular/mpi/', 'irregular/distributed/', 'irregular/checkpoint', 'irregular/io/vtk_domain.hpp')
EXCERPT = re.compile(r'^\s*//\s*excerpt:\s*(\S+)')


def documents(root):
    files = [root / 'README.md'] + sorted((root / 'doc').rglob('*.md'))
    return [f for f in files if f.is_file()]


def blocks(path):
    """(first line number, lines) of every ```cpp / ```c++ block."""
    block, start = None, 0
    for i, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
        if block is None and re.match(r'^```(cpp|c\+\+)\s*$', line):
            block, start = [], i + 1
        elif block is not None and line.startswith('```'):
            yield start, block
            block = None
        elif block is not None:
            block.append(line)
    if block is not None:
        raise SystemExit(f'{path}:{start - 1}: this code block is never closed')


def name_of(rel, line):
    stem = rel.with_suffix('').as_posix()
    stem = stem[len('doc/'):] if stem.startswith('doc/') else stem
    stem = re.sub(r'[^A-Za-z0-9]+', '_', stem).strip('_').lower()
    return f'{stem}_line_{line}'


def extract(root, outdir):
    outdir.mkdir(parents=True, exist_ok=True)
    docs = documents(root)
    for path in docs:
        print('source', path.relative_to(root).as_posix())
    for path in docs:
        rel = path.relative_to(root)
        for line, block in blocks(path):
            text = '\n'.join(block) + '\n'
            if (block and EXCERPT.match(block[0])) or 'int main' not in text:
                continue
            name = name_of(rel, line)
            target = outdir / f'{name}.cpp'
            content = f'// {rel.as_posix()} line {line}\n' + text
            if not target.exists() or target.read_text(encoding='utf-8') != content:
                target.write_text(content, encoding='utf-8')  # unchanged files keep their time stamp
            mpi = any(m in text for m in MPI_MARKERS)
            print('program', name, 'mpi' if mpi else 'serial', f'{rel.as_posix()}:{line}')


def check_excerpts(root):
    problems, count = [], 0
    for path in documents(root):
        rel = path.relative_to(root)
        for line, block in blocks(path):
            m = EXCERPT.match(block[0]) if block else None
            if not m:
                continue
            count += 1
            source = root / m.group(1)
            if not source.is_file():
                problems.append(f'{rel}:{line}: the excerpt names {m.group(1)}, which does not exist')
                continue
            have = [s.strip() for s in source.read_text(encoding='utf-8').splitlines()]
            chunks, chunk = [], []
            for text in block[1:]:
                if text.strip() == '// ...':
                    chunks.append(chunk)
                    chunk = []
                else:
                    chunk.append(text.strip())
            chunks.append(chunk)
            at = 0
            for chunk in (c for c in chunks if c):
                found = next((i for i in range(at, len(have) - len(chunk) + 1) if have[i:i + len(chunk)] == chunk), None)
                if found is None:
                    problems.append(f'{rel}:{line}: not in {m.group(1)} (in this order): "{chunk[0][:60]}"')
                    break
                at = found + len(chunk)
    for p in problems:
        print(p)
    print(f'{count} excerpts checked, {len(problems)} do not match their file')
    return 1 if problems or count == 0 else 0


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    root = pathlib.Path(sys.argv[1])
    if sys.argv[2] == '--check-excerpts':
        return check_excerpts(root)
    extract(root, pathlib.Path(sys.argv[2]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
