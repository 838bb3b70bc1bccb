package plan

import (
	"fmt"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/quant"
)

// Memory modes: where the DiT's weights live and in what precision. The
// text encoder runs once per prompt, resident when it fits the budget and
// the DiT is resident, else its layers streamed; the video decoder streams
// its blocks stage by stage across the tiles in the streaming modes and
// wherever its resident peak does not fit (same pixels, each block read
// once); the audio decoder loads whole. Phases run one after another; the
// DiT-resident modes keep every component loaded as the Keep policy says,
// else (and in the streaming modes) each phase releases its component
// before the next loads. A request's end-to-end peak is its largest phase
// with everything that phase holds (PlanMode).

// Mode is one memory mode.
type Mode struct {
	Name      string              // resident, resident-int8, resident-int4, streaming-int4, streaming-int8, streaming
	Quant     compute.QuantFormat // the DiT's block weights (zero: BF16)
	Residency compute.Residency   // the DiT's blocks: kept bound, or bound per forward from the checkpoint (SSD)
}

func mode(q compute.QuantFormat, r compute.Residency) Mode {
	name := r.String()
	if n := quant.Name(q); n != "" {
		name += "-" + n
	}
	return Mode{Name: name, Quant: q, Residency: r}
}

// Modes lists every mode, fastest first: resident modes compute at the
// GPU's matrix rate whatever the weight precision (a quantized GEMM
// dequantizes in its tile loads), streaming modes are bound by the SSD and
// read fewer bytes per forward the fewer bits their weights have.
func Modes() []Mode {
	return []Mode{
		mode(compute.QuantFormat{}, compute.Resident), mode(compute.Int8, compute.Resident), mode(compute.Int4, compute.Resident),
		mode(compute.Int4, compute.Streaming), mode(compute.Int8, compute.Streaming), mode(compute.QuantFormat{}, compute.Streaming),
	}
}

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if m.Name == s {
			return m, nil
		}
	}
	var names []string
	for _, m := range Modes() {
		names = append(names, m.Name)
	}
	return Mode{}, fmt.Errorf("plan: memory mode %q: want one of %s", s, strings.Join(names, ", "))
}

// QualityFloor bounds how much precision the automatic choice may trade
// for speed (the studio's Settings).
type QualityFloor string

// Quality floors.
const (
	BestQuality    QualityFloor = "best"     // BF16 weights only: resident, else streaming
	Balanced       QualityFloor = "balanced" // resident in the most bits that fit, else BF16 streaming
	FastestThatFit QualityFloor = "fastest"  // the fastest mode that fits, quantized streaming included
)

// ParseQualityFloor reads a floor ("" is Balanced).
func ParseQualityFloor(s string) (QualityFloor, error) {
	switch QualityFloor(s) {
	case "", Balanced:
		return Balanced, nil
	case BestQuality, FastestThatFit:
		return QualityFloor(s), nil
	}
	return "", fmt.Errorf("plan: quality floor %q: want best, balanced or fastest", s)
}

// Candidates are the modes the floor allows, in the order they are tried.
func (f QualityFloor) Candidates() []Mode {
	var names []string
	switch f {
	case BestQuality:
		names = []string{"resident", "streaming"}
	case FastestThatFit:
		names = []string{"resident", "resident-int8", "resident-int4", "streaming-int4", "streaming-int8", "streaming"}
	default:
		names = []string{"resident", "resident-int8", "resident-int4", "streaming"}
	}
	out := make([]Mode, len(names))
	for i, n := range names {
		out[i], _ = ParseMode(n)
	}
	return out
}

// CandidateModes are the modes the automatic choice tries, in order: the
// floor's, or, when the user fixed the weights' precision (restrict
// non-nil, `--quant`), every mode of that precision, fastest first.
func CandidateModes(floor QualityFloor, restrict *compute.QuantFormat) []Mode {
	if restrict == nil {
		return floor.Candidates()
	}
	var out []Mode
	for _, m := range Modes() {
		if m.Quant == *restrict {
			out = append(out, m)
		}
	}
	return out
}

// Phase is what one phase of a request holds at its peak.
type Phase struct {
	Name      string // text, denoise, video-decode, audio-decode
	Component string
	Residency compute.Residency
	// Storage is the phase's component: its weights and activations.
	Storage Storage
	// Held is the weights of the other components loaded during the phase
	// (ModePlan.Kept; else 0).
	Held int64
}

// Peak is everything the phase holds at its peak.
func (p Phase) Peak() int64 { return p.Storage.Peak + p.Held }

// ModePlan is a request's predicted memory in one mode.
type ModePlan struct {
	Mode   Mode
	Phases []Phase
	// Peak is the end-to-end peak: the largest phase's Peak.
	Peak int64
	// DevicePeak is the largest phase's Peak without the decoders' host
	// buffers: the storage a backend tracks.
	DevicePeak int64
	// DiT is the denoising phase's DiT storage (weights resident at its
	// peak, activations).
	DiT Storage
	// Kept is true when every component stays loaded from its first phase
	// on (and for the next request), as the Keep policy decides for the
	// DiT-resident modes; otherwise each phase releases its component
	// before the next phase loads its own.
	Kept bool
	Fits bool // Peak within the budget
}

