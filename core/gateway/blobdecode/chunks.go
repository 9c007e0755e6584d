package blobdecode

import "io"

// chunks holds bytes in pooled 64 KiB buffers: growing it copies nothing
// and, once Reset, costs no allocation the next time (what Rewrite holds
// of an item while it decides is up to megabytes).
type chunks struct {
	list []*[]byte // each full but the last
	last []byte    // the last buffer's bytes so far
	n    int
}

func (c *chunks) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(c.list) == 0 || len(c.last) == cap(c.last) {
			c.grow()
		}
		k := copy(c.last[len(c.last):cap(c.last)], p)
		c.last = c.last[:len(c.last)+k]
		p = p[k:]
	}
	c.n += n
	return n, nil
}

// grow starts a new buffer.
func (c *chunks) grow() {
	if len(c.list) > 0 {
		*c.list[len(c.list)-1] = c.last
	}
	b := getBuf()
	c.list = append(c.list, b)
	c.last = (*b)[:0]
}

// Len is the number of bytes held.
func (c *chunks) Len() int { return c.n }

// WriteTo writes what is held to w (and keeps it).
func (c *chunks) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for i, b := range c.list {
		p := (*b)[:cap(*b)]
		if i == len(c.list)-1 {
			p = c.last
		}
		k, err := w.Write(p)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Reset gives the buffers back to the pool.
func (c *chunks) Reset() {
	for _, b := range c.list {
		*b = (*b)[:cap(*b)]
		putBuf(b)
	}
	c.list, c.last, c.n = c.list[:0], nil, 0
}
