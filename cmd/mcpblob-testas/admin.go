package main

import (
	"encoding/json"
	"net/http"
	"time"
)

// mintRequest is the body of POST /test/mint. Absent fields take the
// values of a good token: iss the issuer, aud the default audience,
// expires_in one token lifetime, not_before_in 0, kid the signing key's.
// Empty sub and scope are left out. claims are added last and may override
// any claim.
type mintRequest struct {
	Sub         string         `json:"sub"`
	Scope       string         `json:"scope"`
	Aud         any            `json:"aud"`
	Iss         *string        `json:"iss"`
	ExpiresIn   *int64         `json:"expires_in"`
	NotBeforeIn int64          `json:"not_before_in"`
	Kid         string         `json:"kid"`
	Claims      map[string]any `json:"claims"`
}

// adminRoutes adds the test-only endpoints under /test/.
func adminRoutes(mux *http.ServeMux, s *storage) {
	mux.HandleFunc("POST /test/rotate", func(w http.ResponseWriter, r *http.Request) {
		kid, err := s.keys.rotate()
		reply(w, map[string]string{"kid": kid}, err)
	})
	mux.HandleFunc("GET /test/keys", func(w http.ResponseWriter, r *http.Request) {
		reply(w, map[string][]string{"kids": {s.keys.current().id}}, nil)
	})
	mux.HandleFunc("POST /test/mint", func(w http.ResponseWriter, r *http.Request) {
		var m mintRequest
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, "bad mint request: "+err.Error(), http.StatusBadRequest)
			return
		}
		token, err := s.keys.sign(m.claims(s), m.Kid)
		reply(w, map[string]string{"access_token": token}, err)
	})
}

func (m *mintRequest) claims(s *storage) map[string]any {
	now := time.Now()
	ttl := int64(s.cfg.tokenTTL.Seconds())
	if m.ExpiresIn != nil {
		ttl = *m.ExpiresIn
	}
	c := map[string]any{
		"iss": s.issuer, "sub": m.Sub, "scope": m.Scope, "client_id": "mint",
		"aud": m.Aud, "jti": randomID(16), "iat": now.Unix(),
		"nbf": now.Unix() + m.NotBeforeIn, "exp": now.Unix() + ttl,
	}
	if m.Iss != nil {
		c["iss"] = *m.Iss
	}
	if m.Aud == nil {
		c["aud"] = s.defaultAudience("mint")
	}
	for _, k := range []string{"sub", "scope"} {
		if c[k] == "" {
			delete(c, k)
		}
	}
	for k, v := range m.Claims {
		c[k] = v
	}
	return c
}

func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
