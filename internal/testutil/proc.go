package testutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcStatus reads a field of /proc/<pid>/status in bytes (VmRSS, VmHWM: given in kB there):
// what benchmarks report of a process's memory.
func ProcStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
