package videoapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
)

// Limits bound what one request may carry. Zero fields take the defaults.
type Limits struct {
	MaxBody       int64 // a JSON body, or a multipart body's fields together (default 1 MiB)
	MaxUpload     int64 // one uploaded file (default 512 MiB)
	MaxUploads    int   // files in one multipart body (default 12, SGLang's limit of files)
	MaxDepth      int   // JSON nesting (default 6)
	MaxConditions int   // conditions (default 12)
	MaxPrompt     int   // prompt bytes (default 64 KiB)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBody <= 0 {
		l.MaxBody = 1 << 20
	}
	if l.MaxUpload <= 0 {
		l.MaxUpload = 512 << 20
	}
	if l.MaxUploads <= 0 {
		l.MaxUploads = 12
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 6
	}
	if l.MaxConditions <= 0 {
		l.MaxConditions = 12
	}
	if l.MaxPrompt <= 0 {
		l.MaxPrompt = 64 << 10
	}
	return l
}

// FieldError rejects a request: Field names the wire field, Rule what was
// expected. Its text never repeats a path or a token.
type FieldError struct {
	Field string
	Rule  string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return "invalid request: " + e.Rule
	}
	return "invalid request: " + e.Field + " " + e.Rule
}

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Rule: fmt.Sprintf(format, a...)}
}

// ErrTooLarge is returned when a body or an upload exceeds its limit.
var ErrTooLarge = errors.New("videoapi: request too large")

// ParseJSON decodes a JSON body strictly: unknown fields, trailing data,
// nesting deeper than the limit and more conditions than the limit are
// refused, each naming the field and the rule.
func ParseJSON(body []byte, lim Limits) (CreateRequest, error) {
	lim = lim.withDefaults()
	var c CreateRequest
	if int64(len(body)) > lim.MaxBody {
		return c, fmt.Errorf("%w: the body is over %d bytes", ErrTooLarge, lim.MaxBody)
	}
	if err := checkDepth(body, lim.MaxDepth); err != nil {
		return c, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return CreateRequest{}, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return CreateRequest{}, &FieldError{Rule: "the body must be one JSON object"}
	}
	if strings.TrimSpace(c.Prompt) == "" {
		return CreateRequest{}, fieldErr("prompt", "is required and must not be empty")
	}
	if len(c.Prompt) > lim.MaxPrompt {
		return CreateRequest{}, fieldErr("prompt", "is longer than %d bytes", lim.MaxPrompt)
	}
	if len(c.Conditions) > lim.MaxConditions {
		return CreateRequest{}, fieldErr("conditions", "has %d entries, more than %d", len(c.Conditions), lim.MaxConditions)
	}
	return c, nil
}

// checkDepth refuses JSON nested deeper than max (before decoding, so a
// deep body costs no allocation) and anything that is not an object.
func checkDepth(body []byte, max int) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	depth := 0
	first := true
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &FieldError{Rule: "the body is not valid JSON"}
		}
		d, ok := t.(json.Delim)
		if first && (!ok || d != '{') {
			return &FieldError{Rule: "the body must be a JSON object"}
		}
		first = false
		if !ok {
			continue
		}
		switch d {
		case '{', '[':
			depth++
			if depth > max {
				return &FieldError{Rule: fmt.Sprintf("the body nests deeper than %d levels", max)}
			}
		default:
			depth--
		}
	}
}

// jsonError turns a decoding error into a FieldError naming the field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		f := te.Field
		if f == "" {
			return &FieldError{Rule: "the body must be a JSON object"}
		}
		return fieldErr(f, "must be %s", kindName(te.Type))
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Rule: "the body is not valid JSON"}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fieldErr(strings.Trim(name, `"`), "is not a field of the /v1/videos request (unknown fields are refused)")
	}
	if strings.Contains(msg, "is not a number") {
		return &FieldError{Rule: "a numeric field holds something that is not a number"}
	}
	return &FieldError{Rule: "the body could not be read as a /v1/videos request"}
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		if t == reflect.TypeOf(Number("")) {
			return "a number"
		}
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		return "an object"
	}
	return "of another type"
}

