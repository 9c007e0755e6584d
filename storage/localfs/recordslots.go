package localfs

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
)

// A record's file holds two slots of equal capacity, one after the other
// (the file is twice a slot long). A slot is a header and the record's
// bytes:
//
//	0  magic    8 bytes, slotMagic
//	8  sequence 8 bytes, little endian: one more than the slot it replaced
//	16 length   8 bytes, little endian: of the record's bytes
//	24 CRC-32C  4 bytes, little endian: of bytes 8–24 and 28 to the end
//	28 zero     4 bytes
//	32 version  26 bytes (rand.Text), then zeros to 64
//
// The current slot is the valid one (magic, length within the slot, CRC)
// with the highest sequence. An update writes the other slot in place and
// fdatasyncs it: no new file, no rename, no sync of the folder, and the
// file's size and blocks do not change, so the sync writes the slot's
// blocks and nothing else. A write torn by a crash (power loss) fails its
// CRC and leaves the current slot as it was. A record that no longer fits
// its slots gets a new file, written beside the old one and renamed over
// it, as a new record does.
const (
	slotMagic  = "mcprec\x00\x01"
	slotHeader = 64
	slotAlign  = 4096
	// slotDense is the largest slot capacity whose file is written whole
	// (zeros past the bytes) when created, so that no later update
	// allocates blocks; a larger one is left sparse.
	slotDense = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordFile is a record as read from its file: the current slot's bytes
// and version, and where the next update goes.
type recordFile struct {
	data    []byte
	version string
	seq     uint64 // the current slot's sequence
	slot    int64  // the current slot: 0 or 1
	cap     int64  // each slot's capacity; 0 for a file of the old format
}

// fits reports whether data can replace the record in place.
func (r recordFile) fits(data []byte) bool {
	return r.cap > 0 && int64(slotHeader+len(data)) <= r.cap
}

// slotCap is the slot capacity of a new file for n bytes: room to grow
// by a quarter, in whole blocks.
func slotCap(n int) int64 {
	need := int64(slotHeader + n + n/4)
	return (need + slotAlign - 1) / slotAlign * slotAlign
}

// slotHead returns the header of a slot holding data.
func slotHead(seq uint64, version string, data []byte) []byte {
	h := make([]byte, slotHeader)
	copy(h, slotMagic)
	binary.LittleEndian.PutUint64(h[8:], seq)
	binary.LittleEndian.PutUint64(h[16:], uint64(len(data)))
	copy(h[32:], version)
	binary.LittleEndian.PutUint32(h[24:], slotSum(h, data))
	return h
}

func slotSum(head, data []byte) uint32 {
	c := crc32.Update(0, castagnoli, head[8:24])
	c = crc32.Update(c, castagnoli, head[28:slotHeader])
	return crc32.Update(c, castagnoli, data)
}

// isSlotFile reports whether a file's first bytes are a slot file's.
func isSlotFile(first []byte) bool {
	return len(first) >= len(slotMagic) && string(first[:len(slotMagic)]) == slotMagic
}

// readSlots reads the current slot of a slot file of size bytes. Slots
// are tried from the highest sequence down; the first whose CRC holds is
// current.
func readSlots(f io.ReaderAt, size int64) (recordFile, error) {
	capacity := size / 2
	if size%2 != 0 || capacity < slotHeader {
		return recordFile{}, errors.New("record file is damaged: not two slots")
	}
	var heads [2][]byte
	for i := range heads {
		heads[i] = make([]byte, slotHeader)
		if _, err := f.ReadAt(heads[i], int64(i)*capacity); err != nil {
			return recordFile{}, err
		}
	}
	order := []int64{0, 1}
	if slotSeq(heads[1]) > slotSeq(heads[0]) {
		order = []int64{1, 0}
	}
	for _, i := range order {
		if r, ok := readSlot(f, heads[i], i, capacity); ok {
			return r, nil
		}
	}
	return recordFile{}, errors.New("record file is damaged: no valid slot")
}

// slotSeq is the sequence a header claims (0 without the magic).
func slotSeq(head []byte) uint64 {
	if !isSlotFile(head) {
		return 0
	}
	return binary.LittleEndian.Uint64(head[8:])
}

// readSlot reads slot i of a file of slots of capacity bytes, whose header
// is head; ok is false when the slot is not valid.
func readSlot(f io.ReaderAt, head []byte, i, capacity int64) (recordFile, bool) {
	n := binary.LittleEndian.Uint64(head[16:])
	if !isSlotFile(head) || n > uint64(capacity-slotHeader) {
		return recordFile{}, false
	}
	data := make([]byte, n)
	if _, err := f.ReadAt(data, i*capacity+slotHeader); err != nil {
		return recordFile{}, false
	}
	if slotSum(head, data) != binary.LittleEndian.Uint32(head[24:]) {
		return recordFile{}, false
	}
	return recordFile{
		data:    data,
		version: string(head[32 : 32+recordVersionLen]),
		seq:     binary.LittleEndian.Uint64(head[8:]),
		slot:    i,
		cap:     capacity,
	}, true
}

// writeSlotFile writes a new slot file at name (which must not exist)
// holding data in its first slot, and syncs it.
func (s *Store) writeSlotFile(name string, seq uint64, version string, data []byte) error {
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	capacity := slotCap(len(data))
	bufs := [][]byte{slotHead(seq, version, data), data}
	if capacity <= slotDense {
		bufs = append(bufs, make([]byte, 2*capacity-int64(slotHeader+len(data))))
	}
	for _, b := range bufs {
		if _, err = f.Write(b); err != nil {
			break
		}
	}
	if err == nil {
		err = f.Truncate(2 * capacity)
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// rewriteSlot writes data into the slot of name's file that is not
// current and syncs it: the record's new current slot. When the sync
// fails the slot's header is overwritten with zeros, so that the record
// reads as it was (as far as the disk allows).
func (s *Store) rewriteSlot(name string, cur recordFile, version string, data []byte) error {
	f, err := s.openBelow(recordPath(name), os.O_RDWR)
	if err != nil {
		return err
	}
	defer f.Close()
	at := (1 - cur.slot) * cur.cap
	head := slotHead(cur.seq+1, version, data)
	if _, err := f.WriteAt(data, at+slotHeader); err != nil {
		return err
	}
	if _, err := f.WriteAt(head, at); err != nil {
		return err
	}
	if err := syncData(f); err != nil {
		_, _ = f.WriteAt(make([]byte, slotHeader), at)
		return err
	}
	return nil
}
