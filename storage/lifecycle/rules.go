package lifecycle

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/namespace"
)

// Rule expires every blob whose key starts with Prefix After its last
// write (Info.ModTime), as an S3 lifecycle rule's Expiration in days
// does. The key is the one its owner uses: inside a namespace
// (`--tenancy principal`) the rule "uploads/" covers every principal's
// "uploads/…".
type Rule struct {
	Prefix string
	After  time.Duration
}

// MaxRules bounds the rules of a configuration.
const MaxRules = 100

// ParseRules reads rules written "prefix=age[,prefix=age…]", an age being
// a Go duration ("36h", "90m") or a whole number of days ("7d"), from one
// second to storage.MaxTTL. A prefix is the start of a valid key (no leading "/",
// no "." or ".." segment, not below .mcpblob), never empty. "" gives no
// rules.
func ParseRules(s string) ([]Rule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var rules []Rule
	for _, item := range strings.Split(s, ",") {
		r, err := parseRule(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("lifecycle rules: %d rules, over the %d allowed", len(rules), MaxRules)
	}
	return rules, nil
}

func parseRule(item string) (Rule, error) {
	prefix, age, ok := strings.Cut(item, "=")
	if !ok {
		return Rule{}, fmt.Errorf("lifecycle rule %q: want prefix=age, such as uploads/=7d", short(item))
	}
	if err := checkPrefix(prefix); err != nil {
		return Rule{}, fmt.Errorf("lifecycle rule %q: %w", short(item), err)
	}
	after, err := parseAge(age)
	if err != nil {
		return Rule{}, fmt.Errorf("lifecycle rule %q: %w", short(item), err)
	}
	return Rule{Prefix: prefix, After: after}, nil
}

// checkPrefix accepts the start of a valid key: a key itself, or one
// followed by "/".
func checkPrefix(p string) error {
	if p == "" {
		return fmt.Errorf("the prefix is empty (a rule for every blob would be a store-wide expiry; name a folder)")
	}
	if err := storage.ValidateKey(strings.TrimSuffix(p, "/")); err != nil {
		return fmt.Errorf("the prefix is not the start of a valid key: %w", err)
	}
	return nil
}

// parseAge reads "7d" or a Go duration, from 1s to storage.MaxTTL.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 1 || n > int64(storage.MaxTTL/(24*time.Hour)) {
			return 0, fmt.Errorf("age %q: want a whole number of days from 1 to %d", short(s), storage.MaxTTL/(24*time.Hour))
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("age %q: want days (7d) or a duration (36h)", short(s))
		}
	}
	if d < time.Second || d > storage.MaxTTL {
		return 0, fmt.Errorf("age %q is outside 1s to 10 years", short(s))
	}
	return d, nil
}

// ownKey is the key a raw store key has for its owner: inside its
// namespace, or itself in the shared root.
func ownKey(raw string) string {
	if _, key, ok := namespace.Split(raw); ok {
		return key
	}
	return raw
}

// String writes r as ParseRules reads it.
func (r Rule) String() string { return r.Prefix + "=" + r.After.String() }

// short cuts a refused value for an error message.
func short(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
