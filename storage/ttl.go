package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxTTL is the longest expiry a client may ask for: 10 years
// (315,360,000 seconds). A blob meant to outlive it should have none.
const MaxTTL = 10 * 365 * 24 * time.Hour

// MaxTTLSeconds is MaxTTL in seconds, as the surfaces name it.
const MaxTTLSeconds = int64(MaxTTL / time.Second)

// A client's ttlSeconds (storage/lifecycle acts on the expiry it gives,
// CreateOptions.Expires) is checked here, where every surface can reach it.

// ErrInvalidTTL is what ParseTTL and CheckTTL wrap; the error's text is
// the phrase a surface shows its client, naming ttlSeconds.
var ErrInvalidTTL = errors.New("invalid ttlSeconds")

// TTLError is a refused ttlSeconds. Message names the argument and the
// rule it breaks ("ttlSeconds must be a whole number of seconds from 1 to
// 315360000"); it never repeats more than a short prefix of the value.
type TTLError struct{ Message string }

func (e *TTLError) Error() string { return e.Message }

// Unwrap returns ErrInvalidTTL.
func (e *TTLError) Unwrap() error { return ErrInvalidTTL }

// ttlRule is the rule every refusal states.
var ttlRule = fmt.Sprintf("a whole number of seconds from 1 to %d", MaxTTLSeconds)

// ParseTTL reads a ttlSeconds given as text (a query parameter, a header,
// tus Upload-Metadata, a flag): decimal digits only, 1 to MaxTTLSeconds.
// 0 is refused, not read as "no expiry": a blob without one omits the
// argument. Errors are *TTLError values.
func ParseTTL(s string) (time.Duration, error) {
	v := strings.TrimSpace(s)
	if v == "" || strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '-' && r != '+' }) >= 0 {
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %q is not %s", shortValue(s), ttlRule)}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %s is above the maximum %d (10 years)", shortValue(s), MaxTTLSeconds)}
		}
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %q is not %s", shortValue(s), ttlRule)}
	}
	return CheckTTL(n)
}

// CheckTTL checks a ttlSeconds given as a number and returns it as a
// duration: 1 to MaxTTLSeconds. Errors are *TTLError values.
func CheckTTL(n int64) (time.Duration, error) {
	switch {
	case n < 1:
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %d is below 1: give %s, or leave it out for no expiry", n, ttlRule)}
	case n > MaxTTLSeconds:
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %d is above the maximum %d (10 years)", n, MaxTTLSeconds)}
	}
	return time.Duration(n) * time.Second, nil
}

// CheckTTLNumber checks a ttlSeconds that a JSON document gave as a
// number, which may have a fraction or an exponent: only whole numbers
// from 1 to MaxTTLSeconds pass. Errors are *TTLError values.
func CheckTTLNumber(f float64) (time.Duration, error) {
	switch {
	case f != f:
		return 0, &TTLError{Message: "ttlSeconds is not " + ttlRule}
	case f < 1:
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %g is below 1: give %s, or leave it out for no expiry", f, ttlRule)}
	case f > float64(MaxTTLSeconds):
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %g is above the maximum %d (10 years)", f, MaxTTLSeconds)}
	case f != float64(int64(f)):
		return 0, &TTLError{Message: fmt.Sprintf("ttlSeconds %g is not %s", f, ttlRule)}
	}
	return CheckTTL(int64(f))
}

// Expiry is the expiry of a blob stored at now with ttl; zero for ttl 0
// (none).
func Expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

// ExpiryAfter is the expiry of a blob stored now with a ttlSeconds of n
// (a token's claim), zero for n <= 0 (none).
func ExpiryAfter(n int64) time.Time {
	return Expiry(time.Now(), time.Duration(max(n, 0))*time.Second)
}

// CapTTL shortens ttl, the lifetime of a presigned URL for a blob that
// expires at expires (zero: never), so that the URL ends with the blob:
// S3 would serve it until the sweep removes the bytes. It is at least a
// second (a presigned URL's shortest).
func CapTTL(ttl time.Duration, expires, now time.Time) time.Duration {
	if expires.IsZero() {
		return ttl
	}
	return max(min(ttl, expires.Sub(now)), time.Second)
}

// shortValue cuts a refused value for an error message.
func shortValue(s string) string {
	const max = 24
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
