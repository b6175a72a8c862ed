#!/bin/sh
# Builds the seed corpora under fuzz/corpus/<target>/ (not committed):
#   read, trim  every JSON answer in tests/cases and examples/, and every
#               real tree under tests/fixtures/realworld/raw imported with
#               `ctxgate import` (trim seeds get a leading knob byte: budget
#               and format);
#   secrets     the same answers, with knob bytes for byte and token budgets
#               (see fuzz_targets/secrets.rs), and the tree with a secret of
#               every shape (benches/compare/secrets.py);
#   outline     the trim seeds (its knob: a byte budget);
#   policy      the shipped policy, the test policies and the case policies.
# Run from anywhere; needs `cargo build --release` (or builds it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
raw=${REALWORLD_RAW:-$repo/tests/fixtures/realworld/raw}
ctxgate=$repo/target/release/ctxgate
[ -x "$ctxgate" ] || (cd "$repo" && cargo build --release --bin ctxgate)

mkdir -p "$here/corpus/read" "$here/corpus/trim" "$here/corpus/secrets" "$here/corpus/outline" "$here/corpus/policy"
n=0
add_answer() { # file name
    n=$((n + 1))
    cp "$1" "$here/corpus/read/$2"
    # Knob byte: budget 64 + 16·(k & 0x7f) bytes, outline when k ≥ 0x80.
    { printf '\077'; cat "$1"; } >"$here/corpus/trim/$2"
    { printf '\237'; cat "$1"; } >"$here/corpus/trim/$2.outline"
    cp "$here/corpus/trim/$2" "$here/corpus/outline/$2"
    # secrets' knob: 16 + 24·(k & 0x3f) bytes (a quarter of it in tokens
    # when k & 0x40), outline when k ≥ 0x80.
    { printf '\037'; cat "$1"; } >"$here/corpus/secrets/$2"
    { printf '\337'; cat "$1"; } >"$here/corpus/secrets/$2.tokens-outline"
}

python3 "$repo/benches/compare/secrets.py" "$here/corpus/read/secrets.json" >/dev/null
{ printf '\077'; cat "$here/corpus/read/secrets.json"; } >"$here/corpus/secrets/secrets.json"
{ printf '\377'; cat "$here/corpus/read/secrets.json"; } >"$here/corpus/secrets/secrets.json.tokens-outline"

for f in "$repo"/tests/fixtures/answers/*.json "$repo"/examples/*.json "$repo"/tests/cases/check/*.json "$repo"/tests/cases/trim/*/answer.json; do
    [ -f "$f" ] || continue
    add_answer "$f" "$(echo "${f#"$repo"/}" | tr / _)"
done

if [ -d "$raw" ]; then
    tmp=$(mktemp)
    find "$raw" -type f ! -name 'LICENSE*' ! -name MANIFEST.tsv | sort | while read -r f; do
        case "${f#"$raw"/}" in
            chromium-*) from=ax-dump ;;
            screen2ax/*) from=ax-json ;;
            odilia-atspi/*) from=atspi-json ;;
            axe-windows/*) from=uia-json ;;
            playwright-aria/*) from=aria ;;
            *) continue ;;
        esac
        # libFuzzer skips seeds over -max_len; keep the large ones out.
        if "$ctxgate" import --from "$from" "$f" >"$tmp" 2>/dev/null && [ "$(wc -c <"$tmp")" -le 200000 ]; then
            add_answer "$tmp" "real_$(echo "${f#"$raw"/}" | tr / _).json"
        fi
    done
    rm -f "$tmp"
else
    echo "seed.sh: no real-world trees at $raw (set REALWORLD_RAW)" >&2
fi

for f in "$repo"/policies/*.rego "$repo"/tests/policies/*.rego "$repo"/tests/policies/*/*.rego "$repo"/tests/cases/trim/_policies/*.rego; do
    [ -f "$f" ] || continue
    cp "$f" "$here/corpus/policy/$(echo "${f#"$repo"/}" | tr / _)"
done

for t in read trim secrets outline policy; do
    echo "corpus/$t: $(ls "$here/corpus/$t" | wc -l) files"
done
