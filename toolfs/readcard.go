package toolfs

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/tools"
)

// The read card shows the user's view of a read: where (the call card's
// location at the first line), which lines ("Lines 3-20 of 120") and the text as an
// editor shows it, in a fenced block whose info string is the file's
// language. The model's text (the envelope with numbered lines) stays the
// result and the card's rawOutput. The card is rebuilt from that text
// alone, so a replayed card equals the live one.

// readWindow is a read result's text taken apart: the absolute path, the
// first line (1-based), the lines (without their numbers), the total line
// count (-1 when capped) and whether the window stopped at the byte cap.
type readWindow struct {
	path   string
	first  int
	lines  []string
	total  int
	capped bool
}

// parseReadText takes a read result's text apart; ok is false for any
// text that is not exactly the envelope executeRead writes.
func parseReadText(text string) (w readWindow, ok bool) {
	rest, ok := strings.CutPrefix(text, "<path>")
	if !ok {
		return w, false
	}
	w.path, rest, ok = strings.Cut(rest, "</path>\n<type>file</type>\n<content>\n")
	if !ok || w.path == "" {
		return w, false
	}
	body, ok := strings.CutSuffix(rest, "\n</content>")
	if !ok {
		return w, false
	}
	all := strings.Split(body, "\n")
	i := 0
	for ; i < len(all); i++ {
		num, line, found := strings.Cut(all[i], ": ")
		n, err := strconv.Atoi(num)
		if !found || err != nil || n < 1 || (i > 0 && n != w.first+i) || num != strconv.Itoa(n) {
			break
		}
		if i == 0 {
			w.first = n
		}
		w.lines = append(w.lines, line)
	}
	if i > 0 {
		if i+1 >= len(all) || all[i] != "" {
			return w, false
		}
		i++
	}
	footer := all[i]
	switch {
	case strings.HasPrefix(footer, "(End of file - total "):
		w.total, ok = footerNumber(footer, "(End of file - total ")
	case strings.HasPrefix(footer, "(Showing lines "):
		_, of, _ := strings.Cut(footer, " of ")
		w.total, ok = footerNumber(of, "")
	case strings.HasPrefix(footer, "(Output capped."):
		w.total, w.capped, ok = -1, true, true
	default:
		ok = false
	}
	if w.first == 0 {
		w.first = 1
	}
	return w, ok
}

// footerNumber reads the decimal number that s starts with after prefix.
func footerNumber(s, prefix string) (int, bool) {
	s = strings.TrimPrefix(s, prefix)
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:end])
	return n, err == nil
}

// readCard is the result card of a successful read whose text is text:
// the line range and the lines in a fence of the file's language (the
// call card's location, at the first line read, stays); nil when the text is not a read's
// envelope (the tool's text shows then).
func readCard(text string) tools.ToolResultView {
	w, ok := parseReadText(text)
	if !ok {
		return nil
	}
	if len(w.lines) == 0 {
		return tools.GenericResult{Content: []tools.Content{tools.Text("Empty file.")}}
	}
	last := w.first + len(w.lines) - 1
	rng := "Lines " + strconv.Itoa(w.first) + "-" + strconv.Itoa(last)
	switch {
	case w.capped:
		rng += " (the rest passes the size one read returns)"
	case w.first == 1 && last == w.total:
		rng = "All " + strconv.Itoa(w.total) + " lines"
		if w.total == 1 {
			rng = "1 line"
		}
	default:
		rng += " of " + strconv.Itoa(w.total)
	}
	code := tools.CodeFence(FenceLanguage(w.path), strings.Join(w.lines, "\n"))
	return tools.GenericResult{Content: []tools.Content{tools.Text(rng), tools.Text(code)}}
}

// FenceLanguage is the info string of a Markdown fence for the file at
// path, from its name or extension ("go", "python"); "text" when unknown.
func FenceLanguage(path string) string {
	base := filepath.Base(path)
	if l, ok := fenceByName[strings.ToLower(base)]; ok {
		return l
	}
	if l, ok := fenceByExt[strings.ToLower(filepath.Ext(base))]; ok {
		return l
	}
	return "text"
}

var fenceByName = map[string]string{
	"makefile": "makefile", "gnumakefile": "makefile", "dockerfile": "dockerfile",
	"cmakelists.txt": "cmake", "go.mod": "go", "go.sum": "text",
}

var fenceByExt = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".rs": "rust", ".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".java": "java",
	".kt": "kotlin", ".swift": "swift", ".rb": "ruby", ".php": "php", ".lua": "lua",
	".sh": "sh", ".bash": "bash", ".zsh": "zsh", ".fish": "fish", ".ps1": "powershell",
	".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".md": "markdown",
	".sql": "sql", ".proto": "protobuf", ".cs": "csharp", ".scala": "scala", ".ex": "elixir",
	".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".el": "elisp",
	".clj": "clojure", ".dart": "dart", ".r": "r", ".pl": "perl", ".vue": "vue",
	".svelte": "svelte", ".zig": "zig", ".nix": "nix", ".tf": "hcl", ".ini": "ini",
	".diff": "diff", ".patch": "diff", ".txt": "text",
}
