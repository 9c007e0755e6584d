package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Entries are picked by their place in the file, whatever their
// timestamps say, and a line nginx is still writing waits for the next read.
func TestReadAccessLogByMarks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	line := func(sec, uri string) string {
		return sec + ".250 0.002 200 POST " + uri + " up=127.0.0.1:1 ups=200 sent=10 done=OK\n"
	}
	if markLog(path) != 0 {
		t.Fatal("a missing log must mark 0")
	}
	if err := os.WriteFile(path, []byte(line("2000000000", "/before")), 0o644); err != nil {
		t.Fatal(err)
	}
	from := markLog(path)
	// A clock stepped back: the new line's time is before the old one's.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("1000000000", "/mcp") + "1000000001.000 0.001 200 GET /par")
	f.Close()
	got, err := readAccessLog(path, from, logToEnd)
	if err != nil || len(got) != 1 || got[0].uri != "/mcp" || got[0].last() != "127.0.0.1:1" || !got[0].done {
		t.Fatalf("after the mark: %+v, %v; want only the complete /mcp line", got, err)
	}
	to := markLog(path)
	if got, _ := readAccessLog(path, 0, from); len(got) != 1 || got[0].uri != "/before" {
		t.Errorf("before the mark: %+v", got)
	}
	if got, err := readAccessLog(path, from, to); err != nil || len(got) != 1 {
		t.Errorf("bounded read over a partial last line: %+v, %v; want the one complete line", got, err)
	}
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("tial up=- ups=- sent=0 done=\n")
	f.Close()
	got, err = readAccessLog(path, from, logToEnd)
	if err != nil || len(got) != 2 || got[1].uri != "/partial" || got[1].last() != "" || got[1].done {
		t.Errorf("once finished, the line is read: %+v, %v", got, err)
	}
}
