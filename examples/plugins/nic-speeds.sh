#!/bin/sh
# A label plugin: reads "node,nic-speed" lines from the file after --inventory
# and prints {"node": {"nic.example.com/speed": "<speed>"}, …}.
set -eu
[ "${1:-}" = "--inventory" ] || { echo "usage: nic-speeds.sh --inventory FILE" >&2; exit 2; }
awk -F, 'BEGIN { printf "{"; n = 0 }
  NF == 2 && $1 != "" { printf "%s\"%s\": {\"nic.example.com/speed\": \"%s\"}", (n++ ? ", " : ""), $1, $2 }
  END { print "}" }' "$2"
