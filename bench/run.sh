#!/usr/bin/env bash
# Benchmark of `locality matrix -o summary` against parse baselines on a synthetic
# 5,000-node cluster dump, plus the categorisation scaling study (1,000 vs 5,000 nodes).
# See bench/README.md. Environment:
#   BENCH_RUNS      timed runs per command (default 3; median reported), after one warm-up
#   BENCH_GEN_ARGS  extra gen-cluster arguments (default: none; shape below), e.g.
#                   "--detail full" or "--indent 0"; files are regenerated when these
#                   or the generator's source change (see generate below)
#   LOCALITY_BIN    the locality binary (default target/release/locality)
#   BENCH_OUT       directory for the generated files and results.md (default bench/out)
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${BENCH_OUT:-$ROOT/bench/out}
RUNS=${BENCH_RUNS:-3}
GEN_ARGS=${BENCH_GEN_ARGS:-}
LOCALITY=${LOCALITY_BIN:-$ROOT/target/release/locality}
GEN="$ROOT/target/release/gen-cluster"
BASE="$ROOT/target/release/parse-baseline"
SHAPE=(--zones 3 --pods 100000 --services 10000 --seed 1)
BIG="$OUT/cluster-5000.json"
SMALL="$OUT/cluster-1000.json"
RESULTS="$OUT/results.md"
mkdir -p "$OUT"

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "BENCH_RUNS must be a positive integer" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench: /usr/bin/time (GNU time) is required" >&2; exit 1; }

log() { echo "bench: $*" >&2; }

log "building release binaries"
if ! cargo build --release -p locality -p locality-bench >&2; then
    log "building package locality failed; building locality-bench only, (a) will be skipped if absent"
    cargo build --release -p locality-bench >&2
fi

