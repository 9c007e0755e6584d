package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1000": 1000, "10K": 10 << 10, "10KiB": 10 << 10, "5M": 5 << 20,
		"2GiB": 2 << 30, "1T": 1 << 40, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5G", "G", "10 G", "9999999999T", "1PiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestKeyLineQuota(t *testing.T) {
	ks, err := LoadKeys("", []string{KeyLine("s1", "alice", nil) + " quota=10M quota-objects=5", KeyLine("s2", "bob", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := ks.Lookup("s1"); id.Quota != (Quota{Bytes: 10 << 20, Objects: 5}) {
		t.Errorf("alice's quota %+v", id.Quota)
	}
	if q := ks.Quotas(); len(q) != 1 || q["alice"].Bytes != 10<<20 {
		t.Errorf("Quotas() = %v, want alice's only", q)
	}
	if _, err := LoadKeys("", []string{KeyLine("s3", "carol", nil) + " quota=lots"}); err == nil || !strings.Contains(err.Error(), "lots") {
		t.Errorf("a bad quota= loaded: %v", err)
	}
}

func TestLoadQuotas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quotas")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# principals\nalice bytes=1G objects=100\n\nbob objects=3\n")
	q, err := LoadQuotas(path)
	if err != nil || q["alice"] != (Quota{Bytes: 1 << 30, Objects: 100}) || q["bob"] != (Quota{Objects: 3}) || len(q) != 2 {
		t.Fatalf("LoadQuotas: %v %v", q, err)
	}
	for _, bad := range []string{"alice\n", "alice size=1\n", "alice bytes=1\nalice bytes=2\n", "alice objects=-1\n"} {
		write(bad)
		if _, err := LoadQuotas(path); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("LoadQuotas(%q) = %v, want an error naming the line", bad, err)
		}
	}
}
