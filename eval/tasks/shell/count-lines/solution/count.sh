#!/usr/bin/env bash
# Prints the number of lines in DIR's *.txt files.
dir=${1:-}
if [ ! -d "$dir" ]; then
  echo "count.sh: $dir is not a folder" >&2
  exit 1
fi
total=0
for f in "$dir"/*.txt; do
  [ -f "$f" ] || continue
  n=$(wc -l < "$f")
  total=$((total + n))
done
echo "$total"
