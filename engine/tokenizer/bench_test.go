package tokenizer

import (
	"testing"
)

// BenchmarkEncode: Encode over the parity corpus on the real Qwen3
// vocabulary; reports tokens/s (warm per-piece cache, as in a session).
func BenchmarkEncode(b *testing.B) {
	tok := loadQwen3(b)
	corpus := buildCorpus(corpusSeed)
	tokens := 0
	var ids []int32
	for _, s := range corpus { // warm-up, as the JS benchmark does
		ids, _ = tok.AppendEncode(ids[:0], s)
		tokens += len(ids)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range corpus {
			ids, _ = tok.AppendEncode(ids[:0], s)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkEncodeCold is BenchmarkEncode with the per-piece cache cleared
// before every pass (every piece goes through BPE).
func BenchmarkEncodeCold(b *testing.B) {
	tok := loadQwen3(b)
	corpus := buildCorpus(corpusSeed)
	tokens := 0
	var ids []int32
	for _, s := range corpus {
		ids, _ = tok.AppendEncode(ids[:0], s)
		tokens += len(ids)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tok.model.mu.Lock()
		clear(tok.model.cache)
		tok.model.mu.Unlock()
		for _, s := range corpus {
			ids, _ = tok.AppendEncode(ids[:0], s)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkTokenizersJS runs the reference (tokenizers.js under node) over
// the same corpus, one warm-up pass then b.N timed passes, and reports its
// tokens/s as node measured them.
func BenchmarkTokenizersJS(b *testing.B) {
	dir := qwen3Dir(b)
	var res struct {
		Tokens          float64 `json:"tokens"`
		Seconds         float64 `json:"seconds"`
		TokensPerSecond float64 `json:"tokens_per_second"`
	}
	runTokenizersJS(b, dir, buildCorpus(corpusSeed), max(b.N, 1), &res)
	b.ReportMetric(res.TokensPerSecond, "tokens/s")
}

// BenchmarkLoad: reading and indexing the real tokenizer.json (11 MB) and
// tokenizer_config.json.
func BenchmarkLoad(b *testing.B) {
	dir := qwen3Dir(b)
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
