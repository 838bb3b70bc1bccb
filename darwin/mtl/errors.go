package mtl

import (
	"errors"
	"fmt"
)

// ErrNoDevice reports that the system has no Metal device (a Mac without a
// supported GPU, a virtual machine, or a process without GPU access).
var ErrNoDevice = errors.New("mtl: no Metal device")

// ErrUnsupported reports an API the running macOS lacks.
var ErrUnsupported = errors.New("mtl: not supported by this macOS")

// MinMacOS is the oldest macOS the Metal backend runs on: the library is
// compiled as MSL 3.0 (macOS 13) and MPSGraph takes bfloat16 from macOS 14.
// packaging/macos/Info.plist's LSMinimumSystemVersion says the same.
var MinMacOS = [2]int{14, 0}

// ErrOldMacOS reports a macOS older than MinMacOS.
var ErrOldMacOS = fmt.Errorf("mtl: the Metal backend needs macOS %d.%d or later", MinMacOS[0], MinMacOS[1])

// CompileError is a failed library compilation; Log is the Metal compiler's
// message (file:line:column diagnostics).
type CompileError struct {
	Log string
}

func (e *CompileError) Error() string { return "mtl: compiling the shader library: " + e.Log }

// PipelineError is a kernel the library lacks or the device cannot run.
type PipelineError struct {
	Kernel string
	Err    error
}

func (e *PipelineError) Error() string { return fmt.Sprintf("mtl: pipeline %s: %v", e.Kernel, e.Err) }
func (e *PipelineError) Unwrap() error { return e.Err }

// CommandError is a command buffer that finished with an error (a GPU fault,
// a timeout, out of memory); Status is the MTLCommandBufferStatus.
type CommandError struct {
	Status int
	Msg    string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("mtl: command buffer failed (status %d): %s", e.Status, e.Msg)
}

// FamilyName spells an MTLGPUFamily raw value: 1001–1010 are apple1–apple10,
// 5001–5002 metal3–metal4.
func FamilyName(f int) string {
	switch {
	case f >= 1001 && f < 2000:
		return fmt.Sprintf("apple%d", f-1000)
	case f >= 5001 && f < 5100:
		return fmt.Sprintf("metal%d", f-5000+2)
	}
	return fmt.Sprintf("family%d", f)
}
