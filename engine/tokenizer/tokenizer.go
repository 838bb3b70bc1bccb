package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// AddedToken is a token matched in the raw text before the BPE model runs:
// an added_tokens entry of tokenizer.json or a token tokenizer_config.json
// declares. The flags have Hugging Face's meaning.
type AddedToken struct {
	ID      int
	Content string
	// Special tokens are control tokens (<|im_end|>, <|vision_start|>, H3's
	// <d> …); Decode keeps them, SkipSpecial-style filtering is the caller's.
	Special bool
	// Normalized tokens are matched in the normalized (formNFC) text, the
	// others in the raw text.
	Normalized bool
	// LStrip / RStrip: the token absorbs the white space on its left /
	// right. SingleWord: the token only matches when no word character
	// touches it.
	LStrip, RStrip, SingleWord bool
}

// Tokenizer is a Qwen2 byte-level BPE tokenizer. It is safe for concurrent
// use.
type Tokenizer struct {
	model     *bpeModel
	vocabSize int // entries of model.vocab
	idToToken []string
	unkID     int

	normForms []normForm

	added     []AddedToken   // in declaration order
	addedByID map[int]int    // id -> index in added
	byContent map[string]int // content -> index in added
	raw, nrm  *matcher       // non-normalized / normalized added tokens

	modelMaxLength int
}

// InvalidUTF8Error reports text that is not valid UTF-8.
type InvalidUTF8Error struct {
	Offset int // byte offset of the first invalid byte
}

func (e *InvalidUTF8Error) Error() string {
	return fmt.Sprintf("tokenizer: text is not valid UTF-8 (first invalid byte at offset %d)", e.Offset)
}

// Encode tokenizes text without adding any special token (H3 never adds
// BOS/EOS) and returns its token ids.
func (t *Tokenizer) Encode(text string) ([]int, error) {
	ids, err := t.encode(text, nil)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out, nil
}

// AppendEncode is Encode appending int32 ids to dst (no per-call
// conversion; for hot loops).
func (t *Tokenizer) AppendEncode(dst []int32, text string) ([]int32, error) {
	return t.encode(text, dst)
}

