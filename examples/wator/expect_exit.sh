#!/bin/sh
# Runs a command and passes only if it exits with the given status and its output contains the
# given text: a bad-input run must fail cleanly (no hang: meson's timeout; no crash: the status).
#   expect_exit.sh STATUS TEXT command [args...]
want=$1; text=$2; shift 2
out=$("$@" 2>&1); got=$?
printf '%s\n' "$out"
if [ "$got" -ne "$want" ]; then echo "expect_exit: status $got, expected $want"; exit 1; fi
case "$out" in *"$text"*) ;; *) echo "expect_exit: output lacks '$text'"; exit 1;; esac
exit 0
