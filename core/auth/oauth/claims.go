package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
)

// Claims are the verified facts of an access token.
type Claims struct {
	// Subject is "sub" (empty if absent and TenantClaim is not "sub").
	Subject string
	// Principal is the value of [Config].TenantClaim: never empty.
	Principal string
	// Scopes are the union of "scope" (space-separated, RFC 9068) and
	// "scp" (array or space-separated string), sorted and deduplicated.
	Scopes []string
	// ClientID is "client_id" (RFC 9068), or "azp" when that is absent.
	ClientID string
	// Expiry is "exp".
	Expiry time.Time
	// ID is "jti".
	ID string
	// Quota is the value of [Config].QuotaClaim (zero when unset or absent).
	Quota auth.Quota
}

// maxDate is 9999-12-31T23:59:59Z; later NumericDates are refused.
const maxDate = 253402300799

// claims decodes and checks the verified payload.
func (v *Verifier) claims(payload []byte) (Claims, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil || m == nil {
		return Claims{}, invalid("malformed claims")
	}
	if err := v.checkRegistered(m); err != nil {
		return Claims{}, err
	}
	var c Claims
	var err error
	exp, _, _ := date(m, "exp")
	c.Expiry = exp
	if c.Subject, err = str(m, "sub"); err != nil {
		return Claims{}, err
	}
	if c.ID, err = str(m, "jti"); err != nil {
		return Claims{}, err
	}
	if c.ClientID, err = str(m, "client_id"); err != nil {
		return Claims{}, err
	}
	if c.ClientID == "" {
		if c.ClientID, err = str(m, "azp"); err != nil {
			return Claims{}, err
		}
	}
	if c.Scopes, err = scopes(m); err != nil {
		return Claims{}, err
	}
	if c.Quota, err = v.quota(m); err != nil {
		return Claims{}, err
	}
	c.Principal, err = v.principal(m)
	return c, err
}

// quota reads the QuotaClaim: a number of bytes, a size string, or an
// object of "bytes" and "objects".
func (v *Verifier) quota(m map[string]json.RawMessage) (auth.Quota, error) {
	raw, ok := m[v.cfg.QuotaClaim]
	if v.cfg.QuotaClaim == "" || !ok || string(raw) == "null" {
		return auth.Quota{}, nil
	}
	var q auth.Quota
	var n int64
	var s string
	var obj struct{ Bytes, Objects int64 }
	var err error
	switch {
	case json.Unmarshal(raw, &n) == nil:
		q.Bytes = n
	case json.Unmarshal(raw, &s) == nil:
		q.Bytes, err = auth.ParseSize(s)
	case json.Unmarshal(raw, &obj) == nil:
		q = auth.Quota{Bytes: obj.Bytes, Objects: obj.Objects}
	default:
		err = errors.New("malformed")
	}
	if err != nil || q.Bytes < 0 || q.Objects < 0 {
		return auth.Quota{}, invalid("quota claim " + strconv.Quote(v.cfg.QuotaClaim) + " is not a size or {\"bytes\",\"objects\"}")
	}
	return q, nil
}

// checkRegistered checks iss, aud, exp, nbf and iat.
func (v *Verifier) checkRegistered(m map[string]json.RawMessage) error {
	if iss, err := str(m, "iss"); err != nil || iss != v.cfg.Issuer {
		return invalid("wrong issuer")
	}
	if err := v.checkAudience(m["aud"]); err != nil {
		return err
	}
	now, leeway := v.now(), v.cfg.Leeway
	exp, ok, err := date(m, "exp")
	switch {
	case err != nil:
		return err
	case !ok:
		return invalid("missing expiry")
	case !now.Before(exp.Add(leeway)):
		return invalid("expired")
	}
	for _, name := range []string{"nbf", "iat"} {
		t, ok, err := date(m, name)
		if err != nil {
			return err
		}
		if ok && now.Add(leeway).Before(t) {
			return invalid(map[string]string{"nbf": "not yet valid", "iat": "issued in the future"}[name])
		}
	}
	return nil
}

func (v *Verifier) checkAudience(raw json.RawMessage) error {
	if raw == nil {
		return invalid("missing audience")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one != v.cfg.Audience {
			return invalid("wrong audience")
		}
		return nil
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return invalid("malformed aud claim")
	}
	if !slices.Contains(many, v.cfg.Audience) {
		return invalid("wrong audience")
	}
	return nil
}

// principal returns the TenantClaim's value, which must be a non-empty string.
func (v *Verifier) principal(m map[string]json.RawMessage) (string, error) {
	name := v.cfg.TenantClaim
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return "", invalid("missing principal claim " + strconv.Quote(name))
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", invalid("principal claim " + strconv.Quote(name) + " is not a string")
	}
	if s == "" {
		return "", invalid("principal claim " + strconv.Quote(name) + " is empty")
	}
	return s, nil
}

// str returns an optional string claim ("" when absent or null).
func str(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", invalid("malformed " + name + " claim")
	}
	return s, nil
}

// date returns an optional NumericDate claim (RFC 7519 §2): a non-negative
// JSON number of seconds, fractions allowed, at most year 9999. A string
// is refused, digits or not: encoding/json would read "1795755174" into a
// json.Number, and the RFC wants a number.
func date(m map[string]json.RawMessage, name string) (time.Time, bool, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return time.Time{}, false, nil
	}
	var n json.Number
	if !isJSONNumber(raw) || json.Unmarshal(raw, &n) != nil {
		return time.Time{}, false, invalid("malformed " + name + " claim")
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < 0 || f > maxDate {
		return time.Time{}, false, invalid("malformed " + name + " claim")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true, nil
}

// isJSONNumber reports whether raw, one JSON value, is a number: it
// starts with a minus sign or a digit, as only numbers do.
func isJSONNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// scopes returns the union of "scope" and "scp", sorted and deduplicated.
func scopes(m map[string]json.RawMessage) ([]string, error) {
	var out []string
	for _, name := range []string{"scope", "scp"} {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			continue
		}
		var s string
		var list []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			out = append(out, strings.Fields(s)...)
		case name == "scp" && json.Unmarshal(raw, &list) == nil:
			for _, e := range list {
				out = append(out, strings.Fields(e)...)
			}
		default:
			return nil, invalid("malformed " + name + " claim")
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