// Keep is when a DiT-resident mode keeps every component loaded across
// the phases; the streaming modes never do.
type Keep int

// Keep policies.
const (
	// KeepNever releases each phase's component before the next phase
	// loads its own: the plan of the released model, whose components do
	// not fit a Mac together, at the lowest peak each mode allows.
	KeepNever Keep = iota
	// KeepAlways keeps them.
	KeepAlways
	// KeepWhenFits keeps them when they fit the budget together (or the
	// budget is unknown), else releases each phase's component as
	// KeepNever does: the session, which keeps the components loaded for
	// the next take where it can and otherwise runs the mode at the lowest
	// peak it allows — so a mode fits the session exactly when it fits
	// `h3studio plan`, and both choose the same mode.
	KeepWhenFits
)

// Estimates are a request's component estimates (Resident and Streaming
// storage of each) that a ModePlan's phases take. A zero Estimate (no
// Component) is a component the model lacks: it has no phase.
type Estimates struct {
	Text, DiT, Video, Audio Estimate
	// StreamVideoDecoder streams the video decoder's blocks whatever the
	// budget (videovae.Options.Residency).
	StreamVideoDecoder bool
}

// PlanMode predicts a request's phases in mode m on a device with the
// given budget (0: unknown, everything fits) and its end-to-end peak, the
// largest phase with everything it holds: the one definition of the peak
// that `h3studio plan` (PlanModes) and the session's prediction (Predict)
// share; the session follows its residency choices when it runs. The text encoder streams its layers in the streaming
// modes and wherever its resident peak does not fit; the DiT streams its
// blocks in the streaming modes; the video decoder streams its blocks in
// the streaming modes, wherever its resident peak does not fit, and when
// c.StreamVideoDecoder asks; the audio decoder loads whole.
func PlanMode(m Mode, c Estimates, budget int64, keep Keep) ModePlan {
	over := func(s Storage) bool { return budget > 0 && s.Peak > budget }
	mp := ModePlan{Mode: m}
	add := func(name string, e Estimate, streamed bool) {
		if e.Component == "" {
			return
		}
		p := Phase{Name: name, Component: e.Component, Residency: compute.Resident, Storage: e.Resident}
		if streamed {
			p.Residency, p.Storage = compute.Streaming, e.Streaming
		}
		mp.Phases = append(mp.Phases, p)
	}
	add("text", c.Text, m.Residency == compute.Streaming || over(c.Text.Resident))
	add("denoise", c.DiT, m.Residency == compute.Streaming)
	add("video-decode", c.Video, m.Residency == compute.Streaming || c.StreamVideoDecoder || over(c.Video.Resident))
	add("audio-decode", c.Audio, false)
	for _, p := range mp.Phases {
		if p.Name == "denoise" {
			mp.DiT = p.Storage
		}
	}
	mp.Kept = m.Residency == compute.Resident && (keep == KeepAlways || keep == KeepWhenFits)
	if mp.Kept {
		var weights int64
		for _, p := range mp.Phases {
			weights += p.Storage.Weights
		}
		for i := range mp.Phases {
			mp.Phases[i].Held = weights - mp.Phases[i].Storage.Weights
		}
	}
	for _, p := range mp.Phases {
		mp.Peak = max(mp.Peak, p.Peak())
		mp.DevicePeak = max(mp.DevicePeak, p.Peak()-p.Storage.Host)
	}
	mp.Fits = budget <= 0 || mp.Peak <= budget
	if keep == KeepWhenFits && mp.Kept && !mp.Fits {
		return PlanMode(m, c, budget, KeepNever)
	}
	return mp
}

// PlanModes predicts q's phases in each of modes (PlanMode) for the
// released model.
func PlanModes(q Query, budget int64, modes []Mode) ([]ModePlan, error) {
	return planModes(q, budget, modes, KeepNever)
}

// planModes is PlanModes under the Keep policy keep.
func planModes(q Query, budget int64, modes []Mode, keep Keep) ([]ModePlan, error) {
	byQuant := map[compute.QuantFormat]Estimates{}
	var out []ModePlan
	for _, m := range modes {
		c, ok := byQuant[m.Quant]
		if !ok {
			qq := q
			qq.Quant = m.Quant
			list, err := Run(qq, "text-encoder", "dit", "video-vae", "audio-vae")
			if err != nil {
				return nil, err
			}
			c = Estimates{Text: list[0], DiT: list[1], Video: list[2], Audio: list[3]}
			byQuant[m.Quant] = c
		}
		out = append(out, PlanMode(m, c, budget, keep))
	}
	return out, nil
}

// Choice is the automatic choice of a memory mode for a device.
type Choice struct {
	DeviceBytes     int64 // physical memory
	WorkingSetBytes int64 // the GPU's recommended working set (given, or DefaultWorkingSet)
	BudgetBytes     int64 // working set less headroom (Budget)
	Floor           QualityFloor
	Chosen          ModePlan
	Why             string
	Modes           []ModePlan // every candidate, in the order tried
}

