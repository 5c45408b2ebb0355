package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Balance is one currency's balance of a DeepSeek account: Total is what
// is left (granted and topped-up together) in Currency ("USD", "CNY").
type Balance struct {
	Currency string
	Total    float64
}

// Balance reads the account balance from DeepSeek's
// `GET {origin}/user/balance` (the base URL's scheme and host; only
// DeepSeek's API has it), answered as
// {"is_available": bool, "balance_infos": [{"currency", "total_balance",
// ...}]} with the amounts as decimal strings. One request, no retry.
// Errors are *Error values as for the other requests (NO_API_KEY, AUTH,
// HTTP_<status>, CONNECTION, MALFORMED_RESPONSE for another body).
func (h HTTP) Balance(ctx context.Context) ([]Balance, error) {
	h, err := h.withKey()
	if err != nil {
		return nil, err
	}
	origin, err := Origin(h.baseURL())
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: err.Error(), Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/user/balance", nil)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: "invalid base URL: " + err.Error(), Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+h.APIKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", h.userAgent())
	resp, err := h.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, cancelled(ctx)
		}
		return nil, &Error{Code: CodeConnection, Err: err, Message: h.redact("cannot reach the balance endpoint: " + err.Error())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, &Error{Code: CodeConnection, Err: err, Message: "reading the balance: " + err.Error()}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := httpError(resp.StatusCode, body)
		e.Message = h.redact(e.Message)
		return nil, e
	}
	return parseBalance(body)
}

// parseBalance reads a /user/balance body.
func parseBalance(body []byte) ([]Balance, error) {
	var b struct {
		Infos []struct {
			Currency string `json:"currency"`
			Total    string `json:"total_balance"`
		} `json:"balance_infos"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, &Error{Code: CodeMalformed, Message: "the balance is not JSON: " + err.Error(), Err: err}
	}
	out := make([]Balance, 0, len(b.Infos))
	for _, in := range b.Infos {
		v, err := strconv.ParseFloat(strings.TrimSpace(in.Total), 64)
		if err != nil || in.Currency == "" {
			return nil, &Error{Code: CodeMalformed, Message: "the balance has an entry without a currency or amount: " + strconv.Quote(in.Currency+" "+in.Total)}
		}
		out = append(out, Balance{Currency: strings.ToUpper(in.Currency), Total: v})
	}
	return out, nil
}
