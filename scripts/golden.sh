#!/usr/bin/env bash
# The generated-code guard: generates every model listed in
# tests/data/golden/models.txt for every target `hybgen --help` names and
# compares each file with the SHA-256 committed in tests/data/golden/NAME.sha256,
# so that a change which alters generated code is seen (and said why in its
# commit) instead of slipping through.
#
#   scripts/golden.sh check  [HYBGEN]      exit 1 naming every file that differs (ctest: golden.generated_code)
#   scripts/golden.sh update [HYBGEN]      rewrite the .sha256 files from this hybgen
#   scripts/golden.sh write DIR [HYBGEN]   write the generated trees to DIR/MODEL/TARGET, to diff -r
#                                          two hybgen builds (what changed, not only that it did)
#
# HYBGEN defaults to build/hybgen. Models are run from the repository root, so
# the manifests' "source" paths are the same on every machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
golden="$root/tests/data/golden"

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

mode="${1:-}"
[ -n "$mode" ] || usage
shift
out=""
case "$mode" in
  check | update) ;;
  write)
    out="${1:-}"
    [ -n "$out" ] || usage
    shift
    ;;
  *) usage ;;
esac
hybgen="${1:-$root/build/hybgen}"
[ -x "$hybgen" ] || { echo "golden.sh: no hybgen at $hybgen (build it: scripts/build.sh)" >&2; exit 2; }
hybgen="$(cd "$(dirname "$hybgen")" && pwd)/$(basename "$hybgen")"

# Every target the CLI offers: a new target is covered (and fails until updated).
targets=$("$hybgen" --help | sed -n 's/.*--target TEXT:{\([^}]*\)}.*/\1/p' | tr ',' ' ')
[ -n "$targets" ] || { echo "golden.sh: could not read the targets from $hybgen --help" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
status=0
while IFS='|' read -r model args; do
  model="$(echo "$model" | xargs)"
  case "$model" in '' | '#'*) continue ;; esac
  read -r -a argv <<<"$args"
  for target in $targets; do
    dir="$work/$model/$target"
    if ! "$hybgen" "${argv[@]}" --name "$model" --target "$target" --no-board-measure -o "$dir" \
      >"$work/log" 2>&1; then
      echo "golden.sh: $model for $target did not generate:" >&2
      cat "$work/log" >&2
      exit 1
    fi
  done
  sums="$work/$model.sha256"
  (cd "$work/$model" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum) >"$sums"
  case "$mode" in
    update) cp "$sums" "$golden/$model.sha256" ;;
    write) mkdir -p "$out" && rm -rf "${out:?}/$model" && cp -r "$work/$model" "$out/$model" ;;
    check)
      if [ ! -f "$golden/$model.sha256" ]; then
        echo "golden.sh: tests/data/golden/$model.sha256 is missing (scripts/golden.sh update)" >&2
        status=1
      elif ! cmp -s "$sums" "$golden/$model.sha256"; then
        echo "golden.sh: the code generated for $model differs from tests/data/golden/$model.sha256:" >&2
        # diff exits 1 on a difference: without `|| true`, pipefail and set -e would end the check at this model.
        diff <(awk '{print $2, $1}' "$golden/$model.sha256") <(awk '{print $2, $1}' "$sums") |
          sed -n 's/^[<>] \([^ ]*\) .*/  \1/p' | LC_ALL=C sort -u >&2 || true
        status=1
      fi
      ;;
  esac
done <"$golden/models.txt"

if [ "$status" != 0 ]; then
  cat >&2 <<'EOF'
If the change is meant, say why in the commit and run scripts/golden.sh update;
to see what changed, write both builds' trees and compare them:
  scripts/golden.sh write /tmp/new && scripts/golden.sh write /tmp/old OLD/build/hybgen && diff -r /tmp/old /tmp/new
EOF
fi
exit "$status"
