#!/usr/bin/env bash
# Prints the Debian archive this machine's apt is configured to use: the URI that serves the
# given suite (default bookworm) of the main archive, or with `--security` the one serving
# <suite>-security. Read from /etc/apt/sources.list and sources.list.d (one-line and deb822
# formats), so a local mirror or proxy is honoured; nothing is hard-coded. Exits 1 if none.
set -euo pipefail
suite=bookworm; want=main
for arg in "$@"; do
  case "$arg" in
    --security) want=security ;;
    *) suite=$arg ;;
  esac
done
target=$suite; [ "$want" = security ] && target="$suite-security"

files=()
[ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && case "$f" in */tandem.sources) ;; *) files+=("$f") ;; esac
done

for f in "${files[@]}"; do
  case "$f" in
    *.sources)
      # deb822 stanzas: print the first URI of a stanza of type deb whose Suites include the target.
      awk -v target="$target" '
        function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " target " ") && uri != "") { print uri; found = 1; exit } types = suites = uri = "" }
        /^[ \t]*$/ { flush(); next }
        /^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
        /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
        /^URIs:/ { sub(/^URIs:[ \t]*/, ""); split($0, u, /[ \t]+/); uri = u[1] }
        END { if (!found) flush() }' "$f"
      ;;
    *)
      # one-line entries: deb [options] URI suite components...
      awk -v target="$target" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } if ($(i + 1) == target) { print $i; exit } }' "$f"
      ;;
  esac
done | head -1 | grep . || { echo "no apt source for $target in ${files[*]:-/etc/apt}" >&2; exit 1; }
