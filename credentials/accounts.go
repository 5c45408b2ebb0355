package credentials

import "slices"

// Account is one key the agent can use, for display: where it is and
// for which endpoint, never the key itself.
type Account struct {
	// Label names the key's place: "DSH_API_KEY (environment)", or "API
	// key for https://api.deepseek.com (dsh-acp login)".
	Label string
	// Active is set on the key Key returns, the one model requests send.
	Active bool
}

// Accounts lists the keys s can see: each variable that holds one, then
// each endpoint the credentials file has a key for (sorted), the one Key
// would return marked Active. A file that cannot be used is left out
// (Key reports it).
func (s Source) Accounts() []Account {
	var out []Account
	active := false
	if s.Env != nil {
		for _, name := range []string{EnvKey, EnvDeepSeekKey} {
			if v, ok := s.Env(name); ok && v != "" {
				out = append(out, Account{Label: name + " (environment)", Active: !active})
				active = true
			}
		}
	}
	f, err := s.Store.read()
	if err != nil || f == nil {
		return out
	}
	var endpoints []string
	for e, k := range f.Endpoints {
		if k.APIKey != "" {
			endpoints = append(endpoints, e)
		}
	}
	slices.Sort(endpoints)
	for _, e := range endpoints {
		out = append(out, Account{Label: "API key for " + e + " (dsh-acp login)", Active: !active && e == Endpoint(s.BaseURL)})
	}
	return out
}
