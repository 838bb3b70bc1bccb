package layout

import (
	"math"
	"sort"
)

// KeyframeNoiseLevel is the timestep condition rows are noised to and held
// at (t = 0.999, i.e. σ ≈ 0.001).
const KeyframeNoiseLevel = 0.999

// RowTimesteps assigns every row of l its timestep for one forward and
// reduces them to the transformer's (timestep, timestep_indices) pair, as
// MiniMaxH3SetTimestepsStep.build_row_timesteps does:
//
//	text rows, generated video rows   tVideo
//	generated audio rows              tAudio
//	video condition/reference rows    max(tVideo, 0.999) (as float32)
//	audio reference rows              1.0
//
// It returns the distinct values sorted ascending and, per row, the index of
// its value. There are at most four distinct values.
func RowTimesteps(l *Layout, tVideo, tAudio float32) (timesteps []float32, indices []int64) {
	condVideo := float32(math.Max(float64(tVideo), KeyframeNoiseLevel))
	row := make([]float32, l.Rows())
	for i := range row {
		row[i] = tVideo
	}
	for _, r := range l.VideoIndices[:l.ConditionVideoRows] {
		row[r] = condVideo
	}
	for _, r := range l.AudioIndices[l.ConditionAudioRows:] {
		row[r] = tAudio
	}
	for _, r := range l.AudioIndices[:l.ConditionAudioRows] {
		row[r] = 1.0
	}
	set := map[float32]bool{}
	for _, v := range row {
		set[v] = true
	}
	for v := range set {
		timesteps = append(timesteps, v)
	}
	sort.Slice(timesteps, func(i, j int) bool { return timesteps[i] < timesteps[j] })
	pos := make(map[float32]int64, len(timesteps))
	for i, v := range timesteps {
		pos[v] = int64(i)
	}
	indices = make([]int64, len(row))
	for i, v := range row {
		indices[i] = pos[v]
	}
	return timesteps, indices
}
