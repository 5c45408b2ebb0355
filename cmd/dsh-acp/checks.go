// This file checks the flags' values by group, after parsing: each
// error names the flag and its environment variable and says what is
// valid.

package main

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/server"
)

// positiveInt reads a flag's value as an integer of at least 1; the
// error names the flag and its variable.
func positiveInt(v, flag, env string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--%s (or %s) must be a positive integer, got %q", flag, env, v)
	}
	return n, nil
}

// checkLogging reads --log-level.
func checkLogging(c *config, v flagValues) error {
	switch strings.ToLower(*v.logLevel) {
	case "debug", "info", "warn", "error":
		return c.LogLevel.UnmarshalText([]byte(*v.logLevel))
	}
	return fmt.Errorf("--log-level (or DSH_LOG_LEVEL) must be debug, info, warn or error, got %q", *v.logLevel)
}

// checkSession reads the flags of the session group: steps, subagent
// depth, mode, line base, titles, compaction, the prompt queue.
func checkSession(c *config, v flagValues) error {
	var err error
	if c.MaxSteps, err = positiveInt(*v.maxSteps, "max-steps", "DSH_MAX_STEPS"); err != nil {
		return err
	}
	if c.SubagentDepth, err = positiveInt(*v.subagentDepth, "subagent-depth", "DSH_SUBAGENT_DEPTH"); err != nil {
		return err
	}
	if c.PromptQueue, err = positiveInt(*v.promptQueue, "prompt-queue", "DSH_PROMPT_QUEUE"); err != nil {
		return err
	}
	if !permission.ValidMode(c.Mode) {
		return fmt.Errorf("--mode (or DSH_MODE) must be one of %s, got %q", modeList(), c.Mode)
	}
	switch *v.lineBase {
	case "":
	case "0", "1":
		c.LocationLineBase = int((*v.lineBase)[0] - '0')
	default:
		return fmt.Errorf("--location-line-base (or DSH_LOCATION_LINE_BASE) must be 0 or 1, got %q", *v.lineBase)
	}
	switch *v.titles {
	case "on":
		c.Titles = c.Replay == "" && c.Record == ""
	case "off":
	default:
		return fmt.Errorf("--titles (or DSH_TITLES) must be on or off, got %q", *v.titles)
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(*v.compactAt), "%"))
	if err != nil || pct < 0 || pct > 100 {
		return fmt.Errorf("--compact-threshold (or DSH_COMPACT_THRESHOLD) must be a percentage from 0 (off) to 100, got %q", *v.compactAt)
	}
	c.CompactAt = float64(pct) / 100
	return nil
}

// checkSandbox reads --sandbox and --sandbox-network.
func checkSandbox(c *config, v flagValues) error {
	var err error
	if c.Sandbox.Mode, err = sandbox.ParseMode(*v.sandboxMode); err != nil {
		return fmt.Errorf("--sandbox (or DSH_SANDBOX) must be workspace-write, read-only or off, got %q", *v.sandboxMode)
	}
	switch *v.sandboxNet {
	case "allow":
	case "deny":
		c.Sandbox.DenyNetwork = true
	default:
		return fmt.Errorf("--sandbox-network (or DSH_SANDBOX_NETWORK) must be allow or deny, got %q", *v.sandboxNet)
	}
	return nil
}

