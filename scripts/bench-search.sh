#!/usr/bin/env bash
# bench-search.sh: whole-process timings, side by side in one run, of
#
#  1. our grep tool against ripgrep (`rg`) and GNU `grep -rn` on a
#     generated tree of 100,000 files (internal/gentree: nested
#     .gitignore/.ignore files, .git/info/exclude, binary files; the
#     needle in one visible file in 250, so that no output is cut), and
#  2. a model response with three reads of files the editor is slow to
#     hand over (fs/read_text_file answering after DELAY ms), against the
#     same three reads made one per response (what the agent did before
#     it ran concurrency-safe calls at once).
#
# Usage: scripts/bench-search.sh [ROUNDS]   (default 7; ROUNDS, FILES,
#        DELAY_MS, TREE env vars work too; TREE=DIR reuses a tree made
#        by an earlier run, which it leaves in place)
#
# Part 1 runs a small command built from a throwaway main (kept under
# /tmp, added to the build with -overlay) that calls the grep tool's
# Execute once, exactly as the agent does (argument checks, walk, search,
# output text), and prints the text: the process start, the walk and the
# output are all in the time. rg runs as `rg -n --hidden -g '!.git'` (our
# grep also searches hidden files and skips .git), GNU grep as
# `grep -rn --exclude-dir=.git` (it reads the ignored files too: that is
# the work it does when the model shells out to it). Every round runs the
# three one after the other on a warm page cache; the table shows each
# one's median wall time and median CPU time (user+system), and our ratio
# to each. Targets: at most 1.5x rg's wall time, below GNU grep's.
#
# Part 2 builds bin/dsh-acp and drives it over a real pipe as an ACP
# client (internal/acpclient) from a recording (--replay), with fs
# capabilities; it times session/prompt from request to answer.
#
# Needs bash 5, go, rg (Debian's package ripgrep), GNU grep and GNU time
# (/usr/bin/time, else only wall times are shown).
set -euo pipefail

rounds=${1:-${ROUNDS:-7}}
files=${FILES:-100000}
delay=${DELAY_MS:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d /tmp/bench-search.XXXXXX)
trap 'rm -rf "$work"' EXIT

command -v rg >/dev/null || { echo "bench-search: rg not found (apt-get install ripgrep)" >&2; exit 2; }
grep --version | head -1 | grep -q GNU || { echo "bench-search: GNU grep not found" >&2; exit 2; }
gnutime=""
if [ -x /usr/bin/time ] && /usr/bin/time -f %e true 2>/dev/null; then gnutime=/usr/bin/time; fi

# overlay_build OUT PKGDIR SRC: build SRC as if it were PKGDIR/main.go.
overlay_build() {
	local out=$1 pkg=$2 src=$3
	printf '{"Replace":{"%s/%s/main.go":"%s"}}\n' "$root" "$pkg" "$src" >"$work/overlay-$(basename "$pkg").json"
	go build -overlay "$work/overlay-$(basename "$pkg").json" -o "$out" "./$pkg"
}

cat >"$work/gen.go" <<-'EOF'
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/dsh-acp/dsh-acp/internal/gentree"
)

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	m, err := gentree.Generate(os.Args[1], gentree.Options{Files: n, Seed: 1, NeedleEvery: 250})
	if err != nil {
		panic(err)
	}
	needles := 0
	for _, f := range m.Visible() {
		if len(f.NeedleLines) > 0 {
			needles++
		}
	}
	fmt.Printf("%d files (%d visible), %d folders, %.0f MB, needle in %d visible files\n", len(m.Files), len(m.Visible()), m.Dirs, float64(m.Bytes)/1e6, needles)
}
EOF
cat >"$work/search.go" <<-'EOF'
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/toolsearch"
)

// usage: search CWD ARGS_JSON: runs the grep tool once, prints its text.
func main() {
	t := toolsearch.Grep()
	out, err := t.Execute(context.Background(), &tools.Exec{Name: t.Name, Args: []byte(os.Args[2]), Session: tools.NewSession("bench", os.Args[1])})
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	fmt.Println(tools.JoinText(out.Content))
}
EOF
cat >"$work/parallel.go" <<-'EOF'
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"
	"context"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// usage: parallel BIN WORK ROUNDS DELAY_MS: prints the median prompt time
