//go:build !unix

package localfs

import (
	"errors"
	"os"
)

// holdClaimDirs is false where a stat relative to a folder is not
// available: Claimed then stats through the os.Root.
const holdClaimDirs = false

func claimExists(*os.File, string) (bool, error) {
	return false, errors.New("localfs: claimExists is unix only")
}
