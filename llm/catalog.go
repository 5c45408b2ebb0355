package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// DefaultContextWindow is the context window, in tokens, of a model
// that neither the endpoint's model list, nor a catalog, nor the
// --context-window flag describes (128,000 tokens, the documented
// default).
const DefaultContextWindow = 128000

// Rates are a model's prices per 1,000,000 tokens, in the currency of
// the Price they belong to: CacheHit for input tokens served from the
// endpoint's context cache, CacheMiss for the other input tokens, Output
// for generated tokens (reasoning included).
type Rates struct {
	CacheHit  float64
	CacheMiss float64
	Output    float64
}

// Price is what one model costs. Rates apply at all hours, or, when
// OffPeak is set, only in the hours Peak reports (OffPeak the rest of
// the time).
type Price struct {
	Currency string // ISO 4217 code, e.g. "USD"
	Rates    Rates
	OffPeak  *Rates
	Peak     func(time.Time) bool // required with OffPeak
}

// Cost is what a response with usage u, answered at time at, costs:
// cache hits at CacheHit, the rest of the prompt at CacheMiss and the
// completion at Output (DeepSeek's prompt_tokens includes the cached
// ones).
func (p Price) Cost(u Usage, at time.Time) float64 {
	r := p.Rates
	if p.OffPeak != nil && p.Peak != nil && !p.Peak(at) {
		r = *p.OffPeak
	}
	hit := min(max(u.CacheHitTokens, 0), max(u.PromptTokens, 0))
	miss := max(u.PromptTokens, 0) - hit
	out := max(u.CompletionTokens, 0)
	return (float64(hit)*r.CacheHit + float64(miss)*r.CacheMiss + float64(out)*r.Output) / 1e6
}

// Known is what a catalog knows about one model: its context window in
// tokens (0: not known), its price (nil: not known) and whether it takes
// image input (Images; false also when not known).
type Known struct {
	ContextWindow int
	Price         *Price
	Images        bool
}

// Catalog is what is known about an endpoint's models without asking
// it: Offer, the models a model selector lists when the endpoint's own
// list is not available (in order), and Models, the facts per model id
// (offered or not: retired names an endpoint still accepts, say).
type Catalog struct {
	Offer  []string
	Models map[string]Known
}

// Lookup returns what c knows about model id.
func (c Catalog) Lookup(id string) (Known, bool) {
	k, ok := c.Models[id]
	return k, ok
}

// Merge returns c with over's facts on top: over's models are offered
// after c's (each once), and a model over describes takes over's context
// window (when it has one) and price (when it has one), and takes images
// when either says it does.
func (c Catalog) Merge(over Catalog) Catalog {
	out := Catalog{Models: map[string]Known{}}
	for id, k := range c.Models {
		out.Models[id] = k
	}
	seen := map[string]bool{}
	for _, id := range append(append([]string(nil), c.Offer...), over.Offer...) {
		if !seen[id] {
			seen[id] = true
			out.Offer = append(out.Offer, id)
		}
	}
	for id, k := range over.Models {
		cur := out.Models[id]
		if k.ContextWindow > 0 {
			cur.ContextWindow = k.ContextWindow
		}
		if k.Price != nil {
			cur.Price = k.Price
		}
		cur.Images = cur.Images || k.Images
		out.Models[id] = cur
	}
	return out
}

// deepSeekPeak reports DeepSeek's peak hours: 01:00–04:00 and
// 06:00–10:00 UTC, Monday to Friday (09:00–12:00 and 14:00–18:00 Beijing
// time, the same calendar day). DeepSeek's Chinese page also counts
// China's public holidays as off-peak; no holiday calendar is kept here,
// so on those days the cost shown is the peak price, an upper bound.
func deepSeekPeak(t time.Time) bool {
	t = t.UTC()
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	h := t.Hour()
	return (h >= 1 && h < 4) || (h >= 6 && h < 10)
}

// deepSeekContext is the context window of DeepSeek's current models.
// The pricing page says "1M"; that is 2^20 tokens: a gateway lists
// deepseek-v4-flash with a 1,048,576-token window and measured a hard
// limit of 1,048,570, above 1,000,000 (docs.apiyi.com, 2026-08).
const deepSeekContext = 1 << 20

// DeepSeek returns the catalog of DeepSeek's API (api.deepseek.com), from
// its "Models & Pricing" page (api-docs.deepseek.com/quick_start/pricing)
// as it read on 2026-11-15: deepseek-flash (DeepSeek-V4.1-Flash-1017) and
// deepseek-v4-pro (DeepSeek-V4-Pro-0813), both with a 1M context, priced
// in USD per 1M tokens with off-peak rates at half the peak ones:
//
//	model            cache hit       cache miss      output
//	deepseek-flash   0.006 / 0.003   0.30 / 0.15     1.20 / 0.60
//	deepseek-v4-pro  0.044 / 0.022   1.32 / 0.66     3.96 / 1.98
//	(peak / off-peak; peak hours in deepSeekPeak)
//
// The page says the retired names deepseek-v4-flash and
// deepseek-v4-flash-vision-exp are still accepted, served by Flash and
// billed at Flash prices, so they are priced (not offered). The page no
// longer names deepseek-chat or deepseek-reasoner (reports say the API
// dropped them on 2026-07-24), so they have no entry: a session on one of
// them shows no cost rather than a guessed one. Flash takes images
// (Known.Images; the page and DeepSeek's vision guide, read 2026-12:
// JPEG, PNG, GIF and WebP as image_url parts), so do the Flash names it
// still serves; deepseek-v4-pro takes none.
func DeepSeek() Catalog {
	flash := &Price{Currency: "USD", Rates: Rates{CacheHit: 0.006, CacheMiss: 0.30, Output: 1.20},
		OffPeak: &Rates{CacheHit: 0.003, CacheMiss: 0.15, Output: 0.60}, Peak: deepSeekPeak}
	pro := &Price{Currency: "USD", Rates: Rates{CacheHit: 0.044, CacheMiss: 1.32, Output: 3.96},
		OffPeak: &Rates{CacheHit: 0.022, CacheMiss: 0.66, Output: 1.98}, Peak: deepSeekPeak}
	return Catalog{
		Offer: []string{"deepseek-flash", "deepseek-v4-pro"},
		Models: map[string]Known{
			"deepseek-flash":               {ContextWindow: deepSeekContext, Price: flash, Images: true},
			"deepseek-v4-pro":              {ContextWindow: deepSeekContext, Price: pro},
			"deepseek-v4-flash":            {ContextWindow: deepSeekContext, Price: flash, Images: true},
			"deepseek-v4-flash-vision-exp": {ContextWindow: deepSeekContext, Price: flash, Images: true},
		},
	}
}

