package auth

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Quota is a principal's quota: bytes stored and number of objects; a
// zero field sets nothing (the next source, or the default, applies).
// A key line sets it with "quota=SIZE" and "quota-objects=N", an OAuth
// token with the claim the verifier is told to read, the quota file
// ([LoadQuotas]) per principal.
type Quota struct {
	Bytes   int64
	Objects int64
}

// IsZero reports whether q sets nothing.
func (q Quota) IsZero() bool { return q == Quota{} }

// Or is q with each field it does not set taken from other.
func (q Quota) Or(other Quota) Quota {
	if q.Bytes == 0 {
		q.Bytes = other.Bytes
	}
	if q.Objects == 0 {
		q.Objects = other.Objects
	}
	return q
}

// units are the size suffixes ParseSize takes, binary all of them.
var units = []struct {
	suffix string
	shift  uint
}{
	{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10},
	{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}, {"B", 0},
}

// ParseSize reads a size in bytes: a whole number, optionally followed by
// B, K or KiB, M or MiB, G or GiB, T or TiB (all binary: 1K is 1024).
func ParseSize(s string) (int64, error) {
	num, shift := s, uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q is not a whole number of bytes, K, M, G or T", s)
	}
	return n << shift, nil
}

// parseQuotaField sets the part of q that field names ("quota=SIZE",
// "quota-objects=N" in a key line; "bytes=SIZE", "objects=N" in the quota
// file) and reports whether it named one.
func parseQuotaField(q *Quota, field, bytesName, objectsName string) (bool, error) {
	name, value, ok := strings.Cut(field, "=")
	if !ok || (name != bytesName && name != objectsName) {
		return false, nil
	}
	if name == bytesName {
		n, err := ParseSize(value)
		q.Bytes = n
		return true, err
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 {
		return true, fmt.Errorf("%s=%q is not a whole number", objectsName, value)
	}
	q.Objects = n
	return true, nil
}

// LoadQuotas reads a quota file: one principal per line, then
// "bytes=SIZE" and/or "objects=N" (see ParseSize); blank lines and '#'
// comments are ignored. A principal named twice is an error.
func LoadQuotas(path string) (map[string]Quota, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read quotas: %w", err)
	}
	out := map[string]Quota{}
	for i, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		principal, q, err := parseQuotaLine(fields)
		if err == nil {
			if _, dup := out[principal]; dup {
				err = errors.New("principal " + strconv.Quote(principal) + " named again")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("auth: %s line %d: %w", path, i+1, err)
		}
		out[principal] = q
	}
	return out, nil
}

func parseQuotaLine(fields []string) (string, Quota, error) {
	var q Quota
	if len(fields) < 2 {
		return "", q, errors.New("want a principal, then bytes=SIZE and/or objects=N")
	}
	for _, f := range fields[1:] {
		ok, err := parseQuotaField(&q, f, "bytes", "objects")
		if err != nil {
			return "", q, err
		}
		if !ok {
			return "", q, fmt.Errorf("unexpected %q: want bytes=SIZE or objects=N", f)
		}
	}
	return fields[0], q, nil
}

// Quotas returns the quota each key line sets, by principal (a principal
// with several keys: the last line's).
func (ks *Keys) Quotas() map[string]Quota {
	out := map[string]Quota{}
	if ks == nil {
		return out
	}
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	for _, k := range ks.keys {
		if !k.id.Quota.IsZero() {
			out[k.id.Principal] = k.id.Quota
		}
	}
	return out
}
