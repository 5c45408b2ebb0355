package llm

import (
	"context"
	"encoding/json"
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
	origin, err := Origin(h.baseURL())
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: err.Error(), Err: err}
	}
	body, err := h.get(ctx, origin+"/user/balance", "balance", 1<<20)
	if err != nil {
		return nil, err
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
