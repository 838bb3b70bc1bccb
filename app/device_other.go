//go:build !darwin

package main

import (
	"os"
	"strconv"
	"strings"
)

// machine returns the memory size (from /proc/meminfo on Linux).
func machine() (uint64, string) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10, ""
		}
	}
	return 0, ""
}
