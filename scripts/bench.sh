#!/usr/bin/env bash
# bench.sh: dsh-acp's speed figures, through the binary, in one table of
# ratios against the floor agent, a previous build and the peers.
#
# Usage: scripts/bench.sh [--base COMMIT] [--peers DIR] [--runs N]
#                         [--only startup|exit|list|history|bash]
#
# It builds dsh-acp statically (CGO_ENABLED=0, as the README and releases
# do), the stdlib-only floor agent (cmd/dsh-acp/testdata/floor) and, with
# --base (default: the last tag, when there is one), the same binary from
# a git worktree of COMMIT (the previous build), then runs the Go
# benchmarks of cmd/dsh-acp/bench_test.go against them:
#
#   BenchmarkStartup           spawn -> `initialize` response, spawn ->
#                              `session/new` response, RSS after
#                              initialize, stdin EOF -> exit (idle; with a
#                              session open)
#   BenchmarkExitBusy          the exits again with 1,000 more idle
#                              processes on the machine
#   BenchmarkListSessions10000 `session/list` over 10,000 logged sessions:
#                              the first page (with the list index; after
#                              removing it), a later page, the whole walk
#   BenchmarkHistory10000      session/load and session/resume of a
#                              session of 10,000 tool calls: time, peak RSS
#   BenchmarkPromptBigHistory  one prompt on a resumed history of about
#                              50 MB (a model server on 127.0.0.1): peak RSS
#                              against the request's size
#   BenchmarkToolTurnHistory   a prompt turn of 50 tool calls on a resumed
#                              session of 1,000 (a model server on
#                              127.0.0.1): the turn, the time per step
#   BenchmarkBashTurn          whole prompt turns (recorded model, real
#                              bash) of 100 MB and 1 GB of output and of
#                              `echo a; sleep 0.005; echo b`, for a client
#                              with live terminals and one without, against
#                              the bare command; the two pieces again with
#                              a state folder whose sandbox probe is cached
#                              (every command after the first since boot)
#
# Each benchmark interleaves what it compares within one loop and reports
# medians, so ratios come from one run on one machine state. codex-acp
# and claude-agent-acp are measured (start-up only: their turns need a
# model server) when found in --peers DIR (DIR, DIR/bin or
# DIR/node_modules/.bin) or, without --peers, on PATH; nothing is
# installed. --runs N sets the start-up iterations (default 30; exit
# N/3, list and history N/10, the turns N/10, at least 3 each). The
# machine's load average is printed before and after: on a shared
# machine the ratios are the figures to read.
set -euo pipefail

base="" peers="" runs=30 only=""
while [ $# -gt 0 ]; do
	case $1 in
	--base) base=$2; shift 2 ;;
	--peers) peers=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d /tmp/dsh-bench.XXXXXX)
cleanup() {
	if [ -d "$work/base-src" ]; then git worktree remove --force "$work/base-src" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "building dsh-acp and the floor agent (CGO_ENABLED=0)..." >&2
CGO_ENABLED=0 go build -o "$work/dsh-acp" ./cmd/dsh-acp
CGO_ENABLED=0 go build -o "$work/floor" ./cmd/dsh-acp/testdata/floor
export DSH_BENCH_BIN=$work/dsh-acp DSH_BENCH_FLOOR=$work/floor
if [ -z "$base" ]; then
	base=$(git describe --tags --abbrev=0 2>/dev/null || true)
fi
agents=${DSH_BENCH_AGENTS:-}
if [ -n "$base" ]; then
	echo "building the previous build, $base, from a git worktree..." >&2
	git worktree add --detach "$work/base-src" "$base" >/dev/null 2>&1
	(cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/base" ./cmd/dsh-acp)
	agents="base=$work/base${agents:+ $agents}"
fi
export DSH_BENCH_AGENTS=$agents
if [ -n "$peers" ]; then
	export DSH_BENCH_PEERS=$(cd "$peers" && pwd)
else
	for p in codex-acp claude-agent-acp; do
		if command -v "$p" >/dev/null 2>&1; then export DSH_BENCH_PEERS=$(dirname "$(command -v "$p")"); break; fi
	done
fi

at_least3() { local n=$(($1)); [ "$n" -lt 3 ] && n=3; echo "$n"; }
bench() { # bench REGEXP RUNS: run the benchmarks matching REGEXP RUNS times
	echo "running $1 (${2}x)..." >&2
	go test -run '^$' -bench "$1" -benchtime "${2}x" -count 1 -timeout 60m ./cmd/dsh-acp | tee -a "$work/raw.txt" >&2
}
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
load_before=$(load)
: >"$work/raw.txt"
case $only in "" | startup) bench '^BenchmarkStartup$' "$runs" ;; esac
case $only in "" | exit) bench '^BenchmarkExitBusy$' "$(at_least3 "$runs/3")" ;; esac
case $only in "" | list) bench '^BenchmarkListSessions10000$' "$(at_least3 "$runs/10")" ;; esac
case $only in "" | history) bench '^(BenchmarkHistory10000|BenchmarkPromptBigHistory|BenchmarkToolTurnHistory)$' "$(at_least3 "$runs/10")" ;; esac
case $only in "" | bash) bench '^BenchmarkBashTurn$' "$(at_least3 "$runs/10")" ;; esac
size() { [ -f "$1" ] && echo $(($(stat -c %s "$1") / 1000)) || echo -; }
echo "size dsh-acp $(size "$work/dsh-acp") floor $(size "$work/floor") base $(size "$work/base")" >>"$work/raw.txt"

