#!/usr/bin/env bash
# Benchmark of `locality verify` on the embedded simulated cluster: the default run (the
# built-in four-node topology) against the same run on a 30-node cluster (3 control-plane
# nodes and 27 workers over three zones). Targets: the default run ≤ 10 s of wall time; the
# 30-node run ≤ 1.5 × the default run. See bench/README.md ("verify"). Environment:
#   BENCH_RUNS    timed pairs (default 5; medians reported), after one warm-up of each
#   LOCALITY_BIN  the locality binary (default target/release/locality, built here)
#   BENCH_OUT     directory for the topology, the evidence and verify-results.md
#                 (default bench/out)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${BENCH_OUT:-$ROOT/bench/out}
RUNS=${BENCH_RUNS:-5}
LOCALITY=${LOCALITY_BIN:-$ROOT/target/release/locality}
RESULTS="$OUT/verify-results.md"
mkdir -p "$OUT"

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "BENCH_RUNS must be a positive integer" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench: /usr/bin/time (GNU time) is required" >&2; exit 1; }
log() { echo "bench: $*" >&2; }

if [[ -z "${LOCALITY_BIN:-}" ]]; then
    log "building the release binary"
    cargo build --release -p locality >&2
fi

# The 30-node shape of the verify shape sweep: 27 workers, nine per zone, and three
# control-plane nodes (tainted NoSchedule), one per zone.
THIRTY="$OUT/thirty-nodes.yaml"
{
    echo "name: thirty-nodes"
    echo "nodes:"
    for z in a b c; do
        for i in $(seq 0 8); do echo "  - {name: worker-$z$i, zone: zone-$z}"; done
    done
    for z in a b c; do echo "  - {name: cp-$z, zone: zone-$z, controlPlane: true}"; done
} > "$THIRTY"

# one NAME ARGS...: one timed run; appends "wall rss_kb user sys exit" to $OUT/NAME.times.
one() {
    local name=$1; shift
    local ev="$OUT/evidence-$name"
    rm -rf "$ev"
    local code=0
    /usr/bin/time -o "$OUT/$name.time" -f '%e %M %U %S' "$LOCALITY" verify --evidence "$ev" "$@" \
        > "$OUT/$name.out" 2>&1 || code=$?
    echo "$(cat "$OUT/$name.time") $code" >> "$OUT/$name.times"
}

rm -f "$OUT/default.times" "$OUT/thirty.times"
log "warm-up"
one default; one thirty --topology "$THIRTY"
rm -f "$OUT/default.times" "$OUT/thirty.times"
for i in $(seq 1 "$RUNS"); do
    log "pair $i of $RUNS"
    one default
    one thirty --topology "$THIRTY"
done

median() { sort -g | awk '{a[NR]=$1} END {m=(NR+1)/2; if (NR%2) print a[m]; else print (a[m-0.5]+a[m+0.5])/2}'; }
col() { awk -v c="$2" '{print $c}' "$OUT/$1.times"; }
cpu() { awk '{print $3+$4}' "$OUT/$1.times"; }
ratios() { paste -d' ' "$OUT/thirty.times" "$OUT/default.times" | awk -v a="$1" -v b="$2" '{printf "%.3f\n", $a/$b}'; }

dw=$(col default 1 | median); tw=$(col thirty 1 | median)
dc=$(cpu default | median); tc=$(cpu thirty | median)
dm=$(col default 2 | median); tm=$(col thirty 2 | median)
rw=$(ratios 1 6 | median)
rc=$(paste -d' ' <(cpu thirty) <(cpu default) | awk '{printf "%.3f\n", $1/$2}' | median)
dd=$(tail -1 "$OUT/default.out"); td=$(grep -E '^(PARTIAL )?(ACCEPT|REPAIR|RERUN|HOLD)' "$OUT/thirty.out" | head -1)
dd=$(grep -E '^(PARTIAL )?(ACCEPT|REPAIR|RERUN|HOLD)' "$OUT/default.out" | head -1)
ok() { awk -v x="$1" -v lim="$2" 'BEGIN {print (x <= lim) ? "met" : "NOT met"}'; }

{
    echo "# locality verify on the simulated cluster: default run against 30 nodes"
    echo
    echo "$RUNS pairs in turn (default, 30 nodes, …) after one warm-up each; medians; the ratio taken pair by pair."
    echo "Machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
    echo
    echo "| run | wall s | CPU s | peak RSS MiB | decision |"
    echo "|---|---:|---:|---:|---|"
    echo "| default (four-nodes) | $dw | $dc | $((dm / 1024)) | ${dd%% (*} |"
    echo "| 30 nodes | $tw | $tc | $((tm / 1024)) | ${td%% (*} |"
    echo
    echo "30 nodes / default: wall $rw, CPU $rc."
    echo
    echo "- default run ≤ 10 s wall: $(ok "$dw" 10)"
    echo "- 30 nodes ≤ 1.5 × the default run (wall): $(ok "$rw" 1.5)"
} | tee "$RESULTS"
