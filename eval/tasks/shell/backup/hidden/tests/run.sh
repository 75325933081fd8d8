#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$t/src"
echo a > "$t/src/plain.txt"
echo b > "$t/src/two words.txt"
bash "$here/backup.sh" "$t/src" "$t/out dir" || fail "exit status"
[ "$(cat "$t/out dir/plain.txt.bak")" = a ] || fail "plain.txt"
[ "$(cat "$t/out dir/two words.txt.bak")" = b ] || fail "a name with a space"
[ "$(ls "$t/out dir" | wc -l)" -eq 2 ] || fail "extra files"
echo ok
