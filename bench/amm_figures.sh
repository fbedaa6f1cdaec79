#!/usr/bin/env bash
# The papers' Figures 1 and 2 for the adaptive multigrid example (issue 10), from whole runs of
# build/examples/amm/amm: messages and bytes of request/answer, fault prevention and informed
# fault prevention (all three collected side by side in one run), and time, imbalance and volume
# against the number of ranks. Usage: bench/amm_figures.sh [build-dir] [l0] [lmax] [tau]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
build=${1:-build}; l0=${2:-6}; lmax=${3:-10}; tau=${4:-16}
amm=$build/examples/amm/amm
common=(--l0 "$l0" --lmax "$lmax" --hold 4 --tau "$tau" --out /tmp/amm-figures)
echo "## Figure 1: remote-data collection over whole AMM runs (4 ranks, l0 $l0, lmax $lmax, tau $tau)"
echo "| problem | leaves | RA messages | RA bytes | FP messages | FP bytes | IFP messages | IFP bytes | FP/RA msg | IFP/RA msg | FP/RA bytes | IFP/RA bytes |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
parts=""
for p in 1 2 peak; do
  out=$(mpiexec --oversubscribe -n 4 "$amm" --problem $p "${common[@]}" --strategies RA,FP,IFP)
  leaves=$(echo "$out" | sed -n 's/^Summary: .*; \([0-9]*\) leaves.*/\1/p')
  read -r ram rab <<<"$(echo "$out" | awk '$1=="RA" && $3=="messages" {print $2, $4}')"
  read -r fpm fpb <<<"$(echo "$out" | awk '$1=="FP" && $3=="messages" {print $2, $4}')"
  read -r ifm ifb <<<"$(echo "$out" | awk '$1=="IFP" && $3=="messages" {print $2, $4}')"
  awk -v p=$p -v n=$leaves -v a=$ram -v b=$rab -v c=$fpm -v d=$fpb -v e=$ifm -v f=$ifb 'BEGIN {
    printf "| %s | %s | %d | %d | %d | %d | %d | %d | %.0f%% | %.0f%% | %.0f%% | %.0f%% |\n", p, n, a, b, c, d, e, f,
      100*c/a, 100*e/a, 100*d/b, 100*f/b }'
  # Messages by part of the V-cycle, and the ratios without the sweeps' refreshes (equal for all).
  parts+=$(echo "$out" | awk -v p=$p '$2=="residual" && $4=="refine" {
      m[$1] = $3 + $5 + $7 + $9 + $11 + $13; s[$1] = $11; row[$1] = sprintf("| %s | %s | %d | %d | %d | %d | %d | %d | %d |", p, $1, $3, $5, $7, $9, $11, $13, m[$1]) }
    END { for (k in row) if (k != "RA") ratio[k] = sprintf("%.1f%%", 100 * (m[k] - s[k]) / (m["RA"] - s["RA"]));
      printf "%s  |\n%s %s |\n%s %s |\n", row["RA"], row["FP"], ratio["FP"], row["IFP"], ratio["IFP"] }')$'\n'
done
echo
echo "### Figure 1 by part: messages of each part of the V-cycle (the last column leaves out the sweeps)"
echo "| problem | strategy | residual | refine | prolong | smooth | sweeps | extension | total | /RA without sweeps |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf "%s" "$parts"
echo
echo "## Figure 2: time, efficiency, imbalance and volume against ranks (IFP, problem 2; beyond 2 ranks oversubscribed)"
echo "| ranks | seconds | efficiency | final imbalance | IFP messages | IFP bytes | digest |"
echo "|---|---|---|---|---|---|---|"
t1=""
for n in 1 2 4 8 16; do
  out=$(mpiexec --oversubscribe -n $n "$amm" --problem 2 "${common[@]}" --strategies IFP)
  secs=$(echo "$out" | sed -n 's/^Summary: [0-9]* V-cycles in \([0-9.]*\) s.*/\1/p')
  imb=$(echo "$out" | grep -E '^ +[0-9]+ ' | tail -1 | awk '{print $7}')
  read -r m b <<<"$(echo "$out" | awk '$1=="IFP" && $3=="messages" {print $2, $4}')"
  dig=$(echo "$out" | sed -n 's/^digest: //p')
  [ -z "$t1" ] && t1=$secs
  awk -v n=$n -v s=$secs -v t=$t1 -v i="$imb" -v m=$m -v b=$b -v d=$dig 'BEGIN {
    printf "| %d | %.2f | %.2f | %s | %d | %d | %s |\n", n, s, t/(n*s), i, m, b, d }'
done
