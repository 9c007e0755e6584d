package s3test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestListensOnLoopbackOnly: every TCP socket the node listens on is on
// 127.0.0.1, at one of the ports picked for it, and each of those ports is
// listened on (no default port, no second address, no metrics port).
func TestListensOnLoopbackOnly(t *testing.T) {
	s := Shared(t)
	listening := listeners(t, s.PID())
	p := s.ports
	want := []string{}
	for _, port := range []int{p.master, p.masterGRPC, p.volume, p.volumeGRPC, p.filer, p.filerGRPC, p.s3, p.s3GRPC} {
		want = append(want, "127.0.0.1:"+strconv.Itoa(port))
	}
	slices.Sort(want)
	if !slices.Equal(listening, want) {
		t.Errorf("the node listens on %v, want exactly %v", listening, want)
	}
}

// TestStopEndsProcessGroup: Stop leaves no process of the node's group and
// removes its folder and its gRPC sockets.
func TestStopEndsProcessGroup(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if group := processGroup(t, pid); !slices.Contains(group, pid) {
		t.Fatalf("process group %d: %v, want the node in it", pid, group)
	}
	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
	if group := processGroup(t, pid); len(group) > 0 {
		t.Errorf("processes left in the node's group after Stop: %v", group)
	}
	for _, path := range append(s.grpcSockets(), s.dir) {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s after Stop: %v", path, err)
		}
	}
}

// processGroup returns the PIDs whose process group is pgid.
func processGroup(t *testing.T, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// listeners returns the sorted addresses of the TCP sockets pid listens
// on, from /proc: its socket inodes, looked up in /proc/net/tcp and tcp6.
func listeners(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var addrs []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		addrs = append(addrs, listenersIn(t, table, inodes)...)
	}
	slices.Sort(addrs)
	return addrs
}

// listenersIn returns the local addresses of the listening sockets of
// table whose inode is in inodes.
func listenersIn(t *testing.T, table string, inodes map[string]bool) []string {
	f, err := os.Open(table)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var addrs []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
			continue
		}
		addrs = append(addrs, decodeProcAddr(fields[1]))
	}
	return addrs
}

// decodeProcAddr turns /proc/net/tcp's "0100007F:1F90" into
// "127.0.0.1:8080"; an IPv6 address stays in hex, which never equals a
// wanted address.
func decodeProcAddr(hexAddr string) string {
	ip, port, _ := strings.Cut(hexAddr, ":")
	n, _ := strconv.ParseUint(port, 16, 16)
	if len(ip) != 8 {
		return "[" + ip + "]:" + strconv.FormatUint(n, 10)
	}
	v, _ := strconv.ParseUint(ip, 16, 32)
	// Little-endian on the machines Go's tests run on (amd64, arm64).
	return strconv.Itoa(int(v&0xff)) + "." + strconv.Itoa(int(v>>8&0xff)) + "." +
		strconv.Itoa(int(v>>16&0xff)) + "." + strconv.Itoa(int(v>>24)) + ":" + strconv.FormatUint(n, 10)
}
