#!/usr/bin/env python3
"""Extracts every complete C++ program of the documentation, so the docs cannot rot.

usage: extract.py <source root> <outdir>
       extract.py <source root> --check-excerpts

The documentation is README.md and every doc/**/*.md. A complete program is a ```cpp or ```c++
block that contains `int main`. Each is named after its file and the first line of the block
(README.md line 28: readme_line_28; doc/guide/domain.md line 52: guide_domain_line_52). Programs
that include Boost.MPI or the MPI layers are run under mpiexec, the others are serial; those that
include io/vtkhdf*.hpp are of kind hdf5 (MPI programs that need parallel HDF5, built only with it).

The programs are compiled as two unity builds, OUTDIR/unity_mpi.cpp and OUTDIR/unity_serial.cpp,
so that the Boost.MPI and library headers are parsed once, not once per program: each program
sits in namespace snippet_<name>, its #include lines hoisted to the top of the file and its main
renamed; the file's own main runs the program named by argv[1], with argv[1:] as its argv. A
program that might mean something else inside a namespace or beside other programs (see wrap())
is written alone to OUTDIR/<name>.cpp instead. This prints

    source <file>                                 every document read, so that the build
                                                  reconfigures when one changes
    unity <mpi|serial|hdf5> <unity file>          each unity file, before the programs
    program <name> <mpi|serial|hdf5> <file>:<line> <unity|alone>
    note <name> is built alone: <why>

Any other .cpp file in OUTDIR (a program since moved or removed) is deleted.

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
HDF5_MARKERS = ('irregular/io/vtkhdf',)
EXCERPT = re.compile(r'^\s*//\s*excerpt:\s*(\S+)')
# Besides classes and functions, what a wrapped program may declare at file scope: aliases,
# static_assert, constexpr variables (constant-initialised: nothing runs before its main).
HARMLESS = re.compile(r'namespace \w+ ?= ?[\w: ]+;$|using (?!namespace\b)|typedef\b|static_assert\b|'
                      r'((inline|static) )*constexpr\b')
# A class-key and name, then :: (a class of another namespace) or < (a specialization).
CLASS = re.compile(r'(?:struct|class|union|enum(?: class| struct)?) '
                   r'(?:\[\[.*?\]\] ?|alignas ?\(.*?\) ?)*\w+ ?(::|<)?')
MAIN_PARAMS = re.compile(r'int ?\w*, ?char ?\* ?(\* ?\w*|\w* ?\[ ?\])')


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


def blank(text):
    """text with comments and string and character literals turned to spaces (line breaks and
    positions kept), so that braces and words inside them do not count; None for what this does not
    follow (raw strings, line splices, unterminated literals)."""
    if '\\\n' in text:
        return None
    out, i, n = list(text), 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            if j < 0:
                return None
            j += 2
        elif c in '"\'':
            k = i  # the token before the quote: a literal's prefix, or the digits of 1'000
            while k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_'."):
                k -= 1
            if c == "'" and k < i and text[k].isdigit():
                i += 1
                continue
            if c == '"' and text[k:i].endswith('R'):
                return None
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == '\n':
                    return None
                j += 2 if text[j] == '\\' else 1
            if j >= n:
                return None
            j += 1
        else:
            i += 1
            continue
        out[i:j] = [ch if ch == '\n' else ' ' for ch in text[i:j]]
        i = j
    return ''.join(out)


def after_template(head):
    """head without a leading `template <...>`."""
    m = re.match(r'\s*template\s*<', head)
    if not m:
        return head.strip()
    depth, i = 1, m.end()
    while i < len(head) and depth:
        depth += {'<': 1, '>': -1}.get(head[i], 0)
        i += 1
    return head[i:].strip()


def function_head(head):
    """Whether the text before a brace at file scope starts a function body (not a class, a
    namespace or a variable's initialiser)."""
    h = after_template(head)
    if re.match(r'(struct|class|union|enum|namespace|inline|extern|using|typedef)\b', h) or '(' not in h:
        return False
    return '=' not in re.sub(r'operator\s*[^\w\s(]*', '', h.split('(', 1)[0])


def wrap(name, text):
    """(includes, body, takes argv) of the program `text`, made ready for namespace snippet_<name>:
    its #include lines blanked (the unity file hoists them), main renamed snippet_main and ended by
    the `return 0;` that only main has implicitly. Or why it cannot be wrapped: the test is
    conservative, anything but classes, functions, aliases and constexpr variables at file scope
    (a variable would also be initialised when another program runs), a specialization or definition
    of another namespace's entity, a macro or any directive but #include <...> keeps a program alone."""
    code = blank(text)
    if code is None:
        return 'a raw string, line splice or unterminated literal'
    includes, include_lines, lines, depth = [], [], code.split('\n'), 0
    for k, line in enumerate(lines):
        if line.lstrip().startswith('#'):
            m = re.match(r'\s*#\s*include\s*(<[^<>\s]+>)\s*$', line)
            if not m or depth:
                return f'the directive {line.strip()}'
            includes.append(f'#include {m.group(1)}')
            include_lines.append(k)
            lines[k] = line = ' ' * len(line)
        depth += line.count('{') + line.count('(') - line.count('}') - line.count(')')
    code = '\n'.join(lines)
    if re.search(r'\btemplate\s*<\s*>', code):
        return 'an explicit specialization (template <>)'
    if re.search(r'\bsnippet_(main|' + re.escape(name) + r')\b', code):
        return 'it uses the names the unity build adds'

    items, stack, start, brace, top = [], [], None, None, []  # top: the text at file scope
    for pos, c in enumerate(code):
        if start is None and not c.isspace():
            start = pos
        if not stack:
            top.append(c)
        if c in '([{':
            if not stack and c == '{':
                brace = pos
            stack.append(c)
        elif c in ')]}':
            if not stack or stack.pop() != '([{'[')]}'.index(c)]:
                return 'unbalanced brackets'
            if c == '}' and not stack:
                if re.match(r'\s*(inline\s+)?namespace\b|\s*extern\b', code[start:brace]):
                    return 'it opens a namespace or a linkage block'
                if function_head(code[start:brace]):
                    items.append((start, brace, pos))
                    start = None
        elif c == ';' and not stack:
            items.append((start, None, pos))
            start = None
    if stack or start is not None:
        return 'unbalanced brackets, or a declaration without its ;'
    macro = re.search(r'\b(BOOST_\w*|[A-Z][A-Z0-9_]+\s*\()', ''.join(top))
    if macro:
        return f'a macro at file scope ({macro.group(1)})'

    own = set(re.findall(r'\b(?:struct|class|union|enum(?:\s+class|\s+struct)?)\s+(\w+)', code))
    main = None
    for start, brace, end in items:
        item = ' '.join(code[start:end + 1].split())
        h = after_template(item)
        if brace is not None:  # a function definition
            head = ' '.join(code[start:brace].split())
            pre = after_template(head).split('(', 1)[0]
            d = re.search(r'((?:\w+ ?:: ?)*(?:~?\w+|operator ?[^\w\s(]*)) ?$', pre)
            if re.search(r'\btry$|^catch\b', head) or not d or pre[:d.start()].rstrip().endswith('::'):
                return f'a definition this script does not follow: {head[:60]}'
            if '::' in d.group(1) and d.group(1).split('::')[0].strip() not in own:
                return f'it defines {d.group(1)}, of another namespace'
            if d.group(1) == 'main':
                m = re.fullmatch(r'int main ?\((.*)\)', head)
                if not m or main:
                    return f'main is not one `int main(...)`: {head[:60]}'
                params = m.group(1).strip()
                if params not in ('', 'void') and not MAIN_PARAMS.fullmatch(params):
                    return f'main takes ({params})'
                main = (start, end, params not in ('', 'void'))
        elif HARMLESS.match(h):
            pass
        elif re.match(r'(struct|class|union|enum)\b', h):
            m = CLASS.match(h)
            if not m or m.group(1):
                return f'it declares a class of another namespace or a specialization: {h[:60]}'
            if '{' in h and not h.endswith('};'):
                return f'a variable declared with its class: {h[:60]}'
        else:
            return f'a declaration at file scope: {item[:60]}'
    if main is None:
        return 'no `int main(...)` at file scope'

    start, end, takes_args = main
    at = re.compile(r'\bmain\b').search(code, start).start()
    body = text[:at] + 'snippet_main' + text[at + 4:end] + 'return 0; ' + text[end:]
    lines = body.split('\n')
    for k in include_lines:
        lines[k] = ''
    return includes, '\n'.join(lines), takes_args


def write(path, content):
    if not path.exists() or path.read_text(encoding='utf-8') != content:
        path.write_text(content, encoding='utf-8')  # unchanged files keep their time stamp


def unity(path, root, programs):
    """The unity file of `programs`, (name, rel, line, includes, body, takes argv) each."""
    includes = ['#include <cstdio>', '#include <string_view>']
    for include in (i for p in programs for i in p[3]):
        if include not in includes:
            includes.append(include)
    out = ['// Generated by test/readme/extract.py: the programs of the documentation, one namespace',
           '// each; main runs the one named by argv[1]. Each program\'s main is renamed snippet_main',
           '// and ends with `return 0;`, which only a main has implicitly.'] + includes + ['']
    for name, rel, line, _, body, _ in programs:
        out += [f'namespace snippet_{name} {{', f'#line {line} "{(root / rel).as_posix()}"']
        out += body.rstrip('\n').split('\n')
        out += [f'#line {len(out) + 2} "{path.as_posix()}"', f'}}  // namespace snippet_{name}', '']
    out += ['int main(int argc, char** argv) {',
            '  const std::string_view program = argc > 1 ? argv[1] : "";']
    for name, _, _, _, _, takes_args in programs:
        call = f'snippet_{name}::snippet_main({"argc - 1, argv + 1" if takes_args else ""})'
        out.append(f'  if (program == "{name}") return {call};')
    out += ['  std::fprintf(stderr, "usage: %s <program>, one of:\\n", argv[0]);']
    out += [f'  std::fputs("  {name}\\n", stderr);' for name, *_ in programs]
    out += ['  return 2;', '}', '']
    write(path, '\n'.join(out))


def extract(root, outdir):
    outdir.mkdir(parents=True, exist_ok=True)
    docs = documents(root)
    for path in docs:
        print('source', path.relative_to(root).as_posix())
    programs, lines, written = {'mpi': [], 'serial': [], 'hdf5': []}, [], set()
    for path in docs:
        rel = path.relative_to(root)
        for line, block in blocks(path):
            text = '\n'.join(block) + '\n'
            if (block and EXCERPT.match(block[0])) or 'int main' not in text:
                continue
            name = name_of(rel, line)
            kind = 'mpi' if any(m in text for m in MPI_MARKERS) else 'serial'
            if any(m in text for m in HDF5_MARKERS):
                kind = 'hdf5'
            wrapped = wrap(name, text)
            if isinstance(wrapped, str):
                write(outdir / f'{name}.cpp', f'// {rel.as_posix()} line {line}\n' + text)
                written.add(f'{name}.cpp')
                lines += [f'program {name} {kind} {rel.as_posix()}:{line} alone',
                          f'note {name} is built alone: {wrapped}']
            else:
                programs[kind].append((name, rel, line) + wrapped)
                lines.append(f'program {name} {kind} {rel.as_posix()}:{line} unity')
    for kind, group in programs.items():
        if group:
            unity(outdir / f'unity_{kind}.cpp', root, group)
            written.add(f'unity_{kind}.cpp')
            print('unity', kind, f'unity_{kind}.cpp')
    print('\n'.join(lines))
    for stale in outdir.glob('*.cpp'):
        if stale.name not in written:
            stale.unlink()


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
