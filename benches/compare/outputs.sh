#!/usr/bin/env bash
# Every observable output of one ctxgate binary over a fixed set of cases, one
# file each (stdout, stderr, exit code, --report), for comparing a change's
# binary with its base's byte for byte (diff.sh). Run from the repository's
# root; BENCHMARKS.md, "Commands", shows the comparison.
#
#   benches/compare/outputs.sh BIN OUTDIR [EXTRA_TREE.json ...]
#
# Cases: the real trees of tests/fixtures/answers/ and a tree with a secret of
# every shape (secrets.py), each × 5 actions (one a host's own word) × 2
# formats × 9 budgets (none, bytes, tokens; the small ones fail or cut deep),
# under the embedded default and under layers of the test policies; then
# policy check/doc, an unknown target and a non-conforming input. Extra trees
# (a `ctxgate synth` tree, a hostile shape) get the default policy only.
set -u
BIN=$1 OUT=$2
shift 2
rm -rf "$OUT" && mkdir -p "$OUT"
here=$(dirname "$0")
mkdir -p "$OUT/_inputs"
python3 "$here/secrets.py" "$OUT/_inputs/secrets.json" > /dev/null
budgets=("" "--max-bytes 200" "--max-bytes 400" "--max-bytes 1500" "--max-bytes 6000"
  "--max-tokens 60" "--max-tokens 250" "--max-tokens 2000" "--max-tokens 8000")
policies=("" "--policy default --policy tests/cases/trim/_policies/many-reasons.rego"
  "--policy default --policy tests/policies/probes/chat_and_rows.rego")
one() { # NAME ARGS...
  local name=$1
  shift
  "$BIN" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  echo $? > "$OUT/$name.rc"
}
for f in tests/fixtures/answers/*.json "$OUT/_inputs/secrets.json" "$@"; do
  t=$(basename "$f" .json)
  extra=0
  case " $* " in *" $f "*) extra=1 ;; esac
  for a in selection focus window app custom; do
    for fmt in json outline; do
      for b in "${budgets[@]}"; do
        for p in "${policies[@]}"; do
          [ $extra = 1 ] && [ -n "$p" ] && continue
          n="$t.$a.$fmt.$(echo "$b" | tr -d ' -').$(echo "$p" | md5sum | cut -c1-6)"
          # shellcheck disable=SC2086
          one "$n" trim --timeout 60m --action "$a" --format "$fmt" $b $p --report "$OUT/$n.report" "$f"
        done
      done
    done
  done
  one "$t.check" check "$f"
done
one policy-check policy check default
one policy-doc policy doc default
one unknown-target trim --action focus --target nope tests/fixtures/answers/uia-input-types.json
echo '{"protocol":"0.2.0"}' > "$OUT/_inputs/bad.json"
one not-conforming trim "$OUT/_inputs/bad.json"
echo "$(ls "$OUT" | grep -c '\.rc$') cases in $OUT"
