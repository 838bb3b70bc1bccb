//go:build linux

package mslcpu

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Buffer is one [[buffer(n)]] binding of a launch.
type Buffer struct {
	Index    int
	Data     []byte // contents sent to the kernel
	Writable bool   // read back after the launch; otherwise mapped read-only
	Align    int    // element alignment: the data ends flush against the guard page
}

// Launch describes one dispatch.
type Launch struct {
	// Size counts threadgroups (dispatchThreadgroups) or, when PerThread,
	// threads (dispatchThreads, with partial groups at the far edges).
	Size      [3]int
	Group     [3]int // threads per threadgroup
	PerThread bool
	Buffers   []Buffer
	TGMem     map[int]int // [[threadgroup(i)]] lengths in bytes
	// Schedules run in order on fresh copies of the inputs and must agree bit
	// for bit: 0 index order, 1 reverse order, 2 shuffled (Seed). Default {0, 1}.
	Schedules []int
	Seed      uint64
	Threads   int           // OS threads running groups; 0: GOMAXPROCS
	Timeout   time.Duration // watchdog; 0: two minutes
}

// Result is a finished launch.
type Result struct {
	Buffers  map[int][]byte // writable buffers after the first schedule
	Switches uint64         // fiber switches over all schedules
	Elapsed  time.Duration  // time inside the runtime, all schedules
}

// KernelError is a launch the runtime stopped or that crashed: a data race,
// a barrier misuse, an out-of-bounds access, a deadlock, a timeout.
type KernelError struct {
	Kernel string
	Msg    string
}

func (e *KernelError) Error() string { return "mslcpu: " + e.Kernel + ": " + e.Msg }

// Has reports whether the module defines kernel name.
func (m *Module) Has(name string) bool {
	for _, k := range m.Kernels {
		if k.Name == name {
			return true
		}
	}
	return false
}

// Run executes kernel name of m.
func (m *Module) Run(name string, l Launch) (*Result, error) {
	if !m.Has(name) {
		return nil, fmt.Errorf("mslcpu: %s defines no kernel %s", m.File, name)
	}
	var req bytes.Buffer
	w32 := func(v uint32) { binary.Write(&req, binary.LittleEndian, v) }
	req.WriteString("MSLQ")
	w32(uint32(len(name)))
	req.WriteString(name)
	if l.PerThread {
		w32(1)
	} else {
		w32(0)
	}
	for _, v := range l.Size {
		if v < 1 || v > math.MaxUint32 {
			return nil, fmt.Errorf("mslcpu: %s: dispatch size %v", name, l.Size)
		}
		w32(uint32(v))
	}
	for _, v := range l.Group {
		if v < 1 {
			return nil, fmt.Errorf("mslcpu: %s: threadgroup size %v", name, l.Group)
		}
		w32(uint32(v))
	}
	sch := l.Schedules
	if len(sch) == 0 {
		sch = []int{0, 1}
	}
	w32(uint32(len(sch)))
	for _, s := range sch {
		w32(uint32(s))
	}
	binary.Write(&req, binary.LittleEndian, l.Seed|1)
	threads := l.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	w32(uint32(threads))
	w32(uint32(len(l.TGMem)))
	for i, n := range l.TGMem {
		w32(uint32(i))
		w32(uint32(n))
	}
	w32(uint32(len(l.Buffers)))
	for _, b := range l.Buffers {
		w32(uint32(b.Index))
		if b.Writable {
			w32(1)
		} else {
			w32(0)
		}
		a := b.Align
		if a <= 0 {
			a = 1
		}
		if a&(a-1) != 0 || len(b.Data)%a != 0 {
			return nil, fmt.Errorf("mslcpu: %s: buffer(%d): %d bytes with alignment %d", name, b.Index, len(b.Data), a)
		}
		w32(uint32(a))
		binary.Write(&req, binary.LittleEndian, uint64(len(b.Data)))
		req.Write(b.Data)
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.Bin)
	cmd.Stdin = &req
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, &KernelError{Kernel: name, Msg: fmt.Sprintf("watchdog: no result after %v (an endless loop, or groups waiting on each other)", timeout)}
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return nil, &KernelError{Kernel: name, Msg: strings.TrimPrefix(lastLine(msg), "MSLRT: ")}
		}
		return nil, fmt.Errorf("mslcpu: %s: kernel process failed: %v: %s", name, err, msg)
	}
	return decode(name, stdout.Bytes())
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func decode(name string, b []byte) (*Result, error) {
	r := bytes.NewReader(b)
	fail := func() (*Result, error) { return nil, fmt.Errorf("mslcpu: %s: malformed response", name) }
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:]) != "MSLR" {
		return fail()
	}
	var status, mlen uint32
	binary.Read(r, binary.LittleEndian, &status)
	binary.Read(r, binary.LittleEndian, &mlen)
	msg := make([]byte, mlen)
	if _, err := io.ReadFull(r, msg); err != nil {
		return fail()
	}
	res := &Result{Buffers: map[int][]byte{}}
	var ms float64
	binary.Read(r, binary.LittleEndian, &res.Switches)
	binary.Read(r, binary.LittleEndian, &ms)
	res.Elapsed = time.Duration(ms * float64(time.Millisecond))
	if status != 0 {
		return nil, &KernelError{Kernel: name, Msg: string(msg)}
	}
	var nb uint32
	if err := binary.Read(r, binary.LittleEndian, &nb); err != nil {
		return fail()
	}
	for k := uint32(0); k < nb; k++ {
		var idx uint32
		var n uint64
		binary.Read(r, binary.LittleEndian, &idx)
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil || n > uint64(r.Len()) {
			return fail()
		}
		data := make([]byte, n)
		io.ReadFull(r, data)
		res.Buffers[int(idx)] = data
	}
	return res, nil
}
