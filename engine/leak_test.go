package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
)

// TestSessionFreesEverything checks the backend's ledger after a take and
// after a take cancelled inside each phase, in each memory mode: once the
// session is closed nothing is left allocated or mapped. The CPU backend
// returns large storage to the OS only at Free, so storage a path forgets
// to free would stay in the process for good.
func TestSessionFreesEverything(t *testing.T) {
	phases := []engine.Phase{"", engine.PhaseText, engine.PhaseDenoise, engine.PhaseVideoDecode, engine.PhaseAudioDecode}
	for _, m := range []engine.MemoryMode{engine.MemoryResident, engine.MemoryStreaming} {
		for _, ph := range phases {
			name := fmt.Sprintf("%s/%s", m, ph)
			if ph == "" {
				name = fmt.Sprintf("%s/finished", m)
			}
			t.Run(name, func(t *testing.T) {
				be := cpu.New(cpu.Options{})
				s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: be})
				if err != nil {
					t.Fatal(err)
				}
				r := base("A lighthouse in a storm.", 3)
				r.Memory = m
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cancelled := false
				_, err = s.Generate(ctx, r, &recSink{}, func(e engine.Event) {
					if ph != "" && e.Phase == ph && e.Done > 0 && !cancelled {
						cancelled = true
						cancel()
					}
				})
				switch {
				case ph == "" && err != nil:
					t.Fatal(err)
				case ph != "" && !cancelled:
					t.Fatalf("the take never reached a step of %s (err %v)", ph, err)
				case ph != "" && !errors.Is(err, context.Canceled):
					t.Fatalf("cancelled in %s: %v", ph, err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if st := be.Stats(); st.LiveBytes != 0 || st.MappedBytes != 0 {
					t.Errorf("after Close: %d B allocated and %d B mapped are left", st.LiveBytes, st.MappedBytes)
				}
			})
		}
	}
}
