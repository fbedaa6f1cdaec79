#!/usr/bin/env python3
"""The library used from outside, as its users build against it (test 'consumers').

Installs the build tree once with `meson install --destdir` into a temporary directory, then:
  pkgconfig  mpicxx -std=c++20 app.cpp $(pkg-config --cflags --libs irregular), against the install;
  cmake      find_package(irregular CONFIG REQUIRED) + irregular::irregular, against the install;
  meson      a project with subprojects/irregular linked to the source tree, dependency('irregular');
each built program (app.cpp) runs under mpiexec -n 2. Last, `headers_only`: configuring with
-Dtests=false -Dbench=false -Dexamples=false succeeds with no mpiexec on the PATH.
Every step runs even when one fails; the exit code says whether all passed.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
HIDDEN = ('mpiexec', 'mpirun', 'orterun')  # and their suffixed variants (mpiexec.openmpi, ...)


class StepFailed(Exception):
    pass


def run(cmd, cwd=None, env=None):
    """Runs cmd; returns its stdout, raises StepFailed with the output when it fails."""
    print('  $', ' '.join(str(c) for c in cmd), flush=True)
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise StepFailed(f'exit code {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}')
    return r.stdout


def mpi_env(source):
    """The environment after sourcing scripts/env.sh (OpenMPI's run-as-root and container settings)."""
    out = subprocess.run(['bash', '-c', f'source "{source}/scripts/env.sh" && env -0'], capture_output=True,
                         check=True).stdout.decode()
    return dict(kv.split('=', 1) for kv in out.split('\0') if '=' in kv)


def project_copy(tmp, name):
    """test/consumers/<name> and app.cpp copied into tmp/<name> (Meson projects may not reach outside)."""
    dst = tmp / name
    if (HERE / name).is_dir():
        shutil.copytree(HERE / name, dst)
    else:
        dst.mkdir()
    shutil.copy(HERE / 'app.cpp', dst / 'app.cpp')
    return dst


def run_app(a, exe, env):
    out = run([a.mpiexec, '-n', '2'] + a.mpiexec_arg + [exe], env=env)
    sys.stdout.write('    ' + out)
    if 'consumer: 2 ranks, 16 leaves, 64 elements' not in out:
        raise StepFailed(f'unexpected output: {out!r}')


def install(a, tmp, env):
    stage = tmp / 'stage'
    run([a.meson, 'install', '-C', a.build, '--no-rebuild', '--destdir', stage, '--quiet'], env=env)
    return stage


def find_one(stage, name):
    found = sorted(stage.rglob(name))
    if len(found) != 1:
        raise StepFailed(f'{name}: expected one in the install tree, found {[str(f) for f in found]}')
    return found[0]


def pkgconfig(a, tmp, env, stage):
    # The .pc names the final prefix; for the staged tree, a copy with prefix= pointing into it.
    pc = find_one(stage, 'irregular.pc')
    text = pc.read_text()
    prefix = next(line.split('=', 1)[1] for line in text.splitlines() if line.startswith('prefix='))
    pcdir = tmp / 'pc-relocated'
    pcdir.mkdir()
    (pcdir / 'irregular.pc').write_text(text.replace(f'prefix={prefix}\n', f'prefix={stage}{prefix}\n', 1))
    env = dict(env, PKG_CONFIG_PATH=os.pathsep.join(filter(None, [str(pcdir), env.get('PKG_CONFIG_PATH')])))
    flags = run([a.pkg_config, '--cflags', '--libs', 'irregular'], env=env).split()
    if not any(f.startswith(f'-I{stage}') for f in flags):
        raise StepFailed(f'pkg-config --cflags does not name the installed headers: {flags}')
    src = project_copy(tmp, 'pkgconfig')
    run([a.mpicxx, '-std=c++20', src / 'app.cpp', '-o', src / 'app'] + flags, env=env)
    run_app(a, src / 'app', env)


def cmake(a, tmp, env, stage):
    if not a.cmake:
        raise StepFailed('cmake not found (scripts/bootstrap installs it)')
    config = find_one(stage, 'irregularConfig.cmake')
    find_one(stage, 'irregularConfigVersion.cmake')
    prefix = config.parents[3]  # <prefix>/share/cmake/irregular/irregularConfig.cmake
    src = project_copy(tmp, 'cmake')
    build = tmp / 'cmake-build'
    gen = ['-G', 'Ninja'] if shutil.which('ninja', path=env.get('PATH')) else []
    run([a.cmake, '-S', src, '-B', build, f'-DCMAKE_PREFIX_PATH={prefix}'] + gen, env=env)
    cache = (build / 'CMakeCache.txt').read_text()
    if f'irregular_DIR:PATH={config.parent}' not in cache:
        raise StepFailed(f'find_package did not take the installed config {config.parent}')
    run([a.cmake, '--build', build], env=env)
    run_app(a, build / 'app', env)


def meson_subproject(a, tmp, env):
    src = project_copy(tmp, 'meson')
    (src / 'subprojects').mkdir()
    (src / 'subprojects' / 'irregular').symlink_to(a.source, target_is_directory=True)
    build = tmp / 'meson-build'
    run([a.meson, 'setup', build, src], env=env)
    run([a.meson, 'compile', '-C', build, 'app'], env=env)
    run_app(a, build / 'app', env)


def path_without_mpiexec(tmp, path):
    """PATH with every mpiexec/mpirun hidden: a directory holding one is replaced by a farm of links
    to all its other programs."""
    dirs = []
    for k, d in enumerate(path.split(os.pathsep)):
        p = pathlib.Path(d)
        names = os.listdir(p) if p.is_dir() else []
        hidden = [n for n in names if n.split('.')[0] in HIDDEN]
        if not hidden:
            dirs.append(d)
            continue
        farm = tmp / f'path{k}'
        farm.mkdir()
        for n in names:
            if n not in hidden:
                (farm / n).symlink_to(p / n)
        dirs.append(str(farm))
    return os.pathsep.join(dirs)


def headers_only(a, tmp, env):
    path = path_without_mpiexec(tmp, env['PATH'])
    for n in HIDDEN:
        if shutil.which(n, path=path):
            raise StepFailed(f'{n} still on the filtered PATH: {shutil.which(n, path=path)}')
    out = run([a.meson, 'setup', tmp / 'headers-only', a.source, '-Dtests=false', '-Dbench=false',
               '-Dexamples=false'], env=dict(env, PATH=path))
    if not any('mpiexec' in line and 'NO' in line for line in out.splitlines()):
        raise StepFailed(f'meson setup did not look for mpiexec and miss it:\n{out}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', type=pathlib.Path, required=True)
    ap.add_argument('--build', type=pathlib.Path, required=True)
    ap.add_argument('--meson', required=True)
    ap.add_argument('--mpicxx', required=True)
    ap.add_argument('--pkg-config', required=True)
    ap.add_argument('--cmake', default='')
    ap.add_argument('--mpiexec', required=True)
    ap.add_argument('--mpiexec-arg', action='append', default=[])
    ap.add_argument('--keep', action='store_true', help='keep the temporary directory')
    a = ap.parse_args()
    env = mpi_env(a.source)
    # The build's environment must not leak into the outside projects' builds.
    for k in ('MESON_BUILD_ROOT', 'MESON_SOURCE_ROOT', 'MESON_SUBDIR', 'MESONINTROSPECT'):
        env.pop(k, None)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix='irregular_consumers_'))
    failed = []

    def step(name, fn, *args):
        print(f'[{name}]', flush=True)
        t0 = time.monotonic()
        try:
            result = fn(a, tmp, env, *args)
            print(f'[{name}] ok, {time.monotonic() - t0:.1f} s', flush=True)
            return result
        except (StepFailed, OSError) as e:
            print(f'[{name}] FAILED after {time.monotonic() - t0:.1f} s: {e}', flush=True)
            failed.append(name)
            return None

    try:
        stage = step('install', install)
        if stage is not None:
            step('pkgconfig', pkgconfig, stage)
            step('cmake', cmake, stage)
        else:
            failed.extend(['pkgconfig', 'cmake'])
        step('meson', meson_subproject)
        step('headers_only', headers_only)
    finally:
        if a.keep:
            print(f'kept {tmp}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        print('FAIL:', ', '.join(failed))
        return 1
    print('consumers: pkgconfig, cmake, meson and headers_only passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
