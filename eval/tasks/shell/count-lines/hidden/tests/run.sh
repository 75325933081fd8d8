#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$t/a/sub" "$t/empty"
printf 'one\ntwo\n' > "$t/a/x.txt"
printf 'three\n' > "$t/a/with space.txt"
printf 'not\ncounted\n' > "$t/a/sub/deep.txt"
printf 'skip\n' > "$t/a/notes.md"
got=$(bash "$here/count.sh" "$t/a") || fail "exit status"
[ "$got" = "3" ] || fail "a: got '$got', want 3"
got=$(bash "$here/count.sh" "$t/empty") || fail "exit status on an empty folder"
[ "$got" = "0" ] || fail "empty: got '$got', want 0"
if bash "$here/count.sh" "$t/missing" >/dev/null 2>&1; then fail "a missing folder succeeded"; fi
echo ok
