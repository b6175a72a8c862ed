#!/usr/bin/env bash
# Compares two outputs.sh directories file by file. With --evaluations, a
# report may differ in its `evaluations` count alone (a change to how many
# projections share a decision), counted apart. Exit 1 on any other difference.
#
#   benches/compare/diff.sh [--evaluations] BEFORE AFTER
set -u
ev_ok=0
[ "${1:-}" = --evaluations ] && ev_ok=1 && shift
A=$1 B=$2
bad=0 ev=0
strip() { sed 's/"evaluations": *[0-9]*/"evaluations": N/' "$1"; }
for f in "$A"/*; do
  [ -d "$f" ] && continue
  g="$B/$(basename "$f")"
  cmp -s "$f" "$g" && continue
  if [ $ev_ok = 1 ] && [[ $f == *.report ]] && cmp -s <(strip "$f") <(strip "$g"); then
    ev=$((ev + 1))
    continue
  fi
  echo "differs: $(basename "$f")"
  bad=$((bad + 1))
done
for g in "$B"/*; do [ -e "$A/$(basename "$g")" ] || { echo "only in $B: $(basename "$g")"; bad=$((bad + 1)); }; done
echo "$(find "$A" -maxdepth 1 -type f | wc -l) files; $bad differ; $ev reports differ in evaluations only"
[ $bad = 0 ]
