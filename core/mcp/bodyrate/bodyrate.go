package bodyrate

import "time"

// Budget is the time a server still waits for a body's bytes: the grace at
// the start, plus 1/minRate second for every byte that arrives, banked up
// to the read timeout. Only the time a read spends waiting is charged (the
// server's own pauses, such as a slow store, are not); each read's
// deadline is the budget left, so a body that averages less than minRate
// is cut off soon after its budget is gone.
type Budget struct {
	perByte time.Duration // 1/minRate; 0: no rate rule, only the read timeout per read
	bank    time.Duration // most budget that can be banked (the read timeout)
	left    time.Duration
}

// New is the budget of a body read at no less than minRate bytes per
// second on average after grace; minRate <= 0 means no rate rule, only
// readTimeout per read.
func New(minRate int64, grace, readTimeout time.Duration) Budget {
	b := Budget{bank: readTimeout, left: grace}
	if minRate > 0 {
		b.perByte = max(time.Second/time.Duration(minRate), 1) // over 1 GB/s: a nanosecond a byte
	} else {
		b.left = readTimeout
	}
	return b
}

// Deadline is when the next read must have returned, from now.
func (b *Budget) Deadline(now time.Time) time.Time {
	return now.Add(max(b.left, time.Millisecond))
}

// Charge spends the time a read waited and credits the n bytes it brought.
func (b *Budget) Charge(waited time.Duration, n int) {
	switch {
	case b.perByte == 0:
		b.left = b.bank
	case b.left < b.bank:
		b.left = min(b.left-waited+time.Duration(n)*b.perByte, b.bank)
	default: // a grace longer than the bank: spend it first
		b.left -= waited
	}
}
