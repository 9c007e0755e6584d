//go:build unix

package tus

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// The kill test re-runs this test binary as a node (the os/exec
// TestHelperProcess pattern) that SIGKILLs itself at the chosen moment.
const (
	nodeEnv     = "MCPBLOB_TUS_NODE"      // the store folder of the node
	nodeModeEnv = "MCPBLOB_TUS_NODE_MODE" // "patches": patchesThenDie
	killLen     = 20<<20 + 99             // the upload's length
)

// TestNodeProcess is not a test: it is the body of the node process. It
// creates an upload on the local store in its folder, prints its id, and
// PATCHes all of it, killing itself once the second part is written and
// before the upload's record names it.
func TestNodeProcess(t *testing.T) {
	dir := os.Getenv(nodeEnv)
	if dir == "" {
		t.Skip("node process only")
	}
	c := countStore(openLocal(t, dir))
	if os.Getenv(nodeModeEnv) == "patches" {
		patchesThenDie(t, storeHandler(c))
	}
	c.afterPart = func(n int) {
		if n == 2 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // wait for the signal
		}
	}
	h := storeHandler(c)
	id := createOn(t, h, killLen, "killed")
	fmt.Println(id)
	r := patchOn(h, id, 0, randomBytes(killLen, 4))
	fmt.Fprintln(os.Stderr, "node: PATCH answered", r.Status, "instead of dying")
	os.Exit(2)
}

// TestKillBetweenPartAndRecord: a node SIGKILLed after writing a part to
// the upload's file and before its record names it. The restarted store's
// HEAD reports the durable offset (the part named before), the client
// resumes from there, and the object is byte-identical.
func TestKillBetweenPartAndRecord(t *testing.T) {
	dir := t.TempDir()
	id := runNode(t, dir, "")
	b := openLocal(t, dir) // the restarted node
	h := storeHandler(countStore(b))
	off := headOffset(t, h, id)
	if off != DefaultSegmentSize {
		t.Fatalf("HEAD after the kill: offset %d, want %d (the part named before it)", off, DefaultSegmentSize)
	}
	data := randomBytes(killLen, 4)
	wantStatus(t, "resumed PATCH", patchOn(h, id, off, data[off:]), http.StatusNoContent)
	wantObject(t, b, "killed", data)
}

// patchesThenDie is the node of TestKillBetweenPatches: it PATCHes the
// first two segments of an upload, one a request, and SIGKILLs itself as
// soon as the second is answered, while its bytes may still be hashed.
func patchesThenDie(t *testing.T, h *Handler) {
	id := createOn(t, h, killLen, "patched")
	fmt.Println(id)
	data := randomBytes(killLen, 6)
	for off := 0; off < 2*DefaultSegmentSize; off += DefaultSegmentSize {
		if r := patchOn(h, id, off, data[off:off+DefaultSegmentSize]); r.Status != http.StatusNoContent {
			fmt.Fprintln(os.Stderr, "node: PATCH answered", r.Status)
			os.Exit(2)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestKillBetweenPatches: a node SIGKILLed right after answering a PATCH
// (its SHA-256 of the bytes possibly behind them, never hashed to the
// end). The restarted node's HEAD reports both PATCHes' bytes, the
// record's SHA-256 state covers at most them, and the resumed upload's
// object has the bytes' SHA-256.
func TestKillBetweenPatches(t *testing.T) {
	dir := t.TempDir()
	id := runNode(t, dir, "patches")
	b := openLocal(t, dir) // the restarted node
	h := storeHandler(countStore(b))
	off := headOffset(t, h, id)
	if off != 2*DefaultSegmentSize {
		t.Fatalf("HEAD after the kill: offset %d, want %d", off, 2*DefaultSegmentSize)
	}
	u := recordOf(t, h, id)
	t.Logf("the record's SHA-256 state covers %d of %d bytes", hashedLen(u.Hash), u.Offset)
	if hashedLen(u.Hash) > u.Offset {
		t.Fatalf("the record's SHA-256 state covers %d bytes, past its offset %d", hashedLen(u.Hash), u.Offset)
	}
	data := randomBytes(killLen, 6)
	wantStatus(t, "resumed PATCH", patchOn(h, id, off, data[off:]), http.StatusNoContent)
	wantObject(t, b, "patched", data)
}

// runNode runs TestNodeProcess in mode on dir, expects it SIGKILLed, and
// returns the upload it created.
func runNode(t *testing.T, dir, mode string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestNodeProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), nodeEnv+"="+dir, nodeModeEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	id := ""
	if sc.Scan() {
		id = sc.Text()
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if ws, ok := exitStatus(err, &ee); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL || !ValidID(id) {
		t.Fatalf("node: %v, upload %q; want killed after creating an upload", err, id)
	}
	return id
}

func exitStatus(err error, ee **exec.ExitError) (syscall.WaitStatus, bool) {
	if !errors.As(err, ee) {
		return 0, false
	}
	ws, ok := (*ee).Sys().(syscall.WaitStatus)
	return ws, ok
}
