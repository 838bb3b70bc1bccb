//go:build darwin

package hfhub

import (
	"os"
	"os/exec"
	"strconv"
)

// KeepAwake stops the Mac from idle-sleeping while this process downloads
// (caffeinate -i, tied to our pid so it ends with us, however we end).
// The returned function lets it sleep again.
func KeepAwake() (release func()) {
	cmd := exec.Command("/usr/bin/caffeinate", "-i", "-w", strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		return func() {}
	}
	return func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
}
