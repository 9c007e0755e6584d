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

// LoadAvg is the 1, 5 and 15 minute load averages of /proc/loadavg.
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}
