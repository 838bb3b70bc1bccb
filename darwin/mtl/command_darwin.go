//go:build darwin

package mtl

import (
	"sync"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"
)

// Queue is a command queue: command buffers run in commit order.
type Queue struct {
	obj metal.CommandQueueObject
}

// NewQueue makes a command queue.
func (d *Device) NewQueue() (*Queue, error) {
	var q *Queue
	objcpool.With(func() {
		obj := d.obj.NewCommandQueue()
		if !obj.IsNil() {
			q = &Queue{obj: obj}
		}
	})
	if q == nil {
		return nil, ErrNoDevice
	}
	return q, nil
}

// Release frees the queue.
func (q *Queue) Release() { objcpool.With(func() { q.obj.Release() }) }

// CommandBuffer is a batch of GPU work. MPSGraph may commit the
// MTLCommandBuffer it encodes into and continue in a new one
// (commit-and-continue); the CommandBuffer then adopts the new one and keeps
// the spent ones, so Wait reports the status, error and GPU time of every
// buffer the batch ran in.
type CommandBuffer struct {
	obj   metal.CommandBufferObject
	spent []metal.CommandBufferObject // committed by MPS, retained until Release
	enc   *Encoder
	once  sync.Once
}

// CommandBuffer starts a command buffer (it retains the resources it uses).
func (q *Queue) CommandBuffer() *CommandBuffer {
	var c *CommandBuffer
	objcpool.With(func() {
		obj := q.obj.CommandBuffer()
		obj.Retain() // autoreleased: keep it past this pool
		c = &CommandBuffer{obj: obj}
	})
	return c
}

// adopt makes cur (MPSCommandBuffer's rootCommandBuffer after an encode) the
// buffer further work goes to, when MPS has moved on from the current one.
func (c *CommandBuffer) adopt(cur objc.Object) {
	if cur.IsNil() || cur.Ptr() == c.obj.Ptr() {
		return
	}
	cur.Retain()
	c.spent = append(c.spent, c.obj)
	c.obj = metal.CommandBufferObject{Object: cur}
}

// Encoder returns the open compute encoder, starting one (serial dispatch:
// each dispatch sees the writes of the ones before it).
func (c *CommandBuffer) Encoder() *Encoder {
	if c.enc == nil {
		objcpool.With(func() {
			obj := c.obj.ComputeCommandEncoderWithDispatchType(metal.DispatchTypeSerial)
			obj.Retain()
			c.enc = &Encoder{obj: obj}
		})
	}
	return c.enc
}

// EndEncoding closes the open compute encoder, if any (before committing or
// before another encoder, such as MPSGraph's, writes into the buffer).
func (c *CommandBuffer) EndEncoding() {
	if c.enc == nil {
		return
	}
	objcpool.With(func() {
		// Protocol types do not inherit in darwinkit: endEncoding lives on
		// the MTLCommandEncoder view.
		metal.CommandEncoderObject{Object: c.enc.obj.Object}.EndEncoding()
		c.enc.obj.Release()
	})
	c.enc = nil
}

// Completion is what a finished command buffer reports.
type Completion struct {
	Err     error         // nil, or a *CommandError
	GPUTime time.Duration // GPUEndTime − GPUStartTime, summed over the buffers it ran in
}

// Commit ends encoding and submits the buffer.
func (c *CommandBuffer) Commit() {
	c.EndEncoding()
	objcpool.With(func() { c.obj.Commit() })
}

// Wait blocks until the GPU has finished the committed buffer and every
// buffer MPS committed for it, then reads their status, error and GPU times
// (synchronously: a completed handler may not have run yet when
// waitUntilCompleted returns).
func (c *CommandBuffer) Wait() Completion {
	var comp Completion
	objcpool.With(func() {
		for _, cb := range append(append([]metal.CommandBufferObject{}, c.spent...), c.obj) {
			cb.WaitUntilCompleted()
			comp.GPUTime += time.Duration(float64(cb.GPUEndTime()-cb.GPUStartTime()) * float64(time.Second))
			if st := cb.Status(); st == metal.CommandBufferStatusError && comp.Err == nil {
				msg := "unknown error"
				if e := cb.Error(); !e.IsNil() {
					msg = e.LocalizedDescription()
				}
				comp.Err = &CommandError{Status: int(st), Msg: msg}
			}
		}
	})
	return comp
}

// Release drops the Go side's references (after Commit; Metal keeps the
// buffers alive until they complete).
func (c *CommandBuffer) Release() {
	c.once.Do(func() {
		objcpool.With(func() {
			for _, cb := range c.spent {
				cb.Release()
			}
			c.obj.Release()
		})
	})
}

// Encoder records compute dispatches.
type Encoder struct {
	obj metal.ComputeCommandEncoderObject
}

// SetPipeline selects the kernel of the next dispatches.
func (e *Encoder) SetPipeline(p *Pipeline) {
	objcpool.With(func() { objc.Call[objc.Void](e.obj, objc.Sel("setComputePipelineState:"), p.obj) })
}

// SetBuffer binds bytes [offset, end) of b at [[buffer(index)]].
func (e *Encoder) SetBuffer(b *Buffer, offset int64, index int) {
	objcpool.With(func() {
		objc.Call[objc.Void](e.obj, objc.Sel("setBuffer:offset:atIndex:"), b.obj, uint(offset), uint(index))
	})
}

// SetBytes copies small argument bytes (at most 4 KiB) at [[buffer(index)]].
func (e *Encoder) SetBytes(b []byte, index int) {
	objcpool.With(func() { e.obj.SetBytesLengthAtIndex(unsafe.Pointer(&b[0]), uint(len(b)), uint(index)) })
}

// SetThreadgroupMemory sizes [[threadgroup(index)]].
func (e *Encoder) SetThreadgroupMemory(n, index int) {
	objcpool.With(func() { e.obj.SetThreadgroupMemoryLengthAtIndex(uint((n+15)/16*16), uint(index)) })
}

// Dispatch launches groups threadgroups of threads threads each.
func (e *Encoder) Dispatch(groups, threads [3]int) {
	objcpool.With(func() {
		e.obj.DispatchThreadgroupsThreadsPerThreadgroup(
			metal.Size{Width: uint64(groups[0]), Height: uint64(groups[1]), Depth: uint64(groups[2])},
			metal.Size{Width: uint64(threads[0]), Height: uint64(threads[1]), Depth: uint64(threads[2])})
	})
}
