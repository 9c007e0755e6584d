package measure

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

const tmpfsMagic = 0x01021994

func TestResidencyFollowsWarmAndDrop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WarmFile(path); err != nil {
		t.Fatal(err)
	}
	warm, err := Residency(path)
	if err != nil {
		t.Fatal(err)
	}
	if warm < 0.99 {
		t.Fatalf("after reading the whole file %.2f of it is cached, want all", warm)
	}
	if err := DropFile(path); err != nil {
		t.Fatal(err)
	}
	cold, err := Residency(path)
	if err != nil {
		t.Fatal(err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err == nil && fs.Type == tmpfsMagic {
		t.Skip("tmpfs keeps its pages whatever fadvise says")
	}
	if cold > 0.5 {
		t.Fatalf("after DropFile %.2f of the file is still cached, want (almost) none", cold)
	}
}
