package tokenizer

// GPT-2's bytes_to_unicode: the printable bytes '!'..'~', '¡'..'¬' and
// '®'..'ÿ' stand for themselves; the remaining 68 bytes map, in ascending
// byte order, to U+0100, U+0101, … (space → 'Ġ' U+0120, '\n' → 'Ċ' U+010A).
var (
	byteToRune [256]rune
	runeToByte [0x144]int16 // -1 where the rune is not a byte-level character
)

func init() {
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = int16(b)
	}
}

// ByteRune is the byte-level character standing for b (GPT-2's
// bytes_to_unicode), as vocabularies of byte-level BPE tokenizers spell it.
func ByteRune(b byte) rune { return byteToRune[b] }

// byteLevel maps the UTF-8 bytes of s to their byte-level characters.
func byteLevel(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = byteToRune[s[i]]
	}
	return string(r)
}

// unByteLevel maps a token string back to bytes: every character must be a
// byte-level character, otherwise ok is false (Hugging Face's ByteLevel
// decoder then keeps the token's own UTF-8 bytes).
func unByteLevel(tok string, dst []byte) (out []byte, ok bool) {
	out = dst
	for _, r := range tok {
		if r < 0 || int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return dst, false
		}
		out = append(out, byte(runeToByte[r]))
	}
	return out, true
}