func (t *Tokenizer) encode(text string, out []int32) ([]int32, error) {
	if !utf8.ValidString(text) {
		off := 0
		for off < len(text) {
			r, n := utf8.DecodeRuneInString(text[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return out, &InvalidUTF8Error{Offset: off}
	}
	var ends []int
	t.raw.split(text, func(s string, tok int) {
		if tok >= 0 {
			out = append(out, int32(t.added[tok].ID))
			return
		}
		t.nrm.split(t.normalize(s), func(s string, tok int) {
			if tok >= 0 {
				out = append(out, int32(t.added[tok].ID))
				return
			}
			ends = splitQwen2(s, ends[:0])
			start := 0
			for _, end := range ends {
				out = t.model.encodePiece(s[start:end], out)
				start = end
			}
		})
	})
	return out, nil
}

// Decode turns ids back into text, as Hugging Face's ByteLevel decoder does
// (special tokens included). Byte sequences that are not valid UTF-8 (a
// multi-byte character cut between ids) become U+FFFD.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var b []byte
	for i, id := range ids {
		tok, ok := t.Token(id)
		if !ok {
			return "", fmt.Errorf("tokenizer: decode: ids[%d] = %d is not a token id (vocabulary size %d)", i, id, len(t.idToToken))
		}
		var isBytes bool
		if b, isBytes = unByteLevel(tok, b); !isBytes {
			b = append(b, tok...)
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// Token returns the token string of id (byte-level characters for vocabulary
// tokens, the literal content for added tokens).
func (t *Tokenizer) Token(id int) (string, bool) {
	if k, ok := t.addedByID[id]; ok {
		return t.added[k].Content, true
	}
	if id < 0 || id >= len(t.idToToken) || t.idToToken[id] == "" {
		return "", false
	}
	return t.idToToken[id], true
}

// TokenID returns the id of an added token's content (e.g. "<|vision_start|>")
// or of a vocabulary token string.
func (t *Tokenizer) TokenID(content string) (int, bool) {
	if k, ok := t.byContent[content]; ok {
		return t.added[k].ID, true
	}
	if id, ok := t.model.vocab[content]; ok {
		return int(id), true
	}
	return 0, false
}

// AddedTokens returns every added token, ordered by id.
func (t *Tokenizer) AddedTokens() []AddedToken {
	out := append([]AddedToken(nil), t.added...)
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// IsSpecial reports whether id is a special added token.
func (t *Tokenizer) IsSpecial(id int) bool {
	k, ok := t.addedByID[id]
	return ok && t.added[k].Special
}

// Len is the number of ids (vocabulary plus added tokens): the largest id + 1.
func (t *Tokenizer) Len() int { return len(t.idToToken) }

// ModelMaxLength is tokenizer_config.json's model_max_length, or -1 when the
// configuration does not give one.
func (t *Tokenizer) ModelMaxLength() int { return t.modelMaxLength }

// UnicodeVersion is the Unicode version of the pre-tokenizer's character
// classes.
func UnicodeVersion() string { return unicodeVersion }

// nextID is the id Hugging Face gives a new added token whose content is not
// in the vocabulary yet.
func (t *Tokenizer) nextID() int {
	if len(t.added) == 0 {
		return t.vocabSize
	}
	maxID := -1
	for _, a := range t.added {
		maxID = max(maxID, a.ID)
	}
	if maxID >= t.vocabSize || t.vocabSize == 0 {
		return maxID + 1
	}
	return t.vocabSize
}

// declare adds (or re-declares) an added token. withID: tok.ID is the id
// the file states, which must be the id Hugging Face would give it;
// otherwise tok.ID is ignored and that id is assigned.
func (t *Tokenizer) declare(tok AddedToken, file, field string, withID bool) error {
	if tok.Content == "" {
		return nil // Hugging Face ignores empty tokens
	}
	if !utf8.ValidString(tok.Content) {
		return &FormatError{file, field, "token content is not valid UTF-8"}
	}
	want, known := t.TokenID(tok.Content)
	if !known {
		want = t.nextID()
	}
	if withID && tok.ID != want {
		if known {
			return &FormatError{file, field, fmt.Sprintf("token %q declared with id %d but it already has id %d", tok.Content, tok.ID, want)}
		}
		return &FormatError{file, field, fmt.Sprintf("token %q declared with id %d, but Hugging Face would give it id %d (ids are assigned in order after the vocabulary)", tok.Content, tok.ID, want)}
	}
	tok.ID = want
	if t.byContent == nil {
		t.byContent, t.addedByID = map[string]int{}, map[int]int{}
	}
	if k, ok := t.byContent[tok.Content]; ok {
		t.added[k] = tok // a later declaration updates the flags
		return nil
	}
	t.byContent[tok.Content] = len(t.added)
	t.addedByID[tok.ID] = len(t.added)
	t.added = append(t.added, tok)
	return nil
}

// finish builds the matchers and the id table once every token is declared.
func (t *Tokenizer) finish() {
	initClasses()
	var raw, nrm []matchToken
	for k, a := range t.added {
		if a.ID >= len(t.idToToken) {
			t.idToToken = append(t.idToToken, make([]string, a.ID+1-len(t.idToToken))...)
		}
		if a.Normalized {
			nrm = append(nrm, matchToken{pattern: t.normalize(a.Content), index: k, tok: a})
		} else {
			raw = append(raw, matchToken{pattern: a.Content, index: k, tok: a})
		}
	}
	t.raw, t.nrm = newMatcher(raw), newMatcher(nrm)
}

// matchToken is an added token as a matcher sees it.
type matchToken struct {
	pattern string // the content (normalized for normalized tokens)
	index   int    // index in Tokenizer.added
	tok     AddedToken
}

// matcher finds added tokens in text: leftmost-longest, non-overlapping (the
// Aho-Corasick LeftmostLongest semantics of Hugging Face's AddedVocabulary),
// then applies single_word, lstrip and rstrip exactly as
// AddedVocabulary.find_matches does.
type matcher struct {
	byFirst [256][]matchToken // candidates by first byte, longest first
	any     bool
}

func newMatcher(toks []matchToken) *matcher {
	m := &matcher{}
	for _, mt := range toks {
		if mt.pattern == "" {
			continue
		}
		b := mt.pattern[0]
		m.byFirst[b] = append(m.byFirst[b], mt)
		m.any = true
	}
	for b := range m.byFirst {
		c := m.byFirst[b]
		sort.SliceStable(c, func(i, j int) bool { return len(c[i].pattern) > len(c[j].pattern) })
	}
	return m
}

// split calls emit for every piece of s in order: text pieces with tok = -1
// (possibly empty pieces are skipped) and added tokens with their index.
func (m *matcher) split(s string, emit func(piece string, tok int)) {
	if !m.any {
		if s != "" {
			emit(s, -1)
		}
		return
	}
	startOffset := 0
	for i := 0; i < len(s); {
		var hit *matchToken
		for k := range m.byFirst[s[i]] {
			if c := &m.byFirst[s[i]][k]; strings.HasPrefix(s[i:], c.pattern) {
				hit = c
				break
			}
		}
		if hit == nil {
			i++
			continue
		}
		start, stop := i, i+len(hit.pattern)
		i = stop // matching resumes after the raw match
		if hit.tok.SingleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if hit.tok.LStrip {
			start = max(leftmostSpaceAtEnd(s[:start]), startOffset)
		}
		if hit.tok.RStrip {
			stop += rightmostSpaceAtStart(s[stop:])
		}
		if startOffset < start {
			emit(s[startOffset:start], -1)
		}
		emit(s[min(start, len(s)):min(stop, len(s))], hit.index)
		startOffset = stop
	}
	if startOffset < len(s) {
		emit(s[startOffset:], -1)
	}
}

// isWordChar is the Unicode \w of Rust's regex crate: Alphabetic, M, Nd, Pc
// and Join_Control.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.Is(unicode.M, r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Join_Control, r)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}

// leftmostSpaceAtEnd is the start of the white-space run that ends s.
func leftmostSpaceAtEnd(s string) int {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !unicode.Is(unicode.White_Space, r) {
			break
		}
		i -= n
	}
	return i
}

// rightmostSpaceAtStart is the length of the white-space run that starts s.
func rightmostSpaceAtStart(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.Is(unicode.White_Space, r) {
			break
		}
		i += n
	}
	return i
}
