package limits

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/budget"
)

// TestWithDefaults: a zero field takes its default, a negative one is no
// bound (0 for core/budget), a positive one is kept.
func TestWithDefaults(t *testing.T) {
	l := Limits{Sessions: -1, StreamsPerPrincipal: 3}.WithDefaults()
	if l.SessionsPerPrincipal != DefaultSessionsPerPrincipal || l.ClaimsPerMinute != DefaultClaimsPerMinute {
		t.Errorf("zero fields: %d sessions per principal, %d claims a minute; want the defaults %d, %d",
			l.SessionsPerPrincipal, l.ClaimsPerMinute, DefaultSessionsPerPrincipal, DefaultClaimsPerMinute)
	}
	if l.Sessions != 0 || l.StreamsPerPrincipal != 3 {
		t.Errorf("Sessions %d (want 0: no bound), StreamsPerPrincipal %d (want 3)", l.Sessions, l.StreamsPerPrincipal)
	}
}

// TestRefusal: a principal's bound is answered 429, the node's 503, both
// with Retry-After and data naming the limit; any other error is not a
// refusal.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		ex     budget.Exceeded
		status int
		retry  string
	}{
		{budget.Exceeded{Name: "streams", Scope: budget.PerPrincipal, Max: 3}, http.StatusTooManyRequests, "5"},
		{budget.Exceeded{Name: "sessions", Scope: budget.PerNode, Max: 9}, http.StatusServiceUnavailable, "5"},
		{budget.Exceeded{Name: "claims_per_minute", Scope: budget.PerPrincipal, Max: 1, RetryAfter: 1500 * time.Millisecond},
			http.StatusTooManyRequests, "2"},
	} {
		e := Refusal(fmt.Errorf("wrapped: %w", &tc.ex), "things")
		if e == nil {
			t.Fatalf("%s: no refusal", tc.ex.Name)
		}
		data, _ := e.Data.(map[string]any)
		if e.Code != CodeLimitExceeded || e.HTTPStatus() != tc.status || e.Header["Retry-After"] != tc.retry ||
			data["limit"] != tc.ex.Name || data["scope"] != string(tc.ex.Scope) || data["max"] != tc.ex.Max {
			t.Errorf("%s: code %d, status %d, Retry-After %q, data %v; want %d, %d, %q naming the limit",
				tc.ex.Name, e.Code, e.HTTPStatus(), e.Header["Retry-After"], e.Data, CodeLimitExceeded, tc.status, tc.retry)
		}
	}
	if e := Refusal(errors.New("disk full"), "things"); e != nil {
		t.Errorf("Refusal of another error = %v; want nil", e)
	}
}
