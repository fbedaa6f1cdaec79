#!/usr/bin/env python3
"""Checks the include graph of include/irregular against the rooms table of doc/architecture.md.

usage: layers.py <doc/architecture.md> <include dir> [--inject <room> <forbidden room>]

Fails (exit 1, one line per violation) when a header includes a room its row does not list,
when an L0-L2 header includes Boost or MPI, when a header outside mpi/ names MPI (MPI_*), when a row names a folder that does not exist, or
when a folder has no row. --inject checks a copy of the tree with one forbidden include added
and exits 0 only if that copy is rejected (the check can fail).
"""
import pathlib
import re
import shutil
import sys
import tempfile

PURE_LAYERS = {'L0', 'L1', 'L2'}


def read_rooms(doc):
    rooms = {}
    for line in pathlib.Path(doc).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 4 or not cells[1].startswith('`'):
            continue
        layer, room, _, allowed = cells
        room = room.strip('`')
        if allowed.startswith('('):
            may = {'*'} if 'any' in allowed else set()
        else:
            may = {a.strip() for a in allowed.split(',') if a.strip()}
        rooms[room] = (layer, may)
    return rooms


def room_of(rel):
    """The room of a path below include/ (irregular/<...>)."""
    parts = rel.parts[1:]
    if len(parts) == 1:
        return 'umbrella' if parts[0] == 'irregular.hpp' else 'front'
    if parts[0] == 'distributed':
        return 'distributed/' + parts[1] if len(parts) > 2 else 'distributed'
    return parts[0]


def check(rooms, include):
    include = pathlib.Path(include)
    problems = []
    seen = set()
    for h in sorted((include / 'irregular').rglob('*.hpp')):
        rel = h.relative_to(include)
        r = room_of(rel)
        seen.add(r)
        if r not in rooms:
            problems.append(f'{rel}: room {r} has no row in the table')
            continue
        layer, may = rooms[r]
        text = h.read_text()
        for m in re.finditer(r'#include\s*<([^>]+)>', text):
            target = m.group(1)
            if target.startswith('irregular/'):
                q = room_of(pathlib.Path(target))
                if q != r and '*' not in may and q not in may:
                    problems.append(f'{rel}: room {r} may not include {target} (room {q})')
            elif layer in PURE_LAYERS and (target.startswith('boost/') or target == 'mpi.h'):
                problems.append(f'{rel}: {layer} room {r} may not include <{target}> (standard library only)')
            elif target == 'mpi.h' and r != 'mpi':
                problems.append(f'{rel}: only the mpi room includes <mpi.h>')
        if r != 'mpi':
            for n, line in enumerate(text.splitlines(), 1):
                if re.search(r'\bMPI_\w+', line.split('//')[0]):
                    problems.append(f'{rel}:{n}: raw MPI outside mpi/ (use a named operation of mpi/)')
    for r in rooms:
        if r not in seen:
            problems.append(f'the table names room {r}, which holds no header')
    return problems


def main():
    doc, include = sys.argv[1], sys.argv[2]
    rooms = read_rooms(doc)
    if not rooms:
        print(f'{doc}: no rooms table found')
        return 1
    if len(sys.argv) > 3 and sys.argv[3] == '--inject':
        room, forbidden = sys.argv[4], sys.argv[5]
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp) / 'include'
            shutil.copytree(include, copy)
            folder = copy / 'irregular' / room
            victim = sorted(folder.glob('*.hpp'))[0]
            target = sorted((pathlib.Path(include) / 'irregular' / forbidden).glob('*.hpp'))[0]
            inc = target.relative_to(include).as_posix()
            victim.write_text(victim.read_text().replace('#pragma once', f'#pragma once\n#include <{inc}>', 1))
            problems = check(rooms, copy)
        if any('may not include' in p for p in problems):
            print(f'rejected as it should be: {problems[0]}')
            return 0
        print(f'a forbidden include of {forbidden} from {room} passed the check')
        return 1
    problems = check(rooms, include)
    for p in problems:
        print(p)
    print(f'{len(rooms)} rooms, {len(problems)} violations')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
