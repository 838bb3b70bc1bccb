package tokenizer

import (
	"container/heap"
	"sync"
)

// merge is one BPE merge rule: the pair's rank (its line in merges, 0-based)
// and the id of the merged symbol.
type merge struct {
	rank uint32
	id   int32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// bpeModel is the BPE model of tokenizer.json: vocabulary, merges and the
// id of every single byte-level character.
type bpeModel struct {
	vocab        map[string]int32
	merges       map[uint64]merge
	byteID       [256]int32
	ignoreMerges bool

	mu    sync.RWMutex
	cache map[string][]int32
}

const (
	// Pieces of at most maxCachedPiece bytes are cached, up to
	// maxCacheEntries of them (the cache is then cleared and refilled).
	maxCachedPiece  = 256
	maxCacheEntries = 1 << 17
	// Words of more than heapThreshold symbols are merged with a heap
	// (O(n log n)); shorter ones with a rescan per merge (faster when small).
	heapThreshold = 48
)

// encodePiece appends the ids of one pre-tokenized piece (raw UTF-8 bytes).
func (m *bpeModel) encodePiece(piece string, out []int32) []int32 {
	if len(piece) <= maxCachedPiece {
		m.mu.RLock()
		ids, ok := m.cache[piece]
		m.mu.RUnlock()
		if ok {
			return append(out, ids...)
		}
	}
	start := len(out)
	out = m.bpe(piece, out)
	if len(piece) <= maxCachedPiece {
		ids := append([]int32(nil), out[start:]...)
		m.mu.Lock()
		if len(m.cache) >= maxCacheEntries {
			clear(m.cache)
		}
		m.cache[piece] = ids
		m.mu.Unlock()
	}
	return out
}

func (m *bpeModel) bpe(piece string, out []int32) []int32 {
	if m.ignoreMerges {
		if id, ok := m.vocab[byteLevel(piece)]; ok {
			return append(out, id)
		}
	}
	syms := make([]int32, len(piece))
	for i := 0; i < len(piece); i++ {
		syms[i] = m.byteID[piece[i]]
	}
	if len(syms) > heapThreshold {
		return append(out, m.mergeHeap(syms)...)
	}
	return append(out, m.mergeScan(syms)...)
}

// mergeScan applies merges one at a time, always the lowest-ranked adjacent
// pair, the leftmost one when the same pair occurs several times.
func (m *bpeModel) mergeScan(syms []int32) []int32 {
	for len(syms) > 1 {
		best, at := merge{rank: ^uint32(0)}, -1
		for k := 0; k+1 < len(syms); k++ {
			if mg, ok := m.merges[pairKey(syms[k], syms[k+1])]; ok && mg.rank < best.rank {
				best, at = mg, k
			}
		}
		if at < 0 {
			break
		}
		syms[at] = best.id
		syms = append(syms[:at+1], syms[at+2:]...)
	}
	return syms
}

// mergeHeap is mergeScan for long words: the same merge order, with a
// priority queue of candidate pairs ordered by (rank, position) over a
// doubly linked list of symbols. Stale candidates are skipped when popped.
func (m *bpeModel) mergeHeap(syms []int32) []int32 {
	n := len(syms)
	prev := make([]int, n)
	next := make([]int, n)
	alive := make([]bool, n)
	for i := range syms {
		prev[i], next[i], alive[i] = i-1, i+1, true
	}
	next[n-1] = -1
	q := &pairQueue{}
	push := func(i int) {
		j := next[i]
		if j < 0 {
			return
		}
		if mg, ok := m.merges[pairKey(syms[i], syms[j])]; ok {
			heap.Push(q, candidate{rank: mg.rank, pos: i, left: syms[i], right: syms[j], id: mg.id})
		}
	}
	for i := 0; i < n-1; i++ {
		push(i)
	}
	for q.Len() > 0 {
		c := heap.Pop(q).(candidate)
		i := c.pos
		if !alive[i] || syms[i] != c.left {
			continue
		}
		j := next[i]
		if j < 0 || syms[j] != c.right {
			continue
		}
		syms[i] = c.id
		alive[j] = false
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		if prev[i] >= 0 {
			push(prev[i])
		}
		push(i)
	}
	out := syms[:0]
	for i := 0; i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

type candidate struct {
	rank        uint32
	pos         int
	left, right int32
	id          int32
}

type pairQueue []candidate

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(a, b int) bool {
	if q[a].rank != q[b].rank {
		return q[a].rank < q[b].rank
	}
	return q[a].pos < q[b].pos
}
func (q pairQueue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(candidate)) }
func (q *pairQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
