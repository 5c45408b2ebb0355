package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// listBodyLimit bounds, in bytes, the `/models` answer ListModels reads.
const listBodyLimit = 4 << 20

// ListModels asks `GET {baseURL}/models` with key as the bearer token
// (one attempt, no retry; bound it with ctx) and returns the model ids of
// the OpenAI list shape `{"data": [{"id": ...}, ...]}`, in the endpoint's
// order. `dsh-acp login` uses it to check a key before storing it.
//
// Errors (*Error, the key never in them): NO_API_KEY for an empty key;
// AUTH for 401/403 and the other status codes of Stream; CONNECTION when
// no answer came; MALFORMED_RESPONSE for a 2xx body that is not that
// shape (or over 4 MiB); CANCELLED when ctx ends.
func ListModels(ctx context.Context, baseURL, key string) ([]string, error) {
	if key == "" {
		return nil, &Error{Code: CodeNoAPIKey, Message: NoKeyMessage}
	}
	h := HTTP{BaseURL: baseURL, APIKey: key}
	url := strings.TrimRight(h.baseURL(), "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: "invalid model base URL: " + err.Error(), Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", h.userAgent())
	resp, err := h.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, cancelled(ctx)
		}
		return nil, &Error{Code: CodeConnection, Err: err, Message: h.redact("cannot reach the model endpoint: " + err.Error())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, listBodyLimit+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, cancelled(ctx)
		}
		return nil, &Error{Code: CodeConnection, Err: err, Message: "reading the model list: " + err.Error()}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := httpError(resp.StatusCode, body)
		e.Message = h.redact(e.Message)
		return nil, e
	}
	if len(body) > listBodyLimit {
		return nil, &Error{Code: CodeMalformed, Message: "the model list is larger than 4 MiB"}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return nil, &Error{Code: CodeMalformed, Err: err, Message: "the endpoint's /models answer is not an OpenAI-style model list"}
	}
	ids := make([]string, 0, len(list.Data))
	for _, d := range list.Data {
		if id := strings.TrimSpace(d.ID); id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