// DefaultWorkingSet estimates recommendedMaxWorkingSetSize where it is not
// known (planning for another Mac): two thirds of memory up to 32 GiB, three
// quarters above — the classic macOS rule, at or below what recent macOS
// releases report (0.74 at 16–24 GB, 0.81–0.84 at 64–128 GB;
// research/apple-silicon.md §2). On a Mac the Metal device's own value is used.
func DefaultWorkingSet(deviceBytes int64) int64 {
	if deviceBytes <= 32<<30 {
		return deviceBytes * 2 / 3
	}
	return deviceBytes * 3 / 4
}

// Budget is the working set less headroom for the app, the window server
// and allocator slack: 5 % (0.53 GiB on a 16 GB Mac's working set).
func Budget(workingSet int64) int64 {
	return workingSet - workingSet/20
}

// WorkingSet is the working set the choice plans for on a device that
// reports workingSet (Metal's recommendedMaxWorkingSetSize; 0: unknown, then
// DefaultWorkingSet of deviceBytes), never more than its memory.
func WorkingSet(deviceBytes, workingSet int64) int64 {
	if workingSet <= 0 {
		workingSet = DefaultWorkingSet(deviceBytes)
	}
	if deviceBytes > 0 {
		workingSet = min(workingSet, deviceBytes)
	}
	return workingSet
}

// Choose picks the first mode the floor allows (only modes of quantization
// restrict, when restrict is non-nil) whose end-to-end peak fits the budget
// of a device with deviceBytes of memory and the given working set (0: the
// DefaultWorkingSet), predicting the released model's phases (PlanModes);
// Pick makes the choice.
func Choose(q Query, deviceBytes, workingSet int64, floor QualityFloor, restrict *compute.QuantFormat) (Choice, error) {
	if deviceBytes <= 0 {
		return Choice{}, fmt.Errorf("plan: device memory %d bytes", deviceBytes)
	}
	workingSet = WorkingSet(deviceBytes, workingSet)
	c := Choice{DeviceBytes: deviceBytes, WorkingSetBytes: workingSet, BudgetBytes: Budget(workingSet), Floor: floor}
	mps, err := PlanModes(q, c.BudgetBytes, CandidateModes(floor, restrict))
	if err != nil {
		return c, err
	}
	c.Modes = mps
	c.Chosen, c.Why = Pick(mps, workingSet, floor, restrict)
	return c, nil
}

// Pick is the automatic choice of a memory mode, for `h3studio plan` and
// the session alike: of the candidates' predictions (in the order
// CandidateModes tries them), the first whose end-to-end peak fits the
// Budget of the working set; when none fits, the one with the lowest peak,
// said to swap. It returns the choice and why, and sets each
// prediction's Fits.
func Pick(mps []ModePlan, workingSet int64, floor QualityFloor, restrict *compute.QuantFormat) (ModePlan, string) {
	if len(mps) == 0 {
		return ModePlan{}, "no memory mode to choose from"
	}
	budget := Budget(workingSet)
	gib := func(b int64) string {
		if b < 1<<30 {
			return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
		}
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	for i := range mps {
		mps[i].Fits = mps[i].Peak <= budget
	}
	var skipped []string
	for _, mp := range mps {
		if mp.Fits {
			peak := gib(mp.Peak)
			if len(mp.Phases) > 0 {
				peak += ", " + largest(mp).Name
			}
			why := fmt.Sprintf("%s is the fastest mode %s whose end-to-end peak (%s) fits the budget of %s (working set %s less headroom)",
				mp.Mode.Name, floorText(floor, restrict), peak, gib(budget), gib(workingSet))
			if len(skipped) > 0 {
				why += "; " + strings.Join(skipped, ", ") + " would not fit"
			}
			return mp, why
		}
		skipped = append(skipped, fmt.Sprintf("%s (%s)", mp.Mode.Name, gib(mp.Peak)))
	}
	best := mps[0]
	for _, mp := range mps[1:] {
		if mp.Peak < best.Peak {
			best = mp
		}
	}
	return best, fmt.Sprintf("no mode %s fits the budget of %s: %s has the lowest end-to-end peak (%s) and will swap",
		floorText(floor, restrict), gib(budget), best.Mode.Name, gib(best.Peak))
}

// floorText is the clause naming what limits the candidates: "int8
// weights allow" (--quant), "the balanced quality floor allows".
func floorText(f QualityFloor, restrict *compute.QuantFormat) string {
	if restrict != nil {
		if n := quant.Name(*restrict); n != "" {
			return n + " weights allow"
		}
		return "BF16 weights allow"
	}
	return "the " + string(f) + " quality floor allows"
}

func largest(mp ModePlan) Phase {
	p := mp.Phases[0]
	for _, x := range mp.Phases[1:] {
		if x.Peak() > p.Peak() {
			p = x
		}
	}
	return p
}
