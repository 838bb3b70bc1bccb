package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"h3studio/engine/tokenizer"
)

func init() {
	register(&command{name: "tokenize", summary: "tokenize text with a Qwen tokenizer folder", run: runTokenize})
}

// stdin is replaceable in tests.
var stdin io.Reader = os.Stdin

func runTokenize(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("tokenize", stderr,
		"usage: h3studio tokenize -t DIR --json < strings.json",
		"       h3studio tokenize -t DIR [TEXT...]",
		"Tokenizes without adding special tokens, as H3 does. With --json, stdin is a JSON array of",
		"strings and stdout a JSON array of token-id arrays, one per string. Otherwise each TEXT (or",
		"all of stdin) is printed as ids and tokens, one line per token.",
	)
	dir := fs.String("t", "", "tokenizer `folder` holding tokenizer.json and tokenizer_config.json")
	asJSON := fs.Bool("json", false, "read a JSON array of strings on stdin; write a JSON array of token-id arrays")
	if !parseFlags(fs, args, func() bool { return *dir != "" && (!*asJSON || fs.NArg() == 0) }) {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "h3studio tokenize: %v\n", err)
		return 1
	}
	tok, err := tokenizer.Load(*dir)
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		in, err := io.ReadAll(stdin)
		if err != nil {
			return fail(fmt.Errorf("stdin: %w", err))
		}
		texts, err := parseStringArray(in)
		if err != nil {
			return fail(err)
		}
		w := bufio.NewWriter(stdout)
		w.WriteByte('[')
		var ids []int32
		for i, s := range texts {
			if ids, err = tok.AppendEncode(ids[:0], s); err != nil {
				return fail(fmt.Errorf("stdin: string %d: %w", i, err))
			}
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteByte('[')
			for k, id := range ids {
				if k > 0 {
					w.WriteByte(',')
				}
				w.WriteString(strconv.Itoa(int(id)))
			}
			w.WriteByte(']')
		}
		w.WriteString("]\n")
		if err := w.Flush(); err != nil {
			return fail(err)
		}
		return 0
	}
	texts := fs.Args()
	if len(texts) == 0 {
		in, err := io.ReadAll(stdin)
		if err != nil {
			return fail(fmt.Errorf("stdin: %w", err))
		}
		texts = []string{string(in)}
	}
	for _, s := range texts {
		ids, err := tok.Encode(s)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%d tokens\n", len(ids))
		for _, id := range ids {
			t, _ := tok.Token(id)
			fmt.Fprintf(stdout, "%8d  %q\n", id, t)
		}
	}
	return 0
}

// parseStringArray decodes stdin as a JSON array of strings, rejecting
// invalid UTF-8 (which encoding/json would silently replace) and anything
// but strings, with the position of the problem. A lone surrogate escape
// (\ud800) decodes to U+FFFD, the bytes JavaScript's TextEncoder gives it,
// so the ids equal tokenizers.js's.
func parseStringArray(in []byte) ([]string, error) {
	if !utf8.Valid(in) {
		off := 0
		for off < len(in) {
			r, n := utf8.DecodeRune(in[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, fmt.Errorf("stdin: not valid UTF-8 (first invalid byte at offset %d)", off)
	}
	d := json.NewDecoder(bytes.NewReader(in))
	var raw []json.RawMessage
	if err := d.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("stdin: expected a JSON array of strings, got a JSON %s", te.Value)
		}
		return nil, fmt.Errorf("stdin: expected a JSON array of strings: %v", err)
	}
	if d.More() {
		return nil, errors.New("stdin: data after the JSON array")
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil || (len(r) > 0 && r[0] != '"') {
			return nil, fmt.Errorf("stdin: element %d is not a string: %.40s", i, r)
		}
	}
	return out, nil
}
