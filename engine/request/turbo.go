package request

import (
	"os"

	"h3studio/engine/lora"
)

// LoRA is one LoRA of a request: a file, its strength and optionally the
// alpha to assume (package lora; docs/lora.md).
type LoRA = lora.Use

// AppliedLoRA records what a LoRA did to a take (path, sha256, strength,
// alpha and its source, what it could not apply).
type AppliedLoRA = lora.Applied

// Turbo presets: the distilled lightx2v / larryvrh Turbo LoRAs run 4 to 8
// Euler passes without CFG, video shift 12 and audio shift 3 when trained
// at 544p, video shift 6 at 768p (shared/research/formats-and-peers.md
// §1.3). Steps counts passes, as h3.c's --steps does: diffusers' and
// SGLang's num_inference_steps counts the N+1 sigma grid points instead,
// so their 5 is a Turbo 4.
var TurboSteps = []int{4, 6, 8}

// Turbo shifts by canvas class.
const (
	TurboVideoShift544 = 12.0
	TurboVideoShift768 = 6.0
	TurboAudioShift    = 3.0
)

// turboShifts are the shifts of the Turbo preset for a w×h canvas: the
// 768p class (1344×768 and its portrait, anything with a short edge of
// 700 or more) uses shift 6, smaller canvases the 544p training's 12.
func turboShifts(w, h int) (video, audio float64) {
	if min(w, h) >= 700 {
		return TurboVideoShift768, TurboAudioShift
	}
	return TurboVideoShift544, TurboAudioShift
}

// resolveLoRAs checks the request's LoRAs without reading their weights:
// each file exists and is a regular file, strengths are finite.
func resolveLoRAs(r Request) error {
	for i, l := range r.LoRAs {
		if l.Path == "" {
			return reqErr("lora", "LoRA %d names no file", i+1)
		}
		st, err := os.Stat(l.Path)
		if err != nil {
			return reqErr("lora", "%s: %v", l.Path, err)
		}
		if !st.Mode().IsRegular() {
			return reqErr("lora", "%s is not a file", l.Path)
		}
		if _, err := lora.ParseUse(l.String()); err != nil {
			return reqErr("lora", "%v", err)
		}
	}
	return nil
}
