#!/usr/bin/env bash
# A writer killed mid-save leaves the previous checkpoint intact: for each phase of a save, write
# a first checkpoint, start a second save and kill it (SIGKILL on rank 0) after that phase, then
# check with irregular-inspect and a load on another rank count that the first one is whole.
# Finally irregular-inspect must call a corrupted copy corrupt (exit 1).
# usage: crash_check.sh INSPECT TEST_EXE MPIEXEC [MPIEXEC_ARGS...]
set -u
inspect=$1 exe=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export IRREGULAR_CRASH_FILE=$dir/ck
fail() { echo "crash_check: $*" >&2; exit 1; }
for phase in records tables synced; do
  rm -f "$dir"/ck*
  "$@" -n 2 "$exe" '[.crash-write]' >/dev/null || fail "the first save failed"
  sum=$(md5sum < "$dir/ck")
  IRREGULAR_CRASH_PHASE=$phase timeout 120 "$@" -n 2 "$exe" '[.crash-kill]' >/dev/null 2>&1 &&
    fail "the writer killed after '$phase' exited 0"
  [ "$(md5sum < "$dir/ck")" = "$sum" ] || fail "the first checkpoint changed (killed after '$phase')"
  "$inspect" "$dir/ck" >/dev/null || fail "irregular-inspect rejects the first checkpoint after '$phase'"
  "$@" -n 3 "$exe" '[.crash-check]' >/dev/null || fail "the first checkpoint does not load after '$phase'"
  echo "killed after '$phase': the previous checkpoint is intact ($(ls "$dir" | grep -c tmp) temporary file left)"
done
cp "$dir/ck" "$dir/bad"
printf '\x55' | dd of="$dir/bad" bs=1 seek=700 conv=notrunc 2>/dev/null
"$inspect" "$dir/bad" >"$dir/out"
[ $? -eq 1 ] && grep -q CORRUPT "$dir/out" || fail "irregular-inspect did not call a corrupted file corrupt"
"$inspect" "$dir/none" 2>/dev/null; [ $? -eq 2 ] || fail "irregular-inspect on a missing file"
echo "irregular-inspect: corrupt file found ($(grep -c 'corrupt block' "$dir/out") section)"