// checkLimits reads the sizes and timeouts.
func checkLimits(c *config, v flagValues) error {
	var err error
	if c.MaxMessageBytes, err = parseSize(*v.maxMessage); err != nil || c.MaxMessageBytes < 1024 {
		return fmt.Errorf("--max-message-size (or DSH_MAX_MESSAGE_SIZE) must be a size of at least 1KiB (e.g. 64MiB), got %q", *v.maxMessage)
	}
	if c.SpillMax, err = parseSize(*v.maxSpill); err != nil || c.SpillMax < 0 {
		return fmt.Errorf("--max-spill-size (or DSH_MAX_SPILL_SIZE) must be a size (e.g. 64MiB) or 0, got %q", *v.maxSpill)
	}
	if c.SpillMax == 0 {
		c.SpillMax = -1 // toolbash.Options: no limit
	}
	if c.ModelIdleTimeout, err = parseTimeout(*v.idle); err != nil {
		return fmt.Errorf("--model-idle-timeout (or DSH_MODEL_IDLE_TIMEOUT) must be a duration (e.g. 120s, 5m) or 0, got %q", *v.idle)
	}
	if c.MCPWait, err = parseTimeout(*v.mcpWait); err != nil {
		return fmt.Errorf("--mcp-wait (or DSH_MCP_WAIT) must be a duration (e.g. 2s) or 0, got %q", *v.mcpWait)
	}
	return nil
}

// checkModel reads the model group: endpoint, provider and catalog,
// images, thinking, the context window, the balance, the web tools and
// the replay folder.
func checkModel(c *config, v flagValues) error {
	var err error
	if c.ImageModels, err = llm.ParseImageModels(*v.images); err != nil {
		return fmt.Errorf("--model-images (or DSH_MODEL_IMAGES) must be model names separated by commas, or *: %v", err)
	}
	if err := parseWeb(c, *v.webAllowPrivate); err != nil {
		return err
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--base-url (or DSH_BASE_URL) must be an http(s) URL, got %q", c.BaseURL)
	}
	if c.Thinking != "" && !server.ValidThinking(c.Thinking) {
		return fmt.Errorf("--thinking (or DSH_THINKING) must be one of %s, got %q", strings.Join(server.ThinkingLevels(), ", "), c.Thinking)
	}
	if *v.contextWindow != "" {
		n, err := strconv.Atoi(*v.contextWindow)
		if err != nil || n < 1 {
			return fmt.Errorf("--context-window (or DSH_CONTEXT_WINDOW) must be a positive number of tokens, got %q", *v.contextWindow)
		}
		c.ContextWindow = n
	}
	if c.LowBalance, err = parseLowBalance(*v.lowBalance); err != nil {
		return fmt.Errorf("--low-balance (or DSH_LOW_BALANCE) must be amounts with their currency, such as \"1 USD, 5 CNY\", or off: %v", err)
	}
	if c.Provider, err = llm.ParseProvider(*v.provider, c.BaseURL); err != nil {
		return fmt.Errorf("--provider (or DSH_PROVIDER) must be deepseek or openai, got %q", *v.provider)
	}
	if c.Provider.DeepSeek() {
		c.Catalog = llm.DeepSeek()
	}
	if c.Prices != "" {
		file, err := llm.LoadCatalog(c.Prices)
		if err != nil {
			return fmt.Errorf("--prices (or DSH_PRICES): %w", err)
		}
		c.Catalog = c.Catalog.Merge(file)
	}
	if c.Replay != "" {
		if st, err := os.Stat(c.Replay); err != nil || !st.IsDir() {
			return fmt.Errorf("--replay (or DSH_REPLAY) must be a directory of NNN.sse files: %q is not one", c.Replay)
		}
	}
	return nil
}

// parseLowBalance reads a --low-balance value: amounts with a
// three-letter currency code ("1 USD, 5 CNY", "2.5USD"), or "0", "off"
// or "" for none.
func parseLowBalance(v string) (map[string]float64, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "0" || strings.EqualFold(v, "off") {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		i := strings.IndexFunc(part, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return nil, fmt.Errorf("%q has no amount", part)
		}
		n, err := strconv.ParseFloat(part[:i], 64)
		cur := strings.ToUpper(strings.TrimSpace(part[i:]))
		if err != nil || n < 0 || len(cur) != 3 || strings.ContainsFunc(cur, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			return nil, fmt.Errorf("%q is not an amount and a currency code", part)
		}
		out[cur] = n
	}
	return out, nil
}
