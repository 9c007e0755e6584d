//go:build !linux

package localfs

import "os"

// readDirEntries returns the regular files and folders in the directory f.
func readDirEntries(f *os.File) ([]entry, error) {
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(des))
	for _, de := range des {
		if de.IsDir() || de.Type().IsRegular() {
			out = append(out, entry{name: de.Name(), dir: de.IsDir()})
		}
	}
	return out, nil
}