# generate FILE ARGS...: (re)writes FILE unless FILE.args, written after a successful
# run, holds the same arguments and the same generator source hash.
GEN_SRC_HASH=$(cat "$ROOT"/bench/src/bin/gen-cluster/*.rs | sha256sum | cut -c1-16)
generate() {
    local file=$1; shift
    local want="gen-cluster $* (source $GEN_SRC_HASH)"
    if [[ -s "$file" && -f "$file.args" && "$(cat "$file.args")" == "$want" ]]; then
        log "up to date: ${file#"$ROOT"/} ($want)"
        return
    fi
    log "generating ${file#"$ROOT"/}: $want"
    rm -f "$file" "$file.args"
    "$GEN" "$@" -o "$file"
    echo "$want" > "$file.args"
}
# shellcheck disable=SC2086 # GEN_ARGS is a word list on purpose
generate "$BIG" --nodes 5000 "${SHAPE[@]}" $GEN_ARGS
# Same pods, Services and endpoints; only the nodes differ.
# shellcheck disable=SC2086
generate "$SMALL" --nodes 1000 "${SHAPE[@]}" $GEN_ARGS

file_mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: one warm-up (also warms the page cache), then RUNS timed runs.
# Sets T[NAME] (median wall seconds), C[NAME] (median CPU seconds, user + system) and
# M[NAME] (median peak RSS, MB).
declare -A T C M
measure() {
    local name=$1; shift
    local tf; tf=$(mktemp)
    log "($name) warm-up: $*"
    "$@" > /dev/null
    local times=() cpus=() rss=()
    for ((i = 1; i <= RUNS; i++)); do
        /usr/bin/time -f '%e %M %U %S' -o "$tf" "$@" > /dev/null
        read -r t m u s < <(tail -n 1 "$tf")
        times+=("$t"); rss+=("$m"); cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
        log "($name) run $i: ${t} s, $((m / 1024)) MB"
    done
    rm -f "$tf"
    T[$name]=$(printf '%s\n' "${times[@]}" | median)
    C[$name]=$(printf '%s\n' "${cpus[@]}" | median)
    M[$name]=$(printf '%s\n' "${rss[@]}" | median | awk '{ printf "%.0f", $1 * 1024 / 1e6 }')
}

HAVE_A=1
if ! "$LOCALITY" matrix --help > /dev/null 2>&1; then
    HAVE_A=0
    log "skipping (a): '$LOCALITY matrix --help' failed (binary or command not there yet)"
fi
HAVE_JQ=1
command -v jq > /dev/null || { HAVE_JQ=0; log "skipping (c): jq not installed"; }

((HAVE_A)) && measure a "$LOCALITY" matrix -f "$BIG" -o summary
measure b "$BASE" --mode ignored "$BIG"
((HAVE_JQ)) && measure c jq '.items | length' "$BIG"
measure d "$BASE" --mode k8s-openapi "$BIG"
measure e "$BASE" --mode sonic-ignored "$BIG"
measure f "$BASE" --mode simd-json-tape "$BIG"

# Scaling study: categorize phase, 1,000 vs 5,000 nodes, same Services and endpoints.
# The locality binary prints, under LOCALITY_PROFILE=1, lines on stderr:
#   locality-profile: phase=<name> seconds=<float>
phase_seconds() { # FILE PHASE -> median seconds of PHASE over RUNS runs (after a warm-up)
    local file=$1 phase=$2 vals=() v
    LOCALITY_PROFILE=1 "$LOCALITY" matrix -f "$file" -o summary 2> /dev/null > /dev/null
    for ((i = 1; i <= RUNS; i++)); do
        v=$(LOCALITY_PROFILE=1 "$LOCALITY" matrix -f "$file" -o summary 2>&1 > /dev/null |
            sed -n "s/^locality-profile: phase=$phase seconds=\([0-9.eE+-]*\)\$/\1/p" | tail -n 1)
        [[ -n "$v" ]] || return 1
        vals+=("$v")
    done
    printf '%s\n' "${vals[@]}" | median
}

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (y > 0) printf "%.2f", x / y; else print "n/a" }'; }
check() { awk -v v="$1" -v lim="$2" -v op="$3" 'BEGIN { ok = (op == "le") ? (v <= lim) : (v >= lim); print ok ? "PASS" : "FAIL" }'; }

BIG_MB=$(file_mb "$BIG")
SMALL_MB=$(file_mb "$SMALL")
{
    echo "# locality benchmark"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo); commit: $(git rev-parse --short HEAD 2> /dev/null || echo unknown)$(git diff --quiet 2> /dev/null || echo ' (dirty)')"
    echo "- input: \`${BIG#"$ROOT"/}\`, $BIG_MB MB (gen-cluster --nodes 5000 ${SHAPE[*]}${GEN_ARGS:+ $GEN_ARGS}); MB = 10^6 bytes throughout"
    echo "- median of $RUNS runs after one warm-up; peak RSS from \`/usr/bin/time -f '%e %M'\`"
    echo
    echo "| | command | seconds | CPU seconds | peak RSS MB | RSS / file | time / (b) | CPU / (b) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|"
    row() { # KEY LABEL
        if [[ -n "${T[$1]:-}" ]]; then
            echo "| ($1) | $2 | ${T[$1]} | ${C[$1]} | ${M[$1]} | $(ratio "${M[$1]}" "$BIG_MB") | $(ratio "${T[$1]}" "${T[b]}") | $(ratio "${C[$1]}" "${C[b]}") |"
        else
            echo "| ($1) | $2 | skipped | | | | | |"
        fi
    }
    row a '`locality matrix -f FILE -o summary`'
    row b '`parse-baseline --mode ignored FILE` (read + serde_json `IgnoredAny`)'
    row c "\`jq '.items \\| length' FILE\`"
    row d '`parse-baseline --mode k8s-openapi FILE`'
    row e '`parse-baseline --mode sonic-ignored FILE` (read + sonic-rs `IgnoredAny`)'
    row f '`parse-baseline --mode simd-json-tape FILE` (read + copy + simd-json tape)'
    echo
    echo "| check | target | measured | result |"
    echo "|---|---|---:|---|"
    if ((HAVE_A)); then
        r_ab=$(ratio "${T[a]}" "${T[b]}")
        echo "| (a) ≤ 1.5 × (b), wall (issue 10) | ≤ 1.50 | $r_ab | $(check "$r_ab" 1.5 le) |"
        if ((HAVE_JQ)); then
            r_ca=$(ratio "${T[c]}" "${T[a]}")
            echo "| (c) / (a) ≥ 5 | ≥ 5.00 | $r_ca | $(check "$r_ca" 5 ge) |"
        else
            echo "| (c) / (a) ≥ 5 | ≥ 5.00 | jq absent | skipped |"
        fi
        r_rss=$(ratio "${M[a]}" "$BIG_MB")
        echo "| RSS(a) ≤ 1.5 × file size | ≤ 1.50 | $r_rss | $(check "$r_rss" 1.5 le) |"
    else
        echo "| all checks on (a) | | \`locality matrix\` not available | skipped |"
    fi
    echo
    echo "## Scaling: categorize phase, 1,000 vs 5,000 nodes (same pods, Services, endpoints)"
    echo
    if ((HAVE_A)) && s1=$(phase_seconds "$SMALL" categorize) && s5=$(phase_seconds "$BIG" categorize); then
        r_s=$(ratio "$s5" "$s1")
        echo "| file | MB | categorize seconds (median of $RUNS) |"
        echo "|---|---:|---:|"
        echo "| cluster-1000.json | $SMALL_MB | $s1 |"
        echo "| cluster-5000.json | $BIG_MB | $s5 |"
        echo
        echo "5000/1000 ratio: **$r_s** (target ≤ 1.5): $(check "$r_s" 1.5 le)"
    elif ((HAVE_A)); then
        echo "skipped: no \`locality-profile: phase=categorize seconds=<float>\` line on stderr under LOCALITY_PROFILE=1"
    else
        echo "skipped: \`locality matrix\` not available"
    fi
} | tee "$RESULTS"
log "results written to $RESULTS"
