package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// The parity corpus: ≥ 10,000 strings built deterministically from a seed.
// corpusParts lists its composition (name, count, generator); docs/tokenizer.md
// reproduces the table. Every generator returns valid UTF-8.

// Sentences in the model's 11 dialogue languages (Arabic, Chinese, English,
// French, German, Italian, Japanese, Korean, Portuguese, Russian, Spanish),
// written for this corpus.
var languagePhrases = map[string][]string{
	"English":    {"The kettle clicks off and steam curls toward the window.", "Don't move — she'll hear you!", "We're almost there, aren't we?", "It's 6:45 a.m. and the tram is late again.", "I've never seen the harbour this quiet."},
	"Chinese":    {"雨停了，街上的灯一盏一盏亮起来。", "你听见了吗？楼下有人在弹钢琴。", "我们明天早上七点在车站见面。", "这碗面太辣了，我受不了！", "老师说：“安静，开始考试。”"},
	"Japanese":   {"窓の外で桜がゆっくり散っている。", "ちょっと待って、鍵を忘れた！", "駅前のカフェで午後三時に会いましょう。", "彼女は小さな声で「ありがとう」と言った。", "ラーメンを二つください。"},
	"Korean":     {"비가 그치자 골목에 고양이가 나타났다.", "잠깐만, 지갑을 두고 왔어!", "우리는 내일 아침 아홉 시에 출발해요.", "그녀는 조용히 \"괜찮아\"라고 말했다.", "서울의 밤은 생각보다 밝았다."},
	"French":     {"Le café fume encore sur la table de la cuisine.", "Attends, j'ai oublié mes clés !", "On se retrouve à 18 h devant la gare ?", "« Tais-toi », murmura-t-elle, « ils arrivent. »", "Les mouettes tournent au-dessus du port d'Étretat."},
	"German":     {"Die Straßenbahn quietscht um die Ecke.", "Warte mal, ich habe meinen Schlüssel vergessen!", "Wir treffen uns um 7 Uhr am Hauptbahnhof.", "„Sei leise“, flüsterte sie, „sie kommen.“", "Über den Dächern von Köln zieht Nebel auf."},
	"Italian":    {"Il caffè è ancora caldo sul tavolo.", "Aspetta, ho dimenticato le chiavi!", "Ci vediamo alle otto davanti al Duomo?", "«Zitto», sussurrò lei, «stanno arrivando.»", "Perché non è ancora arrivato il treno?"},
	"Portuguese": {"O café ainda está quente na mesa.", "Espera, esqueci as chaves!", "Encontramo-nos às nove na estação?", "— Fica quieto — sussurrou ela —, eles estão a chegar.", "As gaivotas voam sobre o Tejo ao amanhecer."},
	"Russian":    {"Чайник щёлкнул, и пар поднялся к окну.", "Подожди, я забыл ключи!", "Встретимся в семь у вокзала?", "«Тише, — прошептала она, — они идут».", "Над Невой медленно поднимается туман."},
	"Spanish":    {"El café sigue caliente sobre la mesa.", "¡Espera, olvidé las llaves!", "¿Nos vemos a las ocho en la estación?", "—Cállate —susurró ella—, ya vienen.", "Las gaviotas sobrevuelan el puerto de Cádiz."},
	"Arabic":     {"المطر توقف، والشارع يلمع تحت الأضواء.", "انتظر، نسيت المفاتيح!", "هل نلتقي في الساعة الثامنة أمام المحطة؟", "قالت بهدوء: «لا تتحرك».", "القهوة ما زالت ساخنة على الطاولة."},
}

var languages = []string{"Arabic", "Chinese", "English", "French", "German", "Italian", "Japanese", "Korean", "Portuguese", "Russian", "Spanish"}

var emojiPool = []string{
	"🙂", "🎥", "🎞️", "🔊", "🌧️", "⛵", "🚀", "🐟", "🌊", "🎵", "❤️", "✨", "🔥", "🇯🇵", "🇫🇷", "🇧🇷", "🏳️‍🌈", "🏴‍☠️",
	"👩‍👩‍👧‍👦", "👨🏽‍💻", "🧑🏿‍🚀", "👍🏻", "👋🏼", "🤝🏾", "🫱🏿‍🫲🏻", "1️⃣", "#️⃣", "*️⃣", "©️", "™️", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🐈‍⬛", "❤️‍🔥", "😶‍🌫️",
	"🧔‍♀️", "🏃‍➡️", "🫨", "🪿", "🩷", "‼️", "〰️", "☺", "☺️", "\u200d", "\ufe0f", "\ufe0e", "🀄", "🃏",
}

