package measure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"
)

// FolioPages is the mean size, in pages, of the page-cache folios holding
// path's resident pages. How a file entered the page cache sets it: a
// buffered write makes folios as large as the write (up to the file
// system's limit), readahead as large as its window. sendfile hands the
// socket one reference per folio piece, so a copy in large folios is
// cheaper to send and to receive than the same bytes in small ones, and
// two servers compared on copies in different layouts are not compared
// alike. It reads /proc/self/pagemap and /proc/kpageflags, which only
// root may read: elsewhere it returns an error.
func FolioPages(path string) (float64, error) {
	mem, unmap, err := mapFile(path)
	if err != nil {
		return 0, err
	}
	if mem == nil {
		return 0, fmt.Errorf("folios of %s: empty file", path)
	}
	defer unmap()
	pfns, err := residentFrames(mem)
	if err != nil {
		return 0, fmt.Errorf("folios of %s: %w", path, err)
	}
	return meanFolio(pfns)
}

// Page flags of /proc/kpageflags (Documentation/admin-guide/mm/pagemap.rst).
const (
	kpfCompoundTail = 1 << 16
	pmPresent       = 1 << 63
	pmFrameMask     = 1<<55 - 1
)

// residentFrames maps in mem's pages that are in the page cache (mincore
// says which, so nothing is read from the disk) and returns their page
// frame numbers from /proc/self/pagemap.
func residentFrames(mem []byte) ([]uint64, error) {
	page := os.Getpagesize()
	vec := make([]byte, (len(mem)+page-1)/page)
	if err := mincore(mem, vec); err != nil {
		return nil, err
	}
	var touched byte
	for i, v := range vec {
		if v&1 != 0 {
			touched ^= mem[i*page] // a resident page: a minor fault at most
		}
	}
	runtime.KeepAlive(touched) // the reads must happen
	return pagemap(mem, vec, page)
}

// pagemap reads the frame numbers of mem's resident pages.
func pagemap(mem, vec []byte, page int) ([]uint64, error) {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw := make([]byte, 8*len(vec))
	start := int64(uintptr(unsafe.Pointer(&mem[0])) / uintptr(page))
	if _, err := f.ReadAt(raw, 8*start); err != nil {
		return nil, err
	}
	var pfns []uint64
	for i, v := range vec {
		e := binary.LittleEndian.Uint64(raw[8*i:])
		if v&1 == 0 || e&pmPresent == 0 {
			continue
		}
		if e&pmFrameMask == 0 {
			return nil, errors.New("pagemap hides frame numbers (not root)")
		}
		pfns = append(pfns, e&pmFrameMask)
	}
	if len(pfns) == 0 {
		return nil, errors.New("no page of the file is in the page cache")
	}
	return pfns, nil
}

// meanFolio counts the folios the frames belong to (a frame that is not a
// compound tail starts one) and returns frames per folio.
func meanFolio(pfns []uint64) (float64, error) {
	f, err := os.Open("/proc/kpageflags")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var buf [8]byte
	folios := 0
	for _, pfn := range pfns {
		if _, err := f.ReadAt(buf[:], int64(8*pfn)); err != nil {
			return 0, err
		}
		if binary.LittleEndian.Uint64(buf[:])&kpfCompoundTail == 0 {
			folios++
		}
	}
	return float64(len(pfns)) / float64(folios), nil
}
