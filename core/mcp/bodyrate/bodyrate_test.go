package bodyrate

import (
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	now := time.Unix(0, 0)
	b := New(1000, 2*time.Second, 10*time.Second) // 1 ms a byte
	if got := b.Deadline(now).Sub(now); got != 2*time.Second {
		t.Fatalf("first deadline %v, want the grace 2s", got)
	}
	b.Charge(500*time.Millisecond, 100) // 2s - 0.5s + 100 ms
	if b.left != 1600*time.Millisecond {
		t.Fatalf("after 100 bytes in 0.5s: %v left, want 1.6s", b.left)
	}
	b.Charge(0, 1<<20) // banked up to the read timeout, no more
	if b.left != 10*time.Second {
		t.Fatalf("bank: %v left, want 10s", b.left)
	}
	b.Charge(11*time.Second, 0)
	if got := b.Deadline(now).Sub(now); got != time.Millisecond {
		t.Fatalf("spent budget: deadline %v, want the 1 ms floor", got)
	}
}

func TestBudgetGraceOverBank(t *testing.T) {
	b := New(1000, 30*time.Second, 10*time.Second)
	b.Charge(time.Second, 1<<20) // a grace longer than the bank is spent, not credited
	if b.left != 29*time.Second {
		t.Fatalf("%v left, want 29s", b.left)
	}
}

func TestBudgetNoRate(t *testing.T) {
	b := New(0, time.Second, 5*time.Second)
	if b.left != 5*time.Second {
		t.Fatalf("no rate rule: %v left, want the read timeout", b.left)
	}
	b.Charge(4*time.Second, 0)
	if b.left != 5*time.Second {
		t.Fatalf("no rate rule: each read gets the whole read timeout, got %v", b.left)
	}
}

func TestBudgetFastRate(t *testing.T) {
	if b := New(2e9, 0, time.Second); b.perByte != 1 {
		t.Fatalf("over 1 GB/s: %v a byte, want 1ns", b.perByte)
	}
}