var codePool = []string{
	"x = np.zeros((24, 7, 32, 32), dtype=np.float32)", "func (t *Tokenizer) Encode(s string) ([]int, error) {", "SELECT id, name FROM takes WHERE seed = 42 ORDER BY id DESC;",
	"for (int i = 0; i < n; ++i) { a[i] += b[i] * 0.5f; }", "if err != nil {\n\treturn fmt.Errorf(\"load: %w\", err)\n}", "#!/usr/bin/env bash\nset -euo pipefail\n",
	"{\"seed\": 7, \"steps\": 30, \"shift\": 12.0}", "def f(x):\n    return x**2 + 3*x - 1\n", "<div class=\"card\">Hello</div>", "a->b = c >> 2; d <<= 1; e != f && g || h;",
	"`make test` && ./h3studio tokenize -t DIR --json", "C:\\Users\\me\\Videos\\take_01.mp4", "https://example.com/path?q=1&r=two#frag", "let r = /[\\p{L}]+/gu;",
	"0x7FFF + ((bits>>16)&1)", "i++; j--; k **= 2; m //= 3;", "λx.x", "  indented\n    more\n\tand tab", "@decorator\nclass A(B): pass", "    return {'a': 1, \"b\": [2, 3]}",
}

var wsPool = []string{" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n", "\r", " \n", "\n ", " \t \n", "\u00a0", "\u3000", "\u2009", "\u200b", "\u0085", "\ufeff", "\u2028", "\u2029", "\v", "\f", "\u001c", "\u001f", "\u180e", "\u202f", "\u205f"}

var shotPhrases = []string{
	"Static shot, soft morning light through lace curtains.", "Slow push in on the kettle as steam rises.", "Tracking shot along a rain-soaked street at night, neon reflections ripple.",
	"Arc shot around two friends laughing on a rooftop.", "Handheld POV running down a spiral staircase, shake slightly at fast speed.", "Pan left with small amplitude at slow speed to reveal the harbour.",
	"Close-up of weathered hands kneading dough on a floured table.", "Wide shot: a lighthouse beam sweeps over black waves.", "Tilt up from muddy boots to a grinning face.", "Zoom out with large amplitude as fireworks bloom.",
}

var subjectPhrases = []string{"a woman in a yellow raincoat", "an old fisherman", "a ginger cat", "two kids on bicycles", "a street violinist", "a robot barista", "a grandmother", "a tired detective"}

type corpusPart struct {
	name  string
	count int
	gen   func(r *rand.Rand, i int) string
}

var corpusParts = []corpusPart{
	{"dialogue languages (sentences, pairs, with punctuation variants)", 1100, genLanguage},
	{"official prompt format (Context-IR fields, shots, <d>[Language] … </d>, speakers)", 1500, genPrompt},
	{"labels and timestamps (<Picture N>: , <Video N>: , <Audio N>: , <x.y seconds>, <Subject N>)", 1000, genLabels},
	{"emoji, ZWJ sequences, skin tones, flags, keycaps, variation selectors", 1000, genEmoji},
	{"white-space runs (\\r\\n, tabs, Unicode spaces) and digits", 1000, genWhitespaceDigits},
	{"code", 800, genCode},
	{"random Unicode (all planes, BMP, scripts, combining marks)", 2000, genRandomUnicode},
	{"edge cases (contractions, NFC, added tokens, long runs)", 1000, genEdge},
	{"mixed soup (the acceptance check's style: pools and random characters)", 2600, genSoup},
	{"normalization stress: combining marks, decomposable characters, Hangul jamo (Unicode 17.0)", 1000, genNormalization},
}

