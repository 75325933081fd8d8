#!/usr/bin/env bash
# Prints the number of lines in DIR's *.txt files.
echo "not written yet" >&2
exit 2