// Upload is a file of a multipart body, saved by ParseMultipart. A
// condition names it with the URI "upload://FIELD"; OpenAI's
// input_reference is the field "input_reference".
type Upload struct {
	Field string // the form field
	Path  string // where it was saved (inside the caller's folder)
	Type  string // the sniffed content type
	Size  int64
}

// UploadScheme prefixes a condition URI naming an uploaded file.
const UploadScheme = "upload://"

// ParseMultipart decodes a multipart/form-data body as SGLang and the
// OpenAI SDK send it: each field a string (objects and numbers as JSON
// text), extra_body a JSON object merged into the top level, and files
// saved into dir after their type was sniffed. The fields then go through
// ParseJSON, so both encodings follow one set of rules. On error the
// saved files are removed.
func ParseMultipart(r io.Reader, boundary, dir string, lim Limits) (CreateRequest, []Upload, error) {
	lim = lim.withDefaults()
	mr := multipart.NewReader(r, boundary)
	fields := map[string]json.RawMessage{}
	var extra map[string]json.RawMessage
	var ups []Upload
	fail := func(err error) (CreateRequest, []Upload, error) {
		RemoveUploads(ups)
		return CreateRequest{}, nil, err
	}
	var used int64
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(&FieldError{Rule: "the multipart body is malformed"})
		}
		name := p.FormName()
		if name == "" {
			p.Close()
			return fail(&FieldError{Rule: "a multipart part has no field name"})
		}
		if p.FileName() != "" {
			if len(ups) >= lim.MaxUploads {
				return fail(fieldErr(name, "is one file more than the %d allowed", lim.MaxUploads))
			}
			if !validUploadField(name) {
				return fail(fieldErr(name, "is not a valid upload field name (letters, digits, _ and -)"))
			}
			up, err := saveUpload(p, name, dir, lim.MaxUpload)
			if err != nil {
				return fail(err)
			}
			ups = append(ups, up)
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p, lim.MaxBody-used+1))
		used += int64(len(b))
		if err != nil {
			return fail(&FieldError{Rule: "the multipart body could not be read"})
		}
		if used > lim.MaxBody {
			return fail(fmt.Errorf("%w: the form fields are over %d bytes", ErrTooLarge, lim.MaxBody))
		}
		if name == "extra_body" {
			if err := json.Unmarshal(b, &extra); err != nil {
				return fail(fieldErr("extra_body", "must be a JSON object"))
			}
			continue
		}
		if _, dup := fields[name]; dup {
			return fail(fieldErr(name, "is given twice"))
		}
		fields[name] = formValue(name, b)
	}
	for k, v := range extra {
		if _, set := fields[k]; !set {
			fields[k] = v
		}
	}
	if up := findUpload(ups, "input_reference"); up != nil {
		if _, set := fields["input_reference"]; set {
			return fail(fieldErr("input_reference", "is given both as a file and as text"))
		}
		fields["input_reference"], _ = json.Marshal(UploadScheme + up.Field)
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return fail(&FieldError{Rule: "the form could not be read"})
	}
	c, err := ParseJSON(body, lim)
	if err != nil {
		return fail(err)
	}
	return c, ups, nil
}

// formValue is a form field as JSON: string fields as strings, others as
// the JSON text they carry (a bare word becomes a string, so the type
// error names the field).
func formValue(name string, b []byte) json.RawMessage {
	if stringField(name) || !json.Valid(b) {
		q, _ := json.Marshal(string(b))
		return q
	}
	return json.RawMessage(b)
}

var (
	stringFieldsOnce sync.Once
	stringFields     map[string]bool
)

