package pace

import (
	"net/http"
	"sync"
)

// Slots counts uploads in progress, in all and per principal.
type Slots struct {
	Max, PerMax int
	mu          sync.Mutex
	n           int
	per         map[string]int
}

// InProgress is the number of slots taken.
func (u *Slots) InProgress() float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return float64(u.n)
}

// Acquire takes a slot for principal. It returns the release function, or
// the HTTP status of the refusal: 503 when every slot is taken, 429 when
// the principal's are.
func (u *Slots) Acquire(principal string) (release func(), status int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.n >= u.Max:
		return nil, http.StatusServiceUnavailable
	case u.per[principal] >= u.PerMax:
		return nil, http.StatusTooManyRequests
	}
	if u.per == nil {
		u.per = map[string]int{}
	}
	u.n++
	u.per[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.n--
			if u.per[principal]--; u.per[principal] == 0 {
				delete(u.per, principal)
			}
		})
	}, 0
}