# The table: one row per figure, from the benchmarks' metrics: dsh-acp,
# the floor agent, the previous build (base), a peer, and dsh-acp's ratio
# to each.
awk -v peer="$(for p in codex-acp claude-agent-acp; do grep -q "$p-init-ms" "$work/raw.txt" && { echo "$p"; break; }; done)" \
	-v basename="${base:-}" -v before="$load_before" -v after="$(load)" -v procs="$(nproc 2>/dev/null || echo ?)" '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) m[name, $(i + 1)] = $i
	seen[name] = 1
}
/^size / { m["size", "dsh"] = $3; m["size", "floor"] = $5; m["size", "base"] = $7; seen["size"] = 1 }
function v(b, k) { return ((b, k) in m && m[b, k] != "-") ? sprintf("%.2f", m[b, k]) : "-" }
function x(a, b) { return (a == "-" || b == "-" || b + 0 == 0) ? "-" : sprintf("%.2fx", a / b) }
function row(fig, a, f, bs, p, target) {
	printf "| %-46s | %9s | %8s | %9s | %9s | %7s | %7s | %7s | %-18s |\n", fig, a, f, bs, p, x(a, f), x(a, bs), x(a, p), target
}
# r: a row from benchmark b, metric k (dsh-acp), with the metrics of
# the floor, base and peer named fk, "base-"k and peer"-"k.
function r(fig, b, k, fk, target) {
	row(fig, v(b, k), (fk == "" ? "-" : v(b, fk)), v(b, "base-" k), (peer == "" ? "-" : v(b, peer "-" k)), target)
}
END {
	printf "| %-46s | %9s | %8s | %9s | %9s | %7s | %7s | %7s | %-18s |\n", "figure (medians)", "dsh-acp", "floor", "base", (peer == "" ? "peer" : peer), "/floor", "/base", "/peer", "target"
	print "|------------------------------------------------|-----------|----------|-----------|-----------|---------|---------|---------|--------------------|"
	s = "BenchmarkStartup"
	if (s in seen) {
		r("spawn -> initialize, ms", s, "init-ms", "floor-init-ms", "<= 2.5x floor")
		r("spawn -> session/new answered, ms", s, "new-ms", "floor-new-ms", "<= 3x floor")
		r("RSS after initialize, MiB", s, "RSS-MiB", "floor-RSS-MiB", "<= 11")
		r("stdin EOF -> exit, idle, ms", s, "exit-ms", "floor-exit-ms", "")
		r("stdin EOF -> exit, a session open, ms", s, "exit-new-ms", "", "")
	}
	s = "BenchmarkExitBusy"
	if (s in seen) {
		r("exit, idle, 1,000 more processes, ms", s, "exit-ms", "floor-exit-ms", "<= 5")
		r("exit, a session open, 1,000 more processes, ms", s, "exit-new-ms", "", "<= 5")
	}
	s = "BenchmarkListSessions10000"
	if (s in seen) {
		r("session/list 10,000: first page, ms", s, "first-page-ms", "", "<= 50")
		r("  first page, no index file (rebuilt), ms", s, "cold-first-page-ms", "", "")
		r("  a later page, ms", s, "later-page-ms", "", "<= 10")
		r("  all 200 pages, ms", s, "all-pages-ms", "", "<= 1000")
	}
	s = "BenchmarkHistory10000"
	if (s in seen) {
		r("session/load, 10,000 tool calls, ms", s, "load-ms", "", "")
		r("  peak RSS, MiB", s, "load-peak-MiB", "", "<= 64")
		r("session/resume, 10,000 tool calls, ms", s, "resume-ms", "", "")
		r("  peak RSS, MiB", s, "resume-peak-MiB", "", "")
	}
	s = "BenchmarkPromptBigHistory"
	if (s in seen) {
		r("prompt on a " v(s, "request-MB") " MB history, ms", s, "prompt-ms", "", "")
		r("  peak RSS, MiB", s, "peak-MiB", "", sprintf("<= %.0f (3x request)", 3 * m[s, "request-MB"] * 1e6 / 1048576))
	}
	s = "BenchmarkToolTurnHistory"
	if (s in seen) {
		r("50-call turn on 1,000 calls, ms", s, "turn-ms", "", "")
		r("  per step (" v(s, "request-MB") " MB requests), ms", s, "step-ms", "", "")
	}
	split("100MB 1GB two-piece two-piece-warm", c, " ")
	for (i = 1; i <= 4; i++) for (t = 0; t < 2; t++) {
		s = "BenchmarkBashTurn/" c[i] (t == 0 ? "/terminal" : "/plain")
		if (!(s in seen)) continue
		fig = (c[i] == "two-piece" ? "two pieces" : (c[i] == "two-piece-warm" ? "two pieces, probe cached" : c[i])) (t == 0 ? ", live terminal" : ", no terminal")
		target = (c[i] == "1GB" ? "<= 1.3x bare" : (c[i] == "100MB" ? "<= 2x bare" : "<= bare + 5 ms"))
		row("turn " fig ", ms (floor column: bare)", v(s, "turn-ms"), v(s, "bare-ms"), "-", "-", target)
		if (c[i] !~ /^two-piece/) row("  peak RSS of that turn, MiB", v(s, "peak-RSS-MiB"), "-", "-", "-", "<= 50")
	}
	if ("size" in seen) row("CGO_ENABLED=0 binary, kB", m["size", "dsh"], m["size", "floor"], m["size", "base"], "-", "<= 15000")
	printf "\nbase: %s. Load average (1, 5, 15 min) before: %s; after: %s; %s CPUs.\n", (basename == "" ? "none (--base COMMIT)" : basename), before, after, procs
	if (("BenchmarkBashTurn/100MB/terminal" in seen) || ("BenchmarkBashTurn/1GB/plain" in seen))
		print "100 MB / 1 GB: yes ... | head -c N; two pieces: echo a; sleep 0.005; echo b; bare: the command alone under bash."
}' "$work/raw.txt"
