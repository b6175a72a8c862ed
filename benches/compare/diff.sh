#!/usr/bin/env bash
# Compares two outputs.sh directories file by file. With --evaluations, a
# report may differ in its `evaluations` count alone (a change to how many
# projections share a decision); with --probes, in its `probes` count (a
# change to how the fill measures, not to what it sends); such reports are
# counted apart. Exit 1 on any other difference.
#
#   benches/compare/diff.sh [--evaluations] [--probes] BEFORE AFTER
set -u
ev_ok=0 counts='s/^$//'
while [ $# -gt 2 ]; do
  case $1 in
    --evaluations) counts="$counts;s/\"evaluations\": *[0-9]*/\"evaluations\": N/" ;;
    --probes) counts="$counts;s/\"probes\": *[0-9]*/\"probes\": N/" ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  ev_ok=1
  shift
done
A=$1 B=$2
bad=0 ev=0
strip() { sed "$counts" "$1"; }
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
echo "$(find "$A" -maxdepth 1 -type f | wc -l) files; $bad differ; $ev reports differ in the counts allowed only"
[ $bad = 0 ]
