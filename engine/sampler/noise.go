package sampler

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"h3studio/engine/layout"
)

// Source selects a noise generator.
type Source string

// Noise sources.
const (
	Portable Source = "portable"
	H3C      Source = "h3c"
)

// DefaultSeed is the seed used when a request gives none.
const DefaultSeed uint64 = 42

// ParseSource parses a Source name ("" means Portable).
func ParseSource(s string) (Source, error) {
	switch Source(s) {
	case "", Portable:
		return Portable, nil
	case H3C:
		return H3C, nil
	}
	return "", fmt.Errorf("sampler: unknown noise source %q (want %q or %q)", s, Portable, H3C)
}

// Stream is a sequence of standard normal float32 values. A Stream is used
// from one goroutine at a time.
type Stream interface {
	// Fill writes the next len(dst) values.
	Fill(dst []float32)
}

// NewStream returns a stream of src seeded with seed.
func NewStream(src Source, seed uint64) (Stream, error) {
	switch src {
	case "", Portable:
		return &portableStream{seed: seed}, nil
	case H3C:
		return newPCG(seed), nil
	}
	return nil, fmt.Errorf("sampler: unknown noise source %q", src)
}

const splitMixGamma = 0x9e3779b97f4a7c15

func splitMix(seed, counter uint64) uint64 {
	z := seed + (counter+1)*splitMixGamma
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// portablePair returns stream values 2j and 2j+1.
func portablePair(seed, j uint64) (float32, float32) {
	a, b := splitMix(seed, 2*j), splitMix(seed, 2*j+1)
	u1 := float64((a>>11)+1) * 0x1p-53
	u2 := float64(b>>11) * 0x1p-53
	z0, z1 := boxMuller(u1, u2)
	return float32(z0), float32(z1)
}

type portableStream struct {
	seed uint64
	pos  uint64 // index of the next value
}

// parallelMin is the draw size from which Fill splits the work.
const parallelMin = 1 << 16

func (s *portableStream) Fill(dst []float32) {
	start := s.pos
	s.pos += uint64(len(dst))
	workers := runtime.GOMAXPROCS(0)
	if len(dst) < parallelMin || workers < 2 {
		fillPortable(dst, s.seed, start)
		return
	}
	chunk := (len(dst) + workers - 1) / workers
	chunk += chunk % 2 // keep pairs together within a chunk where possible
	var wg sync.WaitGroup
	for lo := 0; lo < len(dst); lo += chunk {
		hi := min(lo+chunk, len(dst))
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fillPortable(dst[lo:hi], s.seed, start+uint64(lo))
		}(lo, hi)
	}
	wg.Wait()
}

// fillPortable writes stream values first, first+1, … into dst.
func fillPortable(dst []float32, seed, first uint64) {
	i := 0
	if first%2 == 1 && len(dst) > 0 {
		_, z1 := portablePair(seed, first/2)
		dst[0] = z1
		i = 1
	}
	j := (first + uint64(i)) / 2
	for ; i+1 < len(dst); i += 2 {
		dst[i], dst[i+1] = portablePair(seed, j)
		j++
	}
	if i < len(dst) {
		dst[i], _ = portablePair(seed, j)
	}
}

// pcg is h3.c's h3_rng.
type pcg struct {
	state, inc uint64
	spare      float32
	hasSpare   bool
}

func newPCG(seed uint64) *pcg {
	g := &pcg{inc: seed<<1 | 1}
	g.u32()
	g.state += seed ^ 0x9e3779b97f4a7c15
	g.u32()
	return g
}

func (g *pcg) u32() uint32 {
	old := g.state
	g.state = old*6364136223846793005 + g.inc
	shifted := uint32(((old >> 18) ^ old) >> 27)
	rot := uint32(old >> 59)
	return shifted>>rot | shifted<<((-rot)&31)
}

func (g *pcg) normal() float32 {
	if g.hasSpare {
		g.hasSpare = false
		return g.spare
	}
	u1 := (float64(g.u32()) + 1.0) / 4294967297.0
	u2 := (float64(g.u32()) + 0.5) / 4294967296.0
	r := math.Sqrt(-2.0 * portableLog(u1))
	s, c := sinCosTurns(u2)
	g.spare, g.hasSpare = float32(mul(r, s)), true
	return float32(mul(r, c))
}

func (g *pcg) Fill(dst []float32) {
	for i := range dst {
		dst[i] = g.normal()
	}
}

// NoiseSpec describes the noise tensors of one request.
type NoiseSpec struct {
	// Conditions lists the latent shape [C, T, h, w] of each visual
	// condition (fl2va keyframes, ref2va image and video references) in
	// packed order.
	Conditions []layout.VideoShape
	// Video is the target latent [C, T, H, W].
	Video layout.VideoShape
	// AudioLatents and AudioChannels give the audio rows [2·A, C_a].
	AudioLatents, AudioChannels int
	// Patch is the DiT patch (zero: released), used by the H3C order only.
	Patch layout.Patch
}

// Noise is a request's initial noise.
type Noise struct {
	Conditions [][]float32 // each [C, T, h, w], to be mixed with its clean latent and patchified
	Video      []float32   // [C, T, H, W], to be patchified
	AudioRows  []float32   // [2A, C_a], already in row layout
}

// InitialNoise draws a request's noise from seed in the source's order.
func InitialNoise(src Source, seed uint64, spec NoiseSpec) (*Noise, error) {
	if spec.Video.Len() <= 0 || spec.AudioLatents < 0 || spec.AudioChannels < 1 {
		return nil, fmt.Errorf("sampler: noise spec video %v, audio %d×%d is empty or negative", spec.Video, spec.AudioLatents, spec.AudioChannels)
	}
	n := &Noise{
		Video:     make([]float32, spec.Video.Len()),
		AudioRows: make([]float32, layout.AudioChannels*spec.AudioLatents*spec.AudioChannels),
	}
	for i, c := range spec.Conditions {
		if c.Len() <= 0 {
			return nil, fmt.Errorf("sampler: condition %d has an empty latent shape %v", i, c)
		}
		n.Conditions = append(n.Conditions, make([]float32, c.Len()))
	}
	switch src {
	case "", Portable:
		s, _ := NewStream(Portable, seed)
		for _, c := range n.Conditions {
			s.Fill(c)
		}
		s.Fill(n.Video)
		s.Fill(n.AudioRows)
	case H3C:
		newPCG(seed).Fill(n.Video)
		// h3.c keeps audio as [C_a][2][A]; reorder into rows s·A + k.
		a := make([]float32, len(n.AudioRows))
		newPCG(seed).Fill(a)
		A, C := spec.AudioLatents, spec.AudioChannels
		for c := 0; c < C; c++ {
			for s := 0; s < layout.AudioChannels; s++ {
				for k := 0; k < A; k++ {
					n.AudioRows[(s*A+k)*C+c] = a[(c*layout.AudioChannels+s)*A+k]
				}
			}
		}
		for i, c := range spec.Conditions {
			rows := make([]float32, c.Len())
			newPCG(seed).Fill(rows)
			if _, err := layout.Unpatchify(n.Conditions[i], rows, c, spec.Patch); err != nil {
				return nil, fmt.Errorf("sampler: condition %d: %w", i, err)
			}
		}
	default:
		return nil, fmt.Errorf("sampler: unknown noise source %q", src)
	}
	return n, nil
}
