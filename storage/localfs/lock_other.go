//go:build !unix

package localfs

import "os"

// lockFile does nothing where flock is not available: keeping one Store per
// folder is then up to the operator.
func lockFile(*os.File) error { return nil }
