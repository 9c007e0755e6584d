//go:build unix

package localfs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// The crash tests re-run this test binary as a helper process (the os/exec
// TestHelperProcess pattern) that the parent, or the helper itself, kills
// with SIGKILL at a chosen moment. The parent then inspects the folder.

const (
	helperEnv   = "MCPBLOB_LOCALFS_HELPER" // what the helper does
	helperDir   = "MCPBLOB_LOCALFS_DIR"    // the store folder
	helperPoint = "MCPBLOB_LOCALFS_POINT"  // crash point for "commit"
)

// TestHelperProcess is not a test: it is the body of the helper process.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	if err := helper(mode, os.Getenv(helperDir), os.Getenv(helperPoint)); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

func helper(mode, dir, point string) error {
	s, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch mode {
	case "upload":
		// Upload 256 MiB slowly, reporting progress; the parent kills us.
		w, err := s.Create(ctx, "big", storage.CreateOptions{})
		if err != nil {
			return err
		}
		src := storagetest.NewStream(1, 256<<20)
		buf := make([]byte, 1<<20)
		for {
			n, rerr := src.Read(buf)
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			fmt.Printf("wrote %d\n", w.Written())
			if rerr != nil {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		_, err = w.Commit(ctx)
		return err
	case "commit", "delete":
		crashHook = func(p string) {
			if p == point {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // wait for the signal
			}
		}
		if mode == "delete" {
			return s.Delete(ctx, "k")
		}
		w, err := s.Create(ctx, "k", storage.CreateOptions{MediaType: "text/new", Filename: "new"})
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte("new version")); err != nil {
			return err
		}
		_, err = w.Commit(ctx)
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// helperCmd returns the command that runs the helper in mode on dir.
func helperCmd(t *testing.T, mode, dir, point string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDir+"="+dir, helperPoint+"="+point)
	cmd.Stderr = os.Stderr
	return cmd
}

// killed reports whether err is the exit of a process killed by SIGKILL.
func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// files lists the regular files under dir/sub, relative to dir/sub.
func files(t *testing.T, dir, sub string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dir, sub)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func TestCrashMidUpload(t *testing.T) {
	dir := t.TempDir()
	cmd := helperCmd(t, "upload", dir, "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wrote int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		wrote, _ = strconv.ParseInt(strings.TrimPrefix(sc.Text(), "wrote "), 10, 64)
		if wrote >= 64<<20 {
			break
		}
	}
	if wrote < 64<<20 {
		t.Fatalf("helper stopped after %d bytes: %v", wrote, sc.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if !killed(err) {
		t.Fatalf("helper exit: %v, want killed", err)
	}
	t.Logf("killed the helper after it wrote %d MiB", wrote>>20)

	// The upload left a temporary file and nothing else.
	tmp := files(t, dir, tmpDir)
	if len(tmp) != 1 {
		t.Errorf("temporary files after the crash = %q, want the one upload", tmp)
	}
	if fi, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Errorf("data file exists after the crash (%d bytes)", fi.Size())
	}
	if meta := files(t, dir, metaDir); len(meta) != 0 {
		t.Errorf("metadata after the crash: %q", meta)
	}

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Stat(t.Context(), "big")
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat after the crash: %v, want ErrNotFound", err)
	}
	page, err := s.List(t.Context(), "", "", 0)
	if err != nil || len(page.Items) != 0 {
		t.Errorf("List after the crash = %+v, %v; want empty", page, err)
	}
	if tmp := files(t, dir, tmpDir); len(tmp) != 0 {
		t.Errorf("temporary files after reopening: %q", tmp)
	}
}

func TestCrashDuringCommit(t *testing.T) {
	cases := []struct {
		mode, point string
		old         bool // an old version exists
		wantNew     bool // the new version is visible afterwards
	}{
		{"commit", "commit: journal written", false, false},
		{"commit", "commit: journal written", true, false},
		{"commit", "commit: sidecar replaced", false, false},
		{"commit", "commit: sidecar replaced", true, false},
		{"commit", "commit: data renamed", false, true},
		{"commit", "commit: data renamed", true, true},
		{"delete", "delete: data removed", true, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/old=%v", c.point, c.old), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx := t.Context()
			if c.old {
				s, err := Open(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				w, _ := s.Create(ctx, "k", storage.CreateOptions{MediaType: "text/old", Filename: "old"})
				w.Write([]byte("old"))
				if _, err := w.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			err := helperCmd(t, c.mode, dir, c.point).Run()
			if !killed(err) {
				t.Fatalf("helper exit: %v, want killed at %q", err, c.point)
			}
			// Killed after the sidecar rename and before the data rename of
			// a new key, the store holds metadata without an object until
			// the journal is replayed.
			if c.point == "commit: sidecar replaced" && !c.old || c.mode == "delete" {
				_, err := os.Stat(filepath.Join(dir, "k"))
				if meta := files(t, dir, metaDir); len(meta) != 1 || !errors.Is(err, os.ErrNotExist) {
					t.Errorf("before recovery: sidecars %q, data file: %v; want an orphan sidecar", meta, err)
				}
			}

			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rc, info, err := s.Open(ctx, "k", nil)
			switch {
			case c.wantNew:
				if err != nil || info.Filename != "new" || info.MediaType != "text/new" || info.Size != int64(len("new version")) {
					t.Fatalf("Open = %+v, %v; want the new version", info, err)
				}
			case c.old && c.mode == "commit":
				if err != nil || info.Filename != "old" || info.MediaType != "text/old" || info.Size != 3 {
					t.Fatalf("Open = %+v, %v; want the old version", info, err)
				}
			default:
				if !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("Open = %+v, %v; want ErrNotFound", info, err)
				}
			}
			if err == nil {
				rc.Close()
			}
			// The list index, rebuilt from the files, agrees with Open.
			page, lerr := s.List(ctx, "", "", 0)
			switch {
			case lerr != nil:
				t.Fatal(lerr)
			case err == nil && (len(page.Items) != 1 || page.Items[0] != info):
				t.Errorf("List = %+v, want only %+v", page.Items, info)
			case err != nil && len(page.Items) != 0:
				t.Errorf("List = %+v, want nothing", page.Items)
			}
			// Recovery left exactly one matching record, or none.
			m, err := s.readSidecar("k")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case info.Size == 0 && m != nil:
				t.Errorf("metadata left without an object: %+v", m)
			case info.Size != 0 && (m == nil || len(m.Versions) != 1):
				t.Errorf("sidecar after recovery = %+v, want one record", m)
			}
			if tmp := files(t, dir, tmpDir); len(tmp) != 0 {
				t.Errorf("temporary files after reopening: %q", tmp)
			}
		})
	}
}