// buildCorpus returns the whole corpus for seed.
func buildCorpus(seed uint64) []string {
	var out []string
	for pi, p := range corpusParts {
		r := rand.New(rand.NewPCG(seed, uint64(pi)+1))
		for i := 0; i < p.count; i++ {
			s := p.gen(r, i)
			if !utf8.ValidString(s) {
				panic(fmt.Sprintf("corpus part %q made invalid UTF-8", p.name))
			}
			out = append(out, s)
		}
	}
	return out
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func genLanguage(r *rand.Rand, i int) string {
	lang := languages[i%len(languages)]
	ps := languagePhrases[lang]
	switch r.IntN(5) {
	case 0:
		return pick(r, ps)
	case 1:
		return pick(r, ps) + " " + pick(r, ps)
	case 2:
		return pick(r, ps) + "\n" + pick(r, languagePhrases[pick(r, languages)])
	case 3:
		return strings.ToUpper(pick(r, ps))
	default:
		return fmt.Sprintf("%s%s%s", pick(r, []string{"", " ", "  ", "\t", "\n", "— ", "(", "\""}), pick(r, ps), pick(r, []string{"", " ", "\n", "...", "?!", ")", "\"", "\r\n"}))
	}
}

func timestamp(r *rand.Rand) string {
	return fmt.Sprintf("%02d:%02d.%03d", r.IntN(2), r.IntN(60), r.IntN(1000))
}

func dialogue(r *rand.Rand) string {
	lang := pick(r, languages)
	line := pick(r, languagePhrases[lang])
	speaker := fmt.Sprintf("(S%d)", 1+r.IntN(3))
	verb := pick(r, []string{"says", "whispers", "shouts", "says in an off-screen voiceover", "mutters"})
	tail := pick(r, []string{"", "", " <cutoff>", " <scenetrans>", "<|cutoff|>", " <|lyrics_start|>la la<|lyrics_end|>"})
	return fmt.Sprintf("%s %s <d>[%s] %s</d>%s", speaker, verb, lang, line, tail)
}

func genPrompt(r *rand.Rand, i int) string {
	var b strings.Builder
	switch i % 3 {
	case 1:
		fmt.Fprintf(&b, "For the target video, at 0.00 seconds into the target video, <Picture 1> (from [Shot 1]) is fully referenced.\n\n")
	case 2:
		fmt.Fprintf(&b, "How the reference pictures align with the target video — Picture 1 (from Shot 1) aligns with the 0.00-second mark of the target video; Picture 2 (from Shot %d) aligns with the %.2f-second mark of the target video.\n\n", 1+r.IntN(4), 2+r.Float64()*13)
	}
	if r.IntN(4) == 0 {
		fmt.Fprintf(&b, "subject_definitions:\n<Subject 1>: %s\n<Picture 1>: the kitchen\n<Video 1>: the street take\n<Audio 1>: rain ambience\nsummary: [reference generation] %s\nretention_analysis:\n<Picture 1>: fully_preserved\n<Audio 1>: partially_copy\n", pick(r, subjectPhrases), pick(r, shotPhrases))
	}
	b.WriteString("integrated_multimodal_description: ")
	shots := 1 + r.IntN(4)
	for s := 1; s <= shots; s++ {
		if s == 1 {
			fmt.Fprintf(&b, "[Shot 1] %s %s ", pick(r, shotPhrases), strings.ToUpper(pick(r, subjectPhrases)[:1])+pick(r, subjectPhrases)[1:])
		} else {
			fmt.Fprintf(&b, "[Shot %d] At %s, the camera cuts to %s. ", s, timestamp(r), pick(r, subjectPhrases))
		}
		if r.IntN(2) == 0 {
			b.WriteString(dialogue(r) + " ")
		}
	}
	fmt.Fprintf(&b, "\noverall_soundscape: %s\nnon_diegetic_music: %s", pick(r, []string{"Rain on tin roofs, distant traffic.", "Gulls and waves; a bell far away.", "N/A"}), pick(r, []string{"N/A", "Soft piano, slow rhythm, two instruments.", "Upbeat synth pulse with hand claps."}))
	return b.String()
}

func genLabels(r *rand.Rand, i int) string {
	n := 1 + r.IntN(12)
	switch i % 8 {
	case 0:
		return fmt.Sprintf("<Picture %d>: ", n)
	case 1:
		return fmt.Sprintf("<Video %d>: ", n)
	case 2:
		return fmt.Sprintf("<Audio %d>: ", n)
	case 3:
		return fmt.Sprintf("<%.1f seconds>", float64(r.IntN(64))/4)
	case 4:
		return fmt.Sprintf("<Subject %d>", n)
	case 5:
		return fmt.Sprintf("<Picture %d> (from [Shot %d]) is fully referenced.", n, 1+r.IntN(5))
	case 6:
		return fmt.Sprintf("<Audio %d>: <Video %d>: <0.2 seconds><|vision_start|><|video_pad|><|video_pad|><|vision_end|>", n, n)
	default:
		return fmt.Sprintf("<Picture %d>: <|vision_start|>%s<|vision_end|>%s", n, strings.Repeat("<|image_pad|>", 1+r.IntN(6)), pick(r, shotPhrases))
	}
}

func genEmoji(r *rand.Rand, i int) string {
	var b strings.Builder
	for k := 1 + r.IntN(8); k > 0; k-- {
		b.WriteString(pick(r, emojiPool))
		if r.IntN(4) == 0 {
			b.WriteString(pick(r, []string{" ", "a", "!", "\n", "中", "1", "🏻", "\u200d"}))
		}
	}
	return b.String()
}

func genWhitespaceDigits(r *rand.Rand, i int) string {
	var b strings.Builder
	for k := 1 + r.IntN(10); k > 0; k-- {
		switch r.IntN(5) {
		case 0, 1:
			b.WriteString(pick(r, wsPool))
		case 2:
			fmt.Fprintf(&b, "%d", r.Int64N(1<<uint(r.IntN(62)+1)))
		case 3:
			b.WriteString(pick(r, []string{"٣٤٥", "१२३", "①②", "Ⅻ", "½", "²", "3.14159", "1,024", "-0.5e-3", "１２３", "৪", "〇"}))
		default:
			b.WriteString(pick(r, []string{"word", "x", "!", "?", "'s", "end", ".", "a"}))
		}
	}
	return b.String()
}

func genCode(r *rand.Rand, i int) string {
	s := pick(r, codePool)
	if r.IntN(3) == 0 {
		s += pick(r, wsPool) + pick(r, codePool)
	}
	return s
}

// randomRune draws from one of several distributions.
func randomRune(r *rand.Rand, mode int) rune {
	for {
		var c rune
		switch mode {
		case 0: // any code point
			c = rune(r.IntN(0x110000))
		case 1: // BMP
			c = rune(r.IntN(0x10000))
		case 2: // scripts and symbols people type
			blocks := [][2]rune{{0x20, 0x7e}, {0xa0, 0x24f}, {0x370, 0x3ff}, {0x400, 0x4ff}, {0x530, 0x58f}, {0x590, 0x6ff}, {0x900, 0xdff},
				{0xe00, 0xeff}, {0x1100, 0x11ff}, {0x1e00, 0x1fff}, {0x2000, 0x2bff}, {0x3000, 0x30ff}, {0x3130, 0x318f}, {0x4e00, 0x9fff},
				{0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfb00, 0xfdff}, {0xfe00, 0xfe6f}, {0xff00, 0xffef}, {0x1d400, 0x1d7ff}, {0x1f300, 0x1faff},
				{0x20000, 0x2a6df}, {0x10000, 0x1342f}}
			bl := pick(r, blocks)
			c = bl[0] + rune(r.IntN(int(bl[1]-bl[0]+1)))
		default: // combining marks and characters NFC changes
			c = pick(r, []rune{0x300, 0x301, 0x302, 0x303, 0x308, 0x30a, 0x323, 0x327, 0x328, 0x334, 0x345, 0x35c, 0x592, 0x5b0, 0x64b, 0x93c, 0x94d,
				0x1161, 0x11a8, 0x1100, 0x212b, 0x2126, 0x212a, 0xc5, 0xe9, 0x65, 0x41, 0x61, 0x6f, 0xf900, 0x2000, 0x340, 0x344, 0x1e0a, 0x3099, 0x309a, 0x304b, 0x30cf, 0xac00})
		}
		if c >= 0xd800 && c <= 0xdfff {
			continue
		}
		return c
	}
}

func genRandomUnicode(r *rand.Rand, i int) string {
	mode := i % 4
	n := 1 + r.IntN(24)
	rs := make([]rune, n)
	for k := range rs {
		if r.IntN(5) == 0 {
			rs[k] = randomRune(r, 2)
		} else {
			rs[k] = randomRune(r, mode)
		}
	}
	return string(rs)
}

var edgePool = []string{
	"'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'Ll", "'d", "'D", "'ſ", "'K", "'x", "''s", "' s", "it's", "IT'S", "y'all", "rock'n'roll", "x'ſun", "'Sun", "'LLama", "'REd", "'dD", "''ll",
	"e\u0301", "\u212b", "\u2126", "A\u030a", "\u1100\u1161\u11a8", "ﬁ", "①", "ｶﾞ", "\u0344", "\u0958", "a\u0323\u0302", "a\u0302\u0323", "\u00c5\u0301", "\u0041\u0308\u0301",
	"a" + strings.Repeat("\u0301", 40), "x" + strings.Repeat("\u0301\u0323", 25) + "y", "e" + strings.Repeat("\u0323\u0301\u0345", 12), "\u1100" + strings.Repeat("\u0301", 33) + "\u1161",
	"Z" + strings.Repeat("\u0336\u0317\u0310\u034f", 10), "\u1f82" + strings.Repeat("\u0301", 31) + "\u0323",
	"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|vision_start|>", "<|image_pad|>", "<|video_pad|>", "<|vision_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>",
	"<|im_start", "im_start|>", "<|im_start|><|im_end|>", "<|im_start|>user\n", "<<|im_end|>>", "<|fim_prefix|>def", "<d>", "</d>", "<|cutoff|>", "<|lyrics_start|>", "<d>[English] Hi.</d>",
	"\r\n\r\n", "\n\r", " \r\n ", "a\r\nb", "\u0085x", "\ufeffx", "x\ufeff", "\u00a0\u00a0x", "\u3000\u3000語", "\t\tx", " \t\n", "x \n ", "x  ", "  x", " \u00a0x",
	"", " ", "\n", "0", "00", "1234567890", "1.5", "٣", "x1y2", "a_b", "__init__", "...", "!!!?", "@@", "--", "—", "…", "«»", "¿¡", "\\", "\"\"", "``", "~~",
}

func genEdge(r *rand.Rand, i int) string {
	if i < len(edgePool) {
		return edgePool[i]
	}
	switch r.IntN(6) {
	case 0: // long runs (the heap merge path)
		return strings.Repeat(pick(r, []string{"a", "ab", "\u00e9", "语", "🙂", " ", "\n", "-", "0", "ー", "\u200d", "aa\u0301"}), 50+r.IntN(500))
	case 1:
		return strings.Repeat(pick(r, languagePhrases["English"]), 20)
	default:
		var b strings.Builder
		for k := 1 + r.IntN(8); k > 0; k-- {
			b.WriteString(pick(r, edgePool))
			if r.IntN(3) == 0 {
				b.WriteString(pick(r, []string{"x", " ", "Word", "中"}))
			}
		}
		return b.String()
	}
}

func genSoup(r *rand.Rand, i int) string {
	var b strings.Builder
	for k := 1 + r.IntN(6); k > 0; k-- {
		switch r.IntN(9) {
		case 0:
			b.WriteString(pick(r, languagePhrases[pick(r, languages)]))
		case 1:
			b.WriteString(pick(r, emojiPool))
		case 2:
			b.WriteString(pick(r, wsPool))
		case 3:
			b.WriteString(genLabels(r, r.IntN(8)))
		case 4:
			b.WriteString(pick(r, codePool))
		case 5:
			b.WriteString(pick(r, edgePool))
		case 6:
			b.WriteString(dialogue(r))
		default:
			for n := r.IntN(12); n >= 0; n-- {
				b.WriteRune(randomRune(r, 2))
			}
		}
		if r.IntN(2) == 0 {
			b.WriteString(" ")
		}
	}
	return b.String()
}

// genNormalization draws from the characters normalization acts on: every
// character with a non-zero combining class or a canonical decomposition
// (including those new in Unicode 16.0/17.0), Hangul jamo and syllables,
// and plain bases.
func genNormalization(r *rand.Rand, i int) string {
	var b strings.Builder
	for n := 2 + r.IntN(10); n > 0; n-- {
		switch k := r.IntN(10); {
		case k < 4:
			b.WriteRune(combiningRanks[r.IntN(len(combiningRanks))].r)
		case k < 7:
			e := canonicalDecompositions[r.IntN(len(canonicalDecompositions))]
			if r.IntN(2) == 0 {
				b.WriteRune(e.r)
			} else {
				b.WriteString(string(e.d))
			}
		case k < 8:
			b.WriteRune(pick(r, []rune{0x1100, 0x1112, 0x1161, 0x1175, 0x11a8, 0x11c2, 0xac00, 0xd7a3, 0xac1c}))
		default:
			b.WriteRune(pick(r, []rune{'a', 'e', 'o', 'A', ' ', 'x', 0x3b1, 0x627, 0x915, 0x16d63, 0x113b8, 0x1611e}))
		}
	}
	return b.String()
}
