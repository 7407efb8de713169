#!/usr/bin/env bash
# After `make test` fails: if pytest died rather than reported (exit status above 5: a signal), print the
# tests its workers were running and the crashing thread's frames, short enough to be the last thing CI shows.
log=$1 current=$2 rc=$3
[ "$rc" -le 5 ] && exit 0
echo "=== pytest died (exit status $rc) in: $(cat "$current" "$current".gw* 2>/dev/null | paste -sd ' ' || echo 'an unknown test')"
grep -m3 -B2 "Fatal Python error\|qt.qpa\|QThread\|Assertion" "$log" | cut -c1-200
awk '/^Current thread|^Thread 0x/ {n++} n>0 && /Current thread/ {p=1} p && NF==0 {exit} p' "$log" | head -14 | cut -c1-200