// priceFile is the JSON of a --prices file.
type priceFile struct {
	Currency string `json:"currency"`
	Models   map[string]struct {
		Input         *float64 `json:"input"`
		CachedInput   *float64 `json:"cachedInput"`
		Output        *float64 `json:"output"`
		ContextWindow int      `json:"contextWindow"`
		Images        bool     `json:"images"`
	} `json:"models"`
}

// LoadCatalog reads a price file (--prices FILE):
//
//	{"currency": "USD",
//	 "models": {"my-model": {"input": 0.27, "cachedInput": 0.07, "output": 1.10, "contextWindow": 65536, "images": true}}}
//
// Prices are per 1,000,000 tokens in currency (default "USD"); input is
// the cache-miss input price, cachedInput the cache-hit one (default:
// input), output the output price. A model with input and output is
// priced at those rates at all hours; one with neither only gives its
// contextWindow (tokens); "images": true says the model takes image
// input (the default is false). Every model named is offered by the model
// selector when the endpoint's own list is not available, in name
// order. Errors name the file and the field: a file that cannot be read
// or is not this JSON, a negative or partial price, a negative window,
// a currency that is not three letters.
func LoadCatalog(path string) (Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Catalog{}, fmt.Errorf("price file: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var f priceFile
	if err := dec.Decode(&f); err != nil {
		return Catalog{}, fmt.Errorf("price file %s: %w", path, err)
	}
	if f.Currency == "" {
		f.Currency = "USD"
	}
	if len(f.Currency) != 3 || strings.ContainsFunc(f.Currency, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		return Catalog{}, fmt.Errorf("price file %s: currency must be an ISO 4217 code such as USD, got %q", path, f.Currency)
	}
	c := Catalog{Models: map[string]Known{}}
	for id, m := range f.Models {
		if strings.TrimSpace(id) == "" {
			return Catalog{}, fmt.Errorf("price file %s: a model without a name", path)
		}
		if m.ContextWindow < 0 {
			return Catalog{}, fmt.Errorf("price file %s: models.%s.contextWindow must not be negative", path, id)
		}
		k := Known{ContextWindow: m.ContextWindow, Images: m.Images}
		switch {
		case m.Input == nil && m.Output == nil && m.CachedInput == nil:
		case m.Input == nil || m.Output == nil:
			return Catalog{}, fmt.Errorf("price file %s: models.%s needs both input and output prices", path, id)
		default:
			r := Rates{CacheMiss: *m.Input, CacheHit: *m.Input, Output: *m.Output}
			if m.CachedInput != nil {
				r.CacheHit = *m.CachedInput
			}
			for name, v := range map[string]float64{"input": r.CacheMiss, "cachedInput": r.CacheHit, "output": r.Output} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					return Catalog{}, fmt.Errorf("price file %s: models.%s.%s must be a price of 0 or more", path, id, name)
				}
			}
			k.Price = &Price{Currency: f.Currency, Rates: r}
		}
		c.Models[id] = k
		c.Offer = append(c.Offer, id)
	}
	sort.Strings(c.Offer)
	return c, nil
}

// Meter answers, for a model, its context window and price, from (in
// order) the endpoint's model list, the catalog and ContextWindow.
type Meter struct {
	Catalog Catalog
	// Listed is the endpoint's model list (may be nil); its context
	// windows come first.
	Listed *ModelList
	// ContextWindow is the window of a model nothing else describes
	// (--context-window); <= 0 means DefaultContextWindow.
	ContextWindow int
	// ImageModels are models that take images besides those the catalog
	// says do (--model-images).
	ImageModels ImageModels
}

// Images reports whether model takes image input: ImageModels names it
// or the catalog says so (Known.Images). A nil Meter knows of none.
func (m *Meter) Images(model string) bool {
	if m == nil {
		return false
	}
	if m.ImageModels.Accepts(model) {
		return true
	}
	k, ok := m.Catalog.Lookup(model)
	return ok && k.Images
}

// Size is model's context window in tokens.
func (m *Meter) Size(model string) int {
	if m == nil {
		return DefaultContextWindow
	}
	if mi, ok := m.Listed.Info(model); ok && mi.ContextWindow > 0 {
		return mi.ContextWindow
	}
	if k, ok := m.Catalog.Lookup(model); ok && k.ContextWindow > 0 {
		return k.ContextWindow
	}
	if m.ContextWindow > 0 {
		return m.ContextWindow
	}
	return DefaultContextWindow
}

// Price is model's price; ok is false when it is not known.
func (m *Meter) Price(model string) (Price, bool) {
	if m == nil {
		return Price{}, false
	}
	if k, ok := m.Catalog.Lookup(model); ok && k.Price != nil {
		return *k.Price, true
	}
	return Price{}, false
}
