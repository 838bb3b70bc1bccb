package main

import "golang.org/x/sys/unix"

// machine returns the memory size and the processor's name.
func machine() (uint64, string) {
	mem, _ := unix.SysctlUint64("hw.memsize")
	cpu, _ := unix.Sysctl("machdep.cpu.brand_string")
	return mem, cpu
}
