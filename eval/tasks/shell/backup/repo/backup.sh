#!/usr/bin/env bash
# Copies each file of SRC to DEST/NAME.bak.
src=$1
dest=$2
for f in $(ls $src); do
  cp $src/$f $dest/$f.bak
done
