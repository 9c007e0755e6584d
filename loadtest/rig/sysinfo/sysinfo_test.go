package sysinfo

import "testing"

func TestParseCoreTimesReadsItsOwnCPU(t *testing.T) {
	stat := "cpu  9 9 9 9 9 9 9 9 0 0\ncpu10 1 1 1 1 1 1 1 1 0 0\ncpu1 100 2 30 400 5 6 70 8 0 0\n"
	got := parseCoreTimes(stat, 1)
	want := CoreTimes{Busy: 100 + 2 + 30 + 6 + 70, IRQ: 6 + 70, Idle: 400 + 5, Steal: 8}
	if got != want || got.Total() != 100+2+30+6+70+400+5+8 {
		t.Errorf("cpu1: %+v, want %+v", got, want)
	}
	if got := parseCoreTimes(stat, 2); got != (CoreTimes{}) {
		t.Errorf("absent cpu2: %+v", got)
	}
	if c := ReadCoreTimes(0); c.Total() <= 0 || c.Busy < c.IRQ {
		t.Errorf("this machine's cpu0: %+v", c)
	}
}
