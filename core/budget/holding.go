package budget

import "sync"

// Units are n units of one pool.
type Units struct {
	Pool *Pool
	N    int64
}

// Holding is what one principal took from several pools together
// ([TakeAll]); Release gives it all back, once.
type Holding struct {
	principal string
	units     []Units
	once      sync.Once
}

// TakeAll takes every Units for principal, or nothing: at the first pool
// that refuses, what was taken from the earlier ones is given back and the
// refusal (an *Exceeded) returned. Units of 0 are skipped.
func TakeAll(principal string, units ...Units) (*Holding, error) {
	for i, u := range units {
		if u.N == 0 {
			continue
		}
		if err := u.Pool.Take(principal, u.N); err != nil {
			giveAll(principal, units[:i])
			return nil, err
		}
	}
	return &Holding{principal: principal, units: units}, nil
}

// Release gives back what the holding took. Only the first call does; a
// nil Holding holds nothing.
func (h *Holding) Release() {
	if h == nil {
		return
	}
	h.once.Do(func() { giveAll(h.principal, h.units) })
}

func giveAll(principal string, units []Units) {
	for _, u := range units {
		if u.N != 0 {
			u.Pool.Give(principal, u.N)
		}
	}
}
