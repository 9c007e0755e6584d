package server

import "time"

// stormOptions sets the limits the storm test runs under: a minimum rate
// of 16 KiB/s after a 1.5 s slow start (with ReadTimeout 3 s, the most a
// client can bank), and the default upload limits (32 per principal).
func stormOptions(o *Options) {
	o.Limits.BodyMinRate = 16 << 10
	o.Limits.BodyGrace = 1500 * time.Millisecond
}