// stringField reports whether CreateRequest's field of that JSON name is
// a Go string (multipart text goes in as is).
func stringField(name string) bool {
	stringFieldsOnce.Do(func() {
		stringFields = map[string]bool{}
		t := reflect.TypeOf(CreateRequest{})
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.String && ft != reflect.TypeOf(Number("")) {
				stringFields[tag] = true
			}
		}
	})
	return stringFields[name]
}

func validUploadField(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func findUpload(ups []Upload, field string) *Upload {
	for i := range ups {
		if ups[i].Field == field {
			return &ups[i]
		}
	}
	return nil
}

// saveUpload copies one file part into dir, refusing it when it is over
// max bytes or its content is not a picture, video or sound the engine
// reads (the client's file name and type are not trusted).
func saveUpload(p *multipart.Part, field, dir string, max int64) (Upload, error) {
	defer p.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(p, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Upload{}, fieldErr(field, "could not be read")
	}
	head = head[:n]
	typ, ok := SniffMedia(head)
	if !ok {
		return Upload{}, fieldErr(field, "is not a picture (PNG, JPEG), video (MP4, QuickTime) or sound (WAV, MP3, AAC, FLAC) file")
	}
	f, err := os.CreateTemp(dir, "upload-*"+extFor(typ))
	if err != nil {
		return Upload{}, fmt.Errorf("videoapi: saving an upload: %w", err)
	}
	written, err := io.Copy(f, io.MultiReader(bytes.NewReader(head), io.LimitReader(p, max-int64(n)+1)))
	cerr := f.Close()
	if err == nil {
		err = cerr
	}
	if err == nil && written > max {
		err = fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, field, max)
	}
	if err != nil {
		os.Remove(f.Name())
		if errors.Is(err, ErrTooLarge) {
			return Upload{}, err
		}
		return Upload{}, fieldErr(field, "could not be saved")
	}
	return Upload{Field: field, Path: f.Name(), Type: typ, Size: written}, nil
}

// SniffMedia names the media type of a file from its first bytes, for
// the kinds the engine reads; ok is false for anything else.
func SniffMedia(head []byte) (string, bool) {
	switch {
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		if string(head[8:10]) == "qt" {
			return "video/quicktime", true
		}
		if string(head[8:11]) == "M4A" {
			return "audio/mp4", true
		}
		return "video/mp4", true
	case len(head) >= 12 && string(head[0:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		return "audio/wav", true
	case bytes.HasPrefix(head, []byte("fLaC")):
		return "audio/flac", true
	case bytes.HasPrefix(head, []byte("ID3")), len(head) >= 2 && head[0] == 0xFF && head[1]&0xE0 == 0xE0 && head[1]&0x06 != 0:
		return "audio/mpeg", true
	case len(head) >= 2 && head[0] == 0xFF && head[1]&0xF6 == 0xF0:
		return "audio/aac", true
	}
	switch t := http.DetectContentType(head); t {
	case "image/png", "image/jpeg", "image/webp", "image/gif", "image/bmp":
		return t, true
	}
	return "", false
}

func extFor(typ string) string {
	switch typ {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	case "image/bmp":
		return ".bmp"
	case "video/mp4":
		return ".mp4"
	case "video/quicktime":
		return ".mov"
	case "audio/wav":
		return ".wav"
	case "audio/flac":
		return ".flac"
	case "audio/mpeg":
		return ".mp3"
	case "audio/mp4", "audio/aac":
		return ".m4a"
	}
	return ""
}

// RemoveUploads deletes saved uploads (a refused request keeps nothing).
func RemoveUploads(ups []Upload) {
	for _, u := range ups {
		os.Remove(u.Path)
	}
}

// uploadPath is the saved file of an "upload://FIELD" URI.
func uploadPath(ups []Upload, uri string) (string, bool) {
	name, ok := strings.CutPrefix(uri, UploadScheme)
	if !ok {
		return "", false
	}
	if u := findUpload(ups, name); u != nil {
		return filepath.Clean(u.Path), true
	}
	return "", false
}
