//go:build !linux

package contents

import (
	"errors"
	"os"
)

// mapSupported says this platform encodes files from mappings: elsewhere
// than Linux files are read with pread.
const mapSupported = false

func mapFile(*os.File, int64, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}
