package engine_test

import (
	"context"
	"errors"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestTooLittleDeviceMemory: a device that runs out of memory in the chosen
// mode (here a backend whose allocations stop at a few megabytes, as the
// Metal backend's stop at the GPU's working set) stops the generation
// cleanly: an error that says which allocation failed (*compute.AllocError),
// no panic, the output aborted with nothing written, and the session still
// usable afterwards on a device with room.
func TestTooLittleDeviceMemory(t *testing.T) {
	for _, mode := range []engine.MemoryMode{engine.MemoryResident, engine.MemoryStreaming} {
		t.Run(string(mode), func(t *testing.T) {
			s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: cpu.New(cpu.Options{MemoryLimit: 2 << 20})})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := base("A lighthouse at night.", 5)
			r.Memory = mode
			sink := &recSink{}
			_, err = s.Generate(context.Background(), r, sink, nil)
			var ae *compute.AllocError
			if !errors.As(err, &ae) {
				t.Fatalf("want an allocation error, got %v", err)
			}
			t.Logf("%s: %v", mode, err)
			if sink.aborts != 1 || sink.closes != 0 || len(sink.Frames) != 0 {
				t.Errorf("sink: %d aborts, %d closes, %d frames kept", sink.aborts, sink.closes, len(sink.Frames))
			}
		})
	}
	// The same request on a device with room still works in a new session.
	generate(t, openSession(t), base("A lighthouse at night.", 5))
}
