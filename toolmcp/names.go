package toolmcp

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
)

// MaxNameLen is the longest function name the model APIs accept
// (OpenAI's and DeepSeek's rule: ^[a-zA-Z0-9_-]{1,64}$).
const MaxNameLen = 64

// maxServerKey bounds the server part of a tool name, so the tool part
// keeps most of the 64 bytes.
const maxServerKey = 24

// NamePrefix starts the name of every MCP tool.
const NamePrefix = "mcp__"

// validByte reports whether c may appear in a function name.
func validByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// sanitize replaces every byte that may not appear in a function name by
// "_" (a multi-byte character becomes one "_" per byte).
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !validByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

// serverKeys returns the name part of each server, in order: its name
// sanitized and cut to 24 bytes ("server" when empty), unique among the
// set: a key already taken by an earlier server gets "_2", "_3", ...
// (cut so it stays within 24 bytes). It depends on the list only.
func serverKeys(servers []Server) []string {
	keys := make([]string, len(servers))
	taken := map[string]bool{}
	for i, s := range servers {
		base := sanitize(s.Name)
		if base == "" {
			base = "server"
		}
		base = cut(base, maxServerKey)
		key := base
		for n := 2; taken[key]; n++ {
			suffix := "_" + strconv.Itoa(n)
			key = cut(base, maxServerKey-len(suffix)) + suffix
		}
		taken[key] = true
		keys[i] = key
	}
	return keys
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// toolNames maps each of a server's tool names to its function name,
// mcp__<key>__<tool sanitized>, deterministically from the set of names
// alone: names that need no sanitizing claim their plain form first,
// then the others in byte order; a name whose plain form is taken, or
// longer than 64 bytes, gets a hashed form instead: the plain form cut
// to 55 bytes, "_" and the first 8 hex digits of the SHA-256 of the key
// and the original name. Duplicates and empty names are left out.
func toolNames(key string, names []string) map[string]string {
	uniq := map[string]bool{}
	var list []string
	for _, n := range names {
		if n != "" && !uniq[n] {
			uniq[n] = true
			list = append(list, n)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		ci, cj := sanitize(list[i]) == list[i], sanitize(list[j]) == list[j]
		if ci != cj {
			return ci
		}
		return list[i] < list[j]
	})
	out := make(map[string]string, len(list))
	taken := map[string]bool{}
	for _, n := range list {
		name := NamePrefix + key + "__" + sanitize(n)
		if len(name) > MaxNameLen || taken[name] {
			name = hashedName(key, n)
		}
		if taken[name] {
			continue // a SHA-256 prefix collision: vanishingly rare
		}
		taken[name] = true
		out[n] = name
	}
	return out
}

// hashedName is the fallback function name of tool n of server key.
func hashedName(key, n string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + n))
	return cut(NamePrefix+key+"__"+sanitize(n), MaxNameLen-9) + "_" + hex.EncodeToString(sum[:4])
}
