package dit

import (
	"context"
	"fmt"
	"time"

	"h3studio/engine/compute"
)

// ForwardProfile is what one Forward cost on its backend (Options.Profile;
// h3studio generate --profile prints a ProfileSummary of them).
type ForwardProfile struct {
	Blocks      int64 // blocks run (0 for a core-reuse forward)
	Dispatches  int64 // kernels recorded (compute.Stats.Dispatches)
	Submissions int64 // command buffers committed (Metal) or syncs (CPU)
	FLOPs       float64
	// Wall is the time from the call to the completion of its device work.
	Wall time.Duration
	// DeviceTime is the time the device spent on the forward's kernels
	// (Metal: command-buffer GPU time); on the CPU backend, whose kernels
	// run synchronously, the wall time.
	DeviceTime time.Duration
	// PeakBytes is the peak tracked storage (weights and activations)
	// during the forward: the backend's peak counter is reset when a
	// profiled forward starts. LiveBytes is the storage at its end.
	PeakBytes, LiveBytes int64
}

// profiler measures one forward when Options.Profile is set.
type profiler struct {
	m      *Model
	start  time.Time
	st0    compute.Stats
	blocks int64
}

func (m *Model) startProfile() *profiler {
	if m.opts.Profile == nil {
		return nil
	}
	p := &profiler{m: m, start: time.Now(), blocks: m.blocksRun.Load()}
	m.b.ResetPeak()
	p.st0 = m.b.Stats()
	return p
}

// finish waits for the forward's work and reports its profile; an error of
// the device work is the forward's error.
func (p *profiler) finish() error {
	if p == nil {
		return nil
	}
	if err := p.m.b.Sync(context.Background()); err != nil {
		return fmt.Errorf("dit: forward: %w", err)
	}
	st := p.m.b.Stats()
	fp := ForwardProfile{
		Blocks:      p.m.blocksRun.Load() - p.blocks,
		Dispatches:  st.Dispatches - p.st0.Dispatches,
		Submissions: st.Submissions - p.st0.Submissions,
		FLOPs:       st.FLOPs - p.st0.FLOPs,
		Wall:        time.Since(p.start),
		DeviceTime:  st.DeviceTime - p.st0.DeviceTime,
		PeakBytes:   st.PeakBytes,
		LiveBytes:   st.LiveBytes,
	}
	if p.m.b.Device().Backend == "cpu" {
		fp.DeviceTime = fp.Wall
	}
	p.m.opts.Profile(fp)
	return nil
}

// ProfileSummary aggregates the profiles of a request's forwards. Its Add
// is an Options.Profile function; it is not safe for concurrent use.
type ProfileSummary struct {
	Forwards                        int
	Blocks, Dispatches, Submissions int64
	FLOPs                           float64
	Wall, DeviceTime                time.Duration
	PeakBytes                       int64 // the largest forward peak
	MaxDispatches                   int64 // of one forward
	MinDeviceTime, MaxDeviceTime    time.Duration
}

// Add records one forward.
func (s *ProfileSummary) Add(p ForwardProfile) {
	if s.Forwards == 0 || p.DeviceTime < s.MinDeviceTime {
		s.MinDeviceTime = p.DeviceTime
	}
	s.Forwards++
	s.Blocks += p.Blocks
	s.Dispatches += p.Dispatches
	s.Submissions += p.Submissions
	s.FLOPs += p.FLOPs
	s.Wall += p.Wall
	s.DeviceTime += p.DeviceTime
	s.PeakBytes = max(s.PeakBytes, p.PeakBytes)
	s.MaxDispatches = max(s.MaxDispatches, p.Dispatches)
	s.MaxDeviceTime = max(s.MaxDeviceTime, p.DeviceTime)
}

// String is one line per request, e.g. "20 DiT forwards: 1110 dispatches
// and 1.350 s device time per forward (min 1.310 s, max 1.520 s), 61.20
// TFLOPS, 1000 blocks, 20 submissions, peak 36.32 GiB".
func (s ProfileSummary) String() string {
	if s.Forwards == 0 {
		return "no DiT forwards"
	}
	n := float64(s.Forwards)
	per := time.Duration(float64(s.DeviceTime) / n)
	rate := ""
	if s.DeviceTime > 0 {
		rate = fmt.Sprintf(", %.2f TFLOPS", s.FLOPs/s.DeviceTime.Seconds()/1e12)
	}
	return fmt.Sprintf("%d DiT forwards: %.0f dispatches and %.3f s device time per forward (min %.3f s, max %.3f s)%s, %d blocks, %d submissions, peak %s",
		s.Forwards, float64(s.Dispatches)/n, per.Seconds(), s.MinDeviceTime.Seconds(), s.MaxDeviceTime.Seconds(), rate,
		s.Blocks, s.Submissions, bytesString(s.PeakBytes))
}

func bytesString(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
