#!/usr/bin/env bash
# Copies each file of SRC to DEST/NAME.bak.
src=$1
dest=$2
mkdir -p -- "$dest"
for f in "$src"/*; do
  [ -f "$f" ] || continue
  cp -- "$f" "$dest/$(basename -- "$f").bak"
done