// of three reads in one response and of three reads in three responses.
func main() {
	bin, work := os.Args[1], os.Args[2]
	rounds, _ := strconv.Atoi(os.Args[3])
	delayMS, _ := strconv.Atoi(os.Args[4])
	delay := time.Duration(delayMS) * time.Millisecond
	ws := filepath.Join(work, "ws")
	must(os.MkdirAll(ws, 0o755))
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		must(os.WriteFile(filepath.Join(ws, n), []byte("text of "+n+"\n"), 0o644))
	}
	read := func(n string) [2]string { return [2]string{"read", `{"file_path":"` + n + `"}`} }
	done := e2etest.Text(nil, []string{"Done."}, "stop")
	step := func(i int, n string) string {
		return replaceID(e2etest.ToolCalls(read(n)), i)
	}
	cases := []struct {
		name   string
		bodies []string
	}{
		{"3 reads in one response (parallel)", []string{e2etest.ToolCalls(read("a.txt"), read("b.txt"), read("c.txt")), done}},
		{"3 reads, one per response (sequential)", []string{step(0, "a.txt"), step(1, "b.txt"), step(2, "c.txt"), done}},
	}
	fmt.Printf("%-42s %12s %12s\n", "case", "median ms", "min ms")
	for ci, c := range cases {
		rec := filepath.Join(work, fmt.Sprintf("rec%d", ci))
		must(os.MkdirAll(rec, 0o755))
		for i, b := range c.bodies {
			must(os.WriteFile(filepath.Join(rec, fmt.Sprintf("%03d.sse", i+1)), []byte(b), 0o644))
		}
		var ts []float64
		for r := 0; r < rounds; r++ {
			ts = append(ts, prompt(bin, rec, ws, filepath.Join(work, fmt.Sprintf("state%d-%d", ci, r)), delay))
		}
		sort.Float64s(ts)
		fmt.Printf("%-42s %12.1f %12.1f\n", c.name, ts[len(ts)/2], ts[0])
	}
}

