// Package sysinfo reads what the benchmark reports say about the machine
// and about a serving process: CPU model, kernel, and resident memory from
// /proc/PID/status.
package sysinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPUModel is the first "model name" of /proc/cpuinfo.
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Kernel is `uname -sr`.
func Kernel() string {
	out, err := exec.Command("uname", "-sr").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// Cores is the number of logical CPUs.
func Cores() int { return runtime.NumCPU() }

// MemTotal is MemTotal of /proc/meminfo in bytes.
func MemTotal() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	v, _ := field(data, "MemTotal:")
	return v
}

// Mem is the resident memory of a process, in bytes.
type Mem struct {
	RSS int64 // VmRSS: resident now
	HWM int64 // VmHWM: peak resident since start or the last ResetPeak
}

// ReadMem reads VmRSS and VmHWM of pid.
func ReadMem(pid int) (Mem, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	rss, err := field(data, "VmRSS:")
	if err != nil {
		return Mem{}, err
	}
	hwm, err := field(data, "VmHWM:")
	if err != nil {
		return Mem{}, err
	}
	return Mem{RSS: rss, HWM: hwm}, nil
}

// RSS is VmRSS of pid in bytes, 0 when it cannot be read (the process is
// gone).
func RSS(pid int) int64 {
	m, _ := ReadMem(pid)
	return m.RSS
}

// ResetPeak resets VmHWM of pid to its current RSS (writing 5 to
// /proc/PID/clear_refs, Linux ≥ 4.0). It reports whether that worked; when
// it did not, the caller falls back to sampling VmRSS.
func ResetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// field parses "Name:   1234 kB" from a /proc status-like file into bytes.
func field(data []byte, name string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			v, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, err
			}
			if len(f) > 1 && f[1] == "kB" {
				v <<= 10
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("sysinfo: %s not found", strings.TrimSuffix(name, ":"))
}

// CPUTimes are the machine-wide CPU counters of /proc/stat, in ticks.
type CPUTimes struct{ Total, Steal int64 }

// ReadCPUTimes reads the "cpu" line of /proc/stat.
func ReadCPUTimes() CPUTimes {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	var t CPUTimes
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i < 8 { // user nice system idle iowait irq softirq steal (guest time is inside user)
			t.Total += n
		}
		if i == 7 {
			t.Steal = n
		}
	}
	return t
}

// CoreTimes are one CPU's counters of /proc/stat, in ticks: Busy is user,
// nice, system, irq and softirq; IRQ is irq and softirq alone (time the
// kernel spent on interrupts, network receive among them, charged to no
// process); Idle is idle and iowait.
type CoreTimes struct{ Busy, IRQ, Idle, Steal int64 }

// Total is every tick of the CPU's time.
func (c CoreTimes) Total() int64 { return c.Busy + c.Idle + c.Steal }

// ReadCoreTimes reads the "cpuN" line of /proc/stat (zero when it is absent).
func ReadCoreTimes(n int) CoreTimes {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CoreTimes{}
	}
	return parseCoreTimes(string(data), n)
}

// parseCoreTimes reads the "cpuN" line of a /proc/stat text.
func parseCoreTimes(stat string, n int) CoreTimes {
	prefix := "cpu" + strconv.Itoa(n) + " "
	for line := range strings.Lines(stat) {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var v [8]int64 // user nice system idle iowait irq softirq steal
		for i, f := range strings.Fields(line)[1:] {
			if i < len(v) {
				v[i], _ = strconv.ParseInt(f, 10, 64)
			}
		}
		return CoreTimes{Busy: v[0] + v[1] + v[2] + v[5] + v[6], IRQ: v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}
	}
	return CoreTimes{}
}

// StealSince is the share of CPU time the hypervisor gave to other guests
// since t, in percent: work outside this machine that slowed every number.
func StealSince(t CPUTimes) float64 {
	now := ReadCPUTimes()
	if now.Total <= t.Total {
		return 0
	}
	return 100 * float64(now.Steal-t.Steal) / float64(now.Total-t.Total)
}

// ProcCPU is the CPU time (user + system) process pid has used so far,
// from /proc/PID/stat (in clock ticks of 10 ms on Linux).
func ProcCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count fields after its ")".
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, fmt.Errorf("sysinfo: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("sysinfo: short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("sysinfo: malformed /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// ModuleVersion is the version of module that the Go binary bin was built
// from, as `go version -m` reports it: the main module or a dependency
// ("unknown" when it cannot tell). Tools built from a pseudo-version
// (SeaweedFS, built from cmd/tools/weed) do not print it themselves.
func ModuleVersion(bin, module string) string {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) >= 3 && (f[0] == "mod" || f[0] == "dep") && f[1] == module {
			return f[2]
		}
	}
	return "unknown"
}

// LoadAvg is /proc/loadavg's first three fields, "unknown" when it cannot
// be read.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
