//go:build linux

package mslcpu

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
)

// DeviceOptions configure an emulated device.
type DeviceOptions struct {
	// Sources is the shader tree; nil means the project's shaders.
	Sources fs.FS
	// Schedules every launch runs under (see Launch); nil means {0, 1}.
	Schedules []int
	// Threads is the OS threads running groups; 0 means GOMAXPROCS.
	Threads int
	// MaxBuffer is the largest device buffer (zero-copy windows); 0 means 1 GiB.
	MaxBuffer int64
}

// Device is a metal.Device that runs the MSL kernels on the CPU with this
// package's harness: every Encode is one checked launch (two thread
// schedules compared bit for bit, guard pages around each bound view,
// read-only inputs, poisoned threadgroup memory), run at once. It records
// which kernels ran successfully, for the kernel census.
type Device struct {
	lib  *Library
	opts DeviceOptions
	host metal.HostRegions

	mu         sync.Mutex
	dispatched map[string]int
	subs       atomic.Int64
	pending    bool
	switches   atomic.Uint64
	elapsed    atomic.Int64
}

var _ metal.Device = (*Device)(nil)

// NewDevice builds the shader library (cached by content) and returns a device.
func NewDevice(tc *Toolchain, srcs fs.FS, o DeviceOptions) (*Device, error) {
	lib, err := tc.BuildLibrary(srcs, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	if o.MaxBuffer == 0 {
		o.MaxBuffer = 1 << 30
	}
	d := &Device{lib: lib, opts: o, dispatched: map[string]int{}}
	d.host = metal.HostRegions{PageSize: int64(os.Getpagesize()), MaxBuffer: o.MaxBuffer,
		Wrap: func(w []byte) (metal.Buffer, error) { return &hostBuffer{data: w, borrowed: true}, nil }}
	return d, nil
}

// Library is the built shader library.
func (d *Device) Library() *Library { return d.lib }

// Info describes the emulated device.
func (d *Device) Info() compute.DeviceInfo {
	return compute.DeviceInfo{Backend: "metal", Name: "Metal kernels emulated on the CPU (mslcpu)", UnifiedMemory: true,
		Threads: runtime.GOMAXPROCS(0), Family: "mslcpu"}
}

type hostBuffer struct {
	data     []byte
	borrowed bool // a view of host memory (MapHost)
	released atomic.Bool
}

func (h *hostBuffer) Bytes() []byte {
	if h.released.Load() {
		panic("mslcpu: buffer used after Release")
	}
	return h.data
}

func (h *hostBuffer) Release() { h.released.Store(true) }

// NewBuffer returns zeroed host memory (8-byte aligned).
func (d *Device) NewBuffer(size int64) (metal.Buffer, error) {
	words := make([]uint64, (size+7)/8)
	b := make([]byte, 0)
	if len(words) > 0 {
		b = unsafeBytes(words, size)
	}
	return &hostBuffer{data: b}, nil
}

// MapHost registers a page-aligned host region.
func (d *Device) MapHost(region []byte) error { return d.host.Add(region) }

// UnmapHost forgets a region.
func (d *Device) UnmapHost(region []byte) { d.host.Remove(region) }

// HostBytes counts the bytes of the host regions registered now.
func (d *Device) HostBytes() int64 { return d.host.Bytes() }

// WrapHost finds host in a registered region.
func (d *Device) WrapHost(host []byte) (metal.Buffer, int64, bool) { return d.host.Find(host) }

// Encode validates the dispatch and runs it at once.
func (d *Device) Encode(dp *metal.Dispatch) error {
	m, ok := d.lib.Module(dp.Kernel)
	if !ok {
		return fmt.Errorf("no kernel %s in the shader library", dp.Kernel)
	}
	if err := checkDispatch(dp); err != nil {
		return err
	}
	l := Launch{Size: dp.Groups, Group: dp.Threads, Schedules: d.opts.Schedules, Threads: d.opts.Threads}
	if len(dp.TGMem) > 0 {
		l.TGMem = map[int]int{}
		for i, n := range dp.TGMem {
			l.TGMem[i] = n
		}
	}
	for i, a := range dp.Args {
		if a.Buf == nil {
			al := 8
			if len(a.Bytes)%8 != 0 {
				al = 4
			}
			if len(a.Bytes)%4 != 0 {
				al = 1
			}
			l.Buffers = append(l.Buffers, Buffer{Index: i, Data: a.Bytes, Align: al})
			continue
		}
		view := a.Buf.Bytes()[a.Offset : a.Offset+a.Size]
		l.Buffers = append(l.Buffers, Buffer{Index: i, Data: view, Writable: a.Write, Align: max(a.Align, 1)})
	}
	res, err := m.Run(dp.Kernel, l)
	if err != nil {
		return err
	}
	for i, a := range dp.Args {
		if a.Buf != nil && a.Write {
			copy(a.Buf.Bytes()[a.Offset:a.Offset+a.Size], res.Buffers[i])
		}
	}
	d.switches.Add(res.Switches)
	d.elapsed.Add(int64(res.Elapsed))
	d.mu.Lock()
	d.dispatched[dp.Kernel]++
	d.pending = true
	d.mu.Unlock()
	return nil
}

// checkDispatch applies the rules a Metal encoder would: views inside their
// buffers and aligned, group sizes within limits, and no written view
// overlapping another binding unless it is the same view of an in-place
// kernel.
func checkDispatch(dp *metal.Dispatch) error {
	t := dp.Threads[0] * dp.Threads[1] * dp.Threads[2]
	if t < 1 || t > 1024 {
		return fmt.Errorf("%d threads per threadgroup", t)
	}
	for i, a := range dp.Args {
		if a.Buf == nil {
			if len(a.Bytes) == 0 || len(a.Bytes) > 4096 {
				return fmt.Errorf("buffer(%d): %d argument bytes (setBytes takes 1 to 4096)", i, len(a.Bytes))
			}
			continue
		}
		n := int64(len(a.Buf.Bytes()))
		if a.Offset < 0 || a.Size < 0 || a.Offset+a.Size > n {
			return fmt.Errorf("buffer(%d): view [%d, %d) outside a %d-byte buffer", i, a.Offset, a.Offset+a.Size, n)
		}
		if a.Align > 0 && a.Offset%int64(a.Align) != 0 {
			return fmt.Errorf("buffer(%d): offset %d not aligned to %d bytes", i, a.Offset, a.Align)
		}
	}
	for i, a := range dp.Args {
		if a.Buf == nil || !a.Write || a.Size == 0 {
			continue
		}
		va := a.Buf.Bytes()[a.Offset : a.Offset+a.Size]
		for j, b := range dp.Args {
			if j == i || b.Buf == nil || b.Size == 0 {
				continue
			}
			vb := b.Buf.Bytes()[b.Offset : b.Offset+b.Size]
			if !overlapMem(va, vb) {
				continue
			}
			if dp.InPlace && &va[0] == &vb[0] && len(va) == len(vb) && !b.Write {
				continue
			}
			return fmt.Errorf("buffer(%d) is written and overlaps buffer(%d) (a race on the GPU)", i, j)
		}
	}
	return nil
}

// Wait counts a submission when work was recorded (launches ran in Encode).
func (d *Device) Wait(ctx context.Context) error {
	d.mu.Lock()
	if d.pending {
		d.subs.Add(1)
		d.pending = false
	}
	d.mu.Unlock()
	if ctx != nil {
		return ctx.Err()
	}
	return nil
}

// Submissions counts Waits that had work.
func (d *Device) Submissions() int64 { return d.subs.Load() }

// Close does nothing.
func (d *Device) Close() error { return nil }

// Dispatched returns the kernels run successfully since the last call, with
// their counts, and resets the record.
func (d *Device) Dispatched() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.dispatched
	d.dispatched = map[string]int{}
	return m
}

// Cost is the emulation work so far: fiber switches and time in the runtime.
func (d *Device) Cost() (switches uint64, elapsed time.Duration) {
	return d.switches.Load(), time.Duration(d.elapsed.Load())
}

// GPUTime is the time spent in the kernel runtime so far: the emulated
// device's "GPU time" (metal.Backend reports it as Stats.DeviceTime).
func (d *Device) GPUTime() time.Duration { return time.Duration(d.elapsed.Load()) }

// SortedKeys lists a map's keys in order.
func SortedKeys(m map[string]int) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}