// replaceID gives the calls of step i their own ids.
func replaceID(sse string, i int) string {
	var out []byte
	old, nw := []byte("call_00_0"), []byte(fmt.Sprintf("call_%02d_0", i))
	b := []byte(sse)
	for {
		j := indexOf(b, old)
		if j < 0 {
			return string(append(out, b...))
		}
		out = append(append(out, b[:j]...), nw...)
		b = b[j+len(old):]
	}
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// prompt starts the agent, opens a session in ws and times one prompt in
// ms; the editor answers every read after delay.
func prompt(bin, rec, ws, state string, delay time.Duration) float64 {
	cmd := exec.Command(bin, "--replay", rec, "--mode", "bypassPermissions", "--log-level", "error")
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+state)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	must(err)
	out, err := cmd.StdoutPipe()
	must(err)
	must(cmd.Start())
	c := acpclient.New(in)
	c.OnRequest = func(method string, params json.RawMessage) (any, error) {
		if method != "fs/read_text_file" {
			return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: method}
		}
		var req acp.ReadTextFileRequest
		must(json.Unmarshal(params, &req))
		time.Sleep(delay)
		data, err := os.ReadFile(req.Path)
		if err != nil {
			return nil, &acp.Error{Code: acp.CodeInternalError, Message: err.Error()}
		}
		return acp.ReadTextFileResponse{Content: string(data)}, nil
	}
	c.Start(out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true}}}, nil))
	var ns acp.NewSessionResponse
	must(c.Call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, &ns))
	t0 := time.Now()
	var pr acp.PromptResponse
	must(c.Call(ctx, "session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []acp.ContentBlock{acp.TextBlock("read")}}, &pr))
	took := float64(time.Since(t0).Microseconds()) / 1000
	if pr.StopReason != acp.StopEndTurn {
		panic("stop reason " + string(pr.StopReason))
	}
	in.Close()
	_ = cmd.Wait()
	return took
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
EOF

echo "== building"
overlay_build "$work/gen" internal/gentree/zz-bench-gen "$work/gen.go"
overlay_build "$work/search" cmd/zz-bench-search "$work/search.go"
overlay_build "$work/parallel" cmd/zz-bench-parallel "$work/parallel.go"
mkdir -p bin
go build -o bin/dsh-acp ./cmd/dsh-acp

tree=${TREE:-}
if [ -z "$tree" ]; then
	tree=$work/tree
	echo "== generating $files files under $tree"
	"$work/gen" "$tree" "$files"
elif [ ! -d "$tree" ]; then
	echo "== generating $files files under $tree (kept)"
	"$work/gen" "$tree" "$files"
fi

# run_timed OUTFILE CMD...: run CMD in the tree with output discarded;
# append "wall_us cpu_ms" to OUTFILE.
run_timed() {
	local f=$1
	shift
	local t0 t1 cpu=0
	if [ -n "$gnutime" ]; then
		t0=${EPOCHREALTIME/./}
		(cd "$tree" && "$gnutime" -f "%U %S" -o "$work/cpu" "$@" >/dev/null 2>&1) || true
		t1=${EPOCHREALTIME/./}
		cpu=$(awk '{printf "%d", ($1+$2)*1000}' "$work/cpu")
	else
		t0=${EPOCHREALTIME/./}
		(cd "$tree" && "$@" >/dev/null 2>&1) || true
		t1=${EPOCHREALTIME/./}
	fi
	echo "$((10#$t1 - 10#$t0)) $cpu" >>"$f"
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : int((v[NR/2]+v[NR/2+1])/2)}'; }

# The cases: name, our arguments, rg's and grep's pattern flags.
names=("literal, content" "regex, content" "ignore case, content" "literal, files only")
ours=('{"pattern":"needle","output_mode":"content","head_limit":5000}'
	'{"pattern":"^\\s*// ne+dle","output_mode":"content","head_limit":5000}'
	'{"pattern":"NEEDLE","ignore_case":true,"output_mode":"content","head_limit":5000}'
	'{"pattern":"needle","head_limit":5000}')
rgargs=("-n needle" "-n ^\\s*//\\sne+dle" "-n -i NEEDLE" "-l needle")
grepargs=("-rn needle" "-rnE ^[[:space:]]*//[[:space:]]ne+dle" "-rni NEEDLE" "-rl needle")

echo
echo "== grep on $(find "$tree" -type f | wc -l) files; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); rounds: $rounds (median)"
echo "   ours: the grep tool's Execute in a small command; rg: $(rg --version | sed -n 1p); $(grep --version | sed -n 1p)"
echo "   (lines: what each printed; ours adds a \"Found N files\" line in files mode)"
printf '%-22s %9s %9s %9s | %8s %8s %8s | %9s %9s  %s\n' case "ours ms" "rg ms" "grep ms" "ours cpu" "rg cpu" "grep cpu" "ours/rg" "ours/grep" target
fail=0
for i in "${!names[@]}"; do
	: >"$work/o"; : >"$work/r"; : >"$work/g"
	# Warm up the page cache and check the three agree on the count.
	o_lines=$("$work/search" "$tree" "${ours[$i]}" | grep -c . || true)
	# shellcheck disable=SC2086
	r_lines=$(cd "$tree" && rg --hidden -g '!.git' ${rgargs[$i]} | grep -c . || true)
	# shellcheck disable=SC2086
	(cd "$tree" && grep --exclude-dir=.git ${grepargs[$i]} . >/dev/null || true)
	for _ in $(seq "$rounds"); do
		run_timed "$work/o" "$work/search" "$tree" "${ours[$i]}"
		# shellcheck disable=SC2086
		run_timed "$work/r" rg --hidden -g '!.git' ${rgargs[$i]}
		# shellcheck disable=SC2086
		run_timed "$work/g" grep --exclude-dir=.git ${grepargs[$i]} .
	done
	o=$(cut -d' ' -f1 "$work/o" | median) r=$(cut -d' ' -f1 "$work/r" | median) g=$(cut -d' ' -f1 "$work/g" | median)
	oc=$(cut -d' ' -f2 "$work/o" | median) rc=$(cut -d' ' -f2 "$work/r" | median) gc=$(cut -d' ' -f2 "$work/g" | median)
	verdict=$(awk -v o="$o" -v r="$r" -v g="$g" 'BEGIN { print (o <= 1.5*r && o < g) ? "ok" : "MISSED" }')
	[ "$verdict" = ok ] || fail=1
	awk -v n="${names[$i]}" -v o="$o" -v r="$r" -v g="$g" -v oc="$oc" -v rc="$rc" -v gc="$gc" -v v="$verdict" \
		-v ol="$o_lines" -v rl="$r_lines" 'BEGIN {
		printf "%-22s %9.1f %9.1f %9.1f | %8d %8d %8d | %8.2fx %8.2fx  %s (lines: ours %d, rg %d)\n", n, o/1000, r/1000, g/1000, oc, rc, gc, o/r, o/g, v, ol, rl
	}'
done

echo
echo "== a response of 3 reads, the editor answering each after ${delay} ms; rounds: $rounds (median; whole dsh-acp process, prompt time)"
"$work/parallel" "$root/bin/dsh-acp" "$work" "$rounds" "$delay"
exit $fail
