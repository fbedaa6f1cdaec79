#!/usr/bin/env python3
"""Checkpoint on one rank count, restart on another: the examples' restart tests.

    restart_check.py P1 P2 CHECKPOINT [--corrupt TEXT] MPIEXEC [MPIEXEC_ARGS...] :: FIRST... :: SECOND...

Runs `MPIEXEC -n P1 MPIEXEC_ARGS FIRST...`, which must exit 0 and leave the file CHECKPOINT
(removed first), then `MPIEXEC -n P2 MPIEXEC_ARGS SECOND...`, which must exit 0: the second
command restarts from CHECKPOINT and checks its own final digest (the examples' --expect-*
options), so a restart that does not continue the run bit for bit fails here.

With --corrupt TEXT, one byte in the middle of the checkpoint's records is flipped before the
restart, which must then fail cleanly: a non-zero exit status and TEXT in its output, within the
time limit (no hang, no crash by signal).
"""
import os
import subprocess
import sys
import time

LIMIT = 240  # seconds per run; meson's timeout is the outer bound


def run(cmd):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=LIMIT)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        print(out)
        sys.exit(f"restart_check: timed out after {LIMIT} s: {' '.join(cmd)}")
    print(f"$ {' '.join(cmd)}   ({time.monotonic() - start:.2f} s, exit {p.returncode})")
    print(p.stdout)
    return p


def main(argv):
    p1, p2, path = argv[0], argv[1], argv[2]
    rest = argv[3:]
    corrupt = None
    if rest[:1] == ["--corrupt"]:
        corrupt, rest = rest[1], rest[2:]
    if rest.count("::") != 2:
        sys.exit(__doc__)
    a = rest.index("::")
    b = rest.index("::", a + 1)
    mpiexec, first, second = rest[:a], rest[a + 1:b], rest[b + 1:]
    launch = lambda n: [mpiexec[0], "-n", n] + mpiexec[1:]

    if os.path.exists(path):
        os.remove(path)
    p = run(launch(p1) + first)
    if p.returncode != 0:
        sys.exit(f"restart_check: the checkpointing run on {p1} ranks failed (exit {p.returncode})")
    if not os.path.isfile(path):
        sys.exit(f"restart_check: the checkpointing run left no checkpoint at {path}")

    if corrupt is not None:
        size = os.path.getsize(path)
        at = 512 + (size - 512) // 3  # past the 512-byte header, inside the leaves or records
        with open(path, "r+b") as f:
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0x10]))
        print(f"restart_check: flipped a bit of byte {at} of {size}")

    p = run(launch(p2) + second)
    if corrupt is None:
        if p.returncode != 0:
            sys.exit(f"restart_check: the restart on {p2} ranks failed (exit {p.returncode})")
        print(f"restart_check: saved on {p1} ranks, restarted on {p2}: the final digest is the straight run's")
        return
    if p.returncode <= 0 or p.returncode >= 128:
        sys.exit(f"restart_check: the restart from a corrupt file exited with {p.returncode}, expected a clean error")
    if corrupt not in p.stdout:
        sys.exit(f"restart_check: the restart's error lacks '{corrupt}'")
    print(f"restart_check: the corrupt checkpoint was refused cleanly (exit {p.returncode})")


if __name__ == "__main__":
    main(sys.argv[1:])
