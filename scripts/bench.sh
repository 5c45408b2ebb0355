#!/usr/bin/env bash
# bench.sh: the figures of issue 18, through the binary, in one table.
#
# Usage: scripts/bench.sh [--peers DIR] [--runs N] [--only startup|list|bash]
#
# It builds dsh-acp statically (CGO_ENABLED=0, as the README and releases
# do) and the stdlib-only floor agent (cmd/dsh-acp/testdata/floor), then
# runs the Go benchmarks of cmd/dsh-acp/bench_test.go against them:
#
#   BenchmarkStartup           spawn -> `initialize` response, RSS after it,
#                              stdin EOF -> exit (idle; with a session open),
#                              dsh-acp, the floor and the peers in turn
#   BenchmarkListSessions1000  `session/list` over 1,000 logged sessions:
#                              the first page, all 20 pages of one walk
#   BenchmarkBashTurn          whole prompt turns (recorded model, real bash)
#                              of `yes | head -c 100000000` and of
#                              `echo a; sleep 0.005; echo b`, for a client
#                              with live terminals and one without, against
#                              the bare command
#
# Each benchmark interleaves what it compares within one loop and reports
# medians. --peers DIR measures the start-up of codex-acp and
# claude-agent-acp found in DIR, DIR/bin or DIR/node_modules/.bin (nothing
# is installed; their turns need a model server and are not run).
# --runs N sets the iterations of the start-up benchmark (default 30; the
# list runs N/6, the turns N/10, at least 3 each). It takes about a
# minute, most of it the four 100 MB turns of the current pacing.
# DSH_BENCH_AGENTS="name=path ..." adds other builds to the start-up
# rows (e.g. the binary of another commit).
set -euo pipefail

peers="" runs=30 only=""
while [ $# -gt 0 ]; do
	case $1 in
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
trap 'rm -rf "$work"' EXIT

echo "building dsh-acp and the floor agent (CGO_ENABLED=0)..." >&2
CGO_ENABLED=0 go build -o "$work/dsh-acp" ./cmd/dsh-acp
CGO_ENABLED=0 go build -o "$work/floor" ./cmd/dsh-acp/testdata/floor
export DSH_BENCH_BIN=$work/dsh-acp DSH_BENCH_FLOOR=$work/floor
if [ -n "$peers" ]; then
	export DSH_BENCH_PEERS=$(cd "$peers" && pwd)
fi

at_least3() { local n=$(($1)); [ "$n" -lt 3 ] && n=3; echo "$n"; }
bench() { # bench REGEXP RUNS: run the benchmarks matching REGEXP RUNS times
	echo "running $1 (${2}x)..." >&2
	go test -run '^$' -bench "$1" -benchtime "${2}x" -count 1 -timeout 30m ./cmd/dsh-acp | tee -a "$work/raw.txt" >&2
}
: >"$work/raw.txt"
case $only in "" | startup) bench '^BenchmarkStartup$' "$runs" ;; esac
case $only in "" | list) bench '^BenchmarkListSessions1000$' "$(at_least3 "$runs/6")" ;; esac
case $only in "" | bash) bench '^BenchmarkBashTurn$' "$(at_least3 "$runs/10")" ;; esac

# The table: one row per figure, from the benchmarks' metrics.
awk -v peers="${DSH_BENCH_PEERS:-}" -v agents="${DSH_BENCH_AGENTS:-}" '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) m[name, $(i + 1)] = $i
	seen[name] = 1
}
function v(b, k) { return ((b, k) in m) ? sprintf("%.2f", m[b, k]) : "-" }
function row(fig, a, b, r, target) { printf "| %-44s | %9s | %9s | %8s | %-16s |\n", fig, a, b, r, target }
function x(s) { return s == "-" ? s : s "x" }
END {
	printf "| %-44s | %9s | %9s | %8s | %-16s |\n", "figure (medians)", "dsh-acp", "compared", "ratio", "target"
	printf "|%s|%s|%s|%s|%s|\n", "----------------------------------------------", "-----------", "-----------", "----------", "------------------"
	s = "BenchmarkStartup"
	if (s in seen) {
		row("spawn -> initialize, ms (vs floor agent)", v(s, "init-ms"), v(s, "floor-init-ms"), x(v(s, "init-x-floor")), "<= 2x floor")
		n = split("codex-acp claude-agent-acp", p, " ")
		for (i = 1; i <= n; i++) if ((s, p[i] "-init-ms") in m)
			row("  " p[i] " spawn -> initialize, ms", v(s, "init-ms"), v(s, p[i] "-init-ms"), x(sprintf("%.2f", m[s, "init-ms"] / m[s, p[i] "-init-ms"])), "")
		n = split(agents, p, " ")
		for (i = 1; i <= n; i++) { split(p[i], kv, "="); if ((s, kv[1] "-init-ms") in m)
			row("  build " kv[1] " spawn -> initialize, ms", v(s, "init-ms"), v(s, kv[1] "-init-ms"), x(sprintf("%.2f", m[s, "init-ms"] / m[s, kv[1] "-init-ms"])), "") }
		row("RSS after initialize, MiB (vs floor)", v(s, "RSS-MiB"), v(s, "floor-RSS-MiB"), "", "<= 10")
		row("stdin EOF -> exit, idle, ms (vs floor)", v(s, "exit-ms"), v(s, "floor-exit-ms"), "", "<= 100")
		row("stdin EOF -> exit, a session open, ms", v(s, "exit-new-ms"), "", "", "<= 100")
	}
	s = "BenchmarkListSessions1000"
	if (s in seen) {
		row("session/list, 1,000 sessions: first page, ms", v(s, "first-page-ms"), "", "", "<= 30")
		row("session/list: all 20 pages, ms (vs first)", v(s, "all-pages-ms"), v(s, "first-page-ms"), x(v(s, "all-x-first")), "about 1x")
	}
	split("100MB/terminal 100MB/plain two-piece/terminal two-piece/plain", c, " ")
	for (i = 1; i <= 4; i++) {
		s = "BenchmarkBashTurn/" c[i]
		if (!(s in seen)) continue
		fig = (c[i] ~ /^100MB/ ? "100 MB" : "two pieces") (c[i] ~ /terminal/ ? ", live terminal" : ", no terminal")
		if (c[i] ~ /^100MB/) {
			row("turn " fig ", ms (vs bare)", v(s, "turn-ms"), v(s, "bare-ms"), x(v(s, "turn-x-bare")), "<= 2x bare")
			row("  peak RSS of that turn, MiB", v(s, "peak-RSS-MiB"), "", "", "<= 50")
		} else
			row("turn " fig ", ms (vs bare)", v(s, "turn-ms"), v(s, "bare-ms"), "+" v(s, "extra-ms"), "<= bare + 5 ms")
	}
	if (("BenchmarkBashTurn/100MB/terminal" in seen) || ("BenchmarkBashTurn/two-piece/terminal" in seen))
		print "\n100 MB: yes ... | head -c 100000000; two pieces: echo a; sleep 0.005; echo b; bare: the command alone under bash."
}' "$work/raw.txt"
