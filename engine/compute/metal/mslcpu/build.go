//go:build linux

package mslcpu

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed cxx
var cxxFS embed.FS

// ErrNoCompiler reports that no clang++ >= 17 was found.
var ErrNoCompiler = errors.New("mslcpu: no clang++ >= 17 found (Debian: apt-get install clang-19, or `make deps`)")

// cxxFlags compile a kernel translation unit. -fexcess-precision=16 rounds
// every half operation as GPU half ALUs do; -ffp-contract=off keeps a*b+c two
// roundings, as Metal with fast math off does (the Metal backend compiles in
// the safe math mode).
var cxxFlags = []string{"-std=c++17", "-O1", "-g0", "-w", "-fexcess-precision=16", "-ffp-contract=off", "-fno-exceptions", "-fno-rtti"}

// Toolchain is a located clang++ and the harness's cache folder.
type Toolchain struct {
	CXX     string // path of clang++
	Version int    // major version
	Cache   string // compiled runtimes and kernel executables, keyed by content hash
	Extra   []string

	rtOnce sync.Once
	rtObj  string
	rtErr  error
	cxxDir string
}

var (
	defaultTC     *Toolchain
	defaultTCErr  error
	defaultTCOnce sync.Once
)

// DefaultToolchain finds clang++ once: $MSLCPU_CXX, else clang++-19, -18,
// -17, then clang++ (version 17 or later: older ones lack _Float16 and __bf16
// on x86-64). The cache is $MSLCPU_CACHE or the user cache folder.
func DefaultToolchain() (*Toolchain, error) {
	defaultTCOnce.Do(func() { defaultTC, defaultTCErr = findToolchain() })
	return defaultTC, defaultTCErr
}

var versionRe = regexp.MustCompile(`clang version (\d+)\.`)

func findToolchain() (*Toolchain, error) {
	cands := []string{"clang++-19", "clang++-18", "clang++-17", "clang++"}
	if c := os.Getenv("MSLCPU_CXX"); c != "" {
		cands = []string{c}
	}
	for _, c := range cands {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		out, err := exec.Command(p, "--version").Output()
		if err != nil {
			continue
		}
		m := versionRe.FindSubmatch(out)
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(string(m[1]))
		if v < 17 {
			continue
		}
		cache := os.Getenv("MSLCPU_CACHE")
		if cache == "" {
			d, err := os.UserCacheDir()
			if err != nil {
				d = os.TempDir()
			}
			cache = filepath.Join(d, "h3studio", "mslcpu")
		}
		if err := os.MkdirAll(cache, 0o755); err != nil {
			cache = filepath.Join(os.TempDir(), "h3studio-mslcpu")
			if err := os.MkdirAll(cache, 0o755); err != nil {
				return nil, fmt.Errorf("mslcpu: cache folder: %w", err)
			}
		}
		tc := &Toolchain{CXX: p, Version: v, Cache: cache}
		if f := os.Getenv("MSLCPU_FLAGS"); f != "" {
			tc.Extra = strings.Fields(f)
		}
		return tc, nil
	}
	return nil, ErrNoCompiler
}

func hashOf(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// writeTree writes the files of fsys into dir/<hash of their contents> once
// and returns that folder.
func (tc *Toolchain) writeTree(prefix string, fsys fs.FS) (string, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	var parts [][]byte
	data := map[string][]byte{}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		data[n] = b
		parts = append(parts, []byte(n), b)
	}
	dir := filepath.Join(tc.Cache, prefix+"-"+hashOf(parts...))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(tc.Cache, prefix+"-tmp")
	if err != nil {
		return "", err
	}
	for _, n := range names {
		p := filepath.Join(tmp, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, data[n], 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, err2 := os.Stat(filepath.Join(dir, ".complete")); err2 != nil {
			return "", err
		}
	}
	return dir, nil
}

// runtime compiles mslrt.cpp once per content.
func (tc *Toolchain) runtime() (string, string, error) {
	tc.rtOnce.Do(func() {
		sub, err := fs.Sub(cxxFS, "cxx")
		if err != nil {
			tc.rtErr = err
			return
		}
		tc.cxxDir, tc.rtErr = tc.writeTree("cxx", sub)
		if tc.rtErr != nil {
			return
		}
		src, _ := os.ReadFile(filepath.Join(tc.cxxDir, "mslrt.cpp"))
		api, _ := os.ReadFile(filepath.Join(tc.cxxDir, "mslrt.h"))
		obj := filepath.Join(tc.Cache, "rt-"+hashOf(src, api, []byte(tc.CXX))+".o")
		if _, err := os.Stat(obj); err == nil {
			tc.rtObj = obj
			return
		}
		tmp := fmt.Sprintf("%s.%d.tmp", obj, os.Getpid())
		out, err := exec.Command(tc.CXX, "-std=c++17", "-O2", "-g0", "-c", filepath.Join(tc.cxxDir, "mslrt.cpp"), "-o", tmp).CombinedOutput()
		if err != nil {
			tc.rtErr = fmt.Errorf("mslcpu: building the runtime: %v\n%s", err, out)
			return
		}
		tc.rtErr = os.Rename(tmp, obj)
		tc.rtObj = obj
	})
	return tc.rtObj, tc.cxxDir, tc.rtErr
}

// Module is one .metal file compiled into a kernel executable.
type Module struct {
	File    string   // the .metal file's name
	Bin     string   // the executable
	Kernels []Kernel // entry points
	tc      *Toolchain
}

// CompileError is a failure to translate or compile a .metal file; Msg names
// .metal lines.
type CompileError struct {
	File string
	Msg  string
}

func (e *CompileError) Error() string { return "mslcpu: " + e.File + ": " + e.Msg }

// Build translates and compiles the .metal file named file of the source tree
// srcs (which also holds the headers it includes). Results are cached by
// content.
func (tc *Toolchain) Build(srcs fs.FS, file string) (*Module, error) {
	rt, cxxDir, err := tc.runtime()
	if err != nil {
		return nil, err
	}
	srcDir, err := tc.writeTree("src", srcs)
	if err != nil {
		return nil, err
	}
	tu, tr, err := tc.translationUnit(cxxDir, srcDir, file)
	if err != nil {
		return nil, err
	}
	flags := append(append([]string{}, cxxFlags...), tc.Extra...)
	shim, _ := os.ReadFile(filepath.Join(cxxDir, "msl_shim.h"))
	api, _ := os.ReadFile(filepath.Join(cxxDir, "mslrt.h"))
	bin := filepath.Join(tc.Cache, "k-"+hashOf([]byte(tu), shim, api, []byte(rt), []byte(strings.Join(flags, " ")), []byte(tc.CXX)))
	m := &Module{File: file, Bin: bin, Kernels: tr.Kernels, tc: tc}
	if _, err := os.Stat(bin); err == nil {
		return m, nil
	}
	cpp := fmt.Sprintf("%s.%d.cpp", bin, os.Getpid())
	if err := os.WriteFile(cpp, []byte(tu), 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(cpp)
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	args := append(flags, "-I", cxxDir, cpp, rt, "-o", tmp, "-lpthread")
	if out, err := exec.Command(tc.CXX, args...).CombinedOutput(); err != nil {
		return nil, &CompileError{File: file, Msg: "compiling:\n" + tidy(string(out), srcDir)}
	}
	return m, os.Rename(tmp, bin)
}

// translationUnit preprocesses and translates file and returns the C++ source.
func (tc *Toolchain) translationUnit(cxxDir, srcDir, file string) (string, *Translation, error) {
	pp := exec.Command(tc.CXX, "-E", "-x", "c++", "-std=c++17", "-D__METAL_VERSION__=310", "-D__HAVE_BFLOAT__=1",
		"-D__METAL__=1", "-I", filepath.Join(cxxDir, "pp"), "-I", srcDir, filepath.Join(srcDir, filepath.FromSlash(file)))
	var stderr bytes.Buffer
	pp.Stderr = &stderr
	src, err := pp.Output()
	if err != nil {
		return "", nil, &CompileError{File: file, Msg: "preprocessing:\n" + tidy(stderr.String(), srcDir)}
	}
	tr, err := Translate(string(src))
	if err != nil {
		return "", nil, &CompileError{File: file, Msg: tidy(err.Error(), srcDir)}
	}
	tu := "#include \"msl_shim.h\"\n" + tr.Source + "\n#line 1 \"<glue>\"\n" + tr.Glue()
	return tu, tr, nil
}

// CheckLibrary compiles (syntax only) the files of srcs concatenated in the
// given order, as the Metal backend hands them to the Metal compiler in one
// library: it catches names defined twice across files.
func (tc *Toolchain) CheckLibrary(source string) error {
	tu, tmp, cxxDir, err := tc.libraryUnit(source)
	defer os.RemoveAll(tmp)
	if err != nil {
		return err
	}
	return tc.checkSyntax(tu, tmp, "library.cpp", "library", append(append([]string{}, cxxFlags...), "-fsyntax-only", "-I", cxxDir)...)
}

// libraryUnit translates a whole library source (as the Metal backend hands
// it to the Metal compiler) into one translation unit, written from a new
// temporary folder tmp that the caller removes (also on error).
func (tc *Toolchain) libraryUnit(source string) (tu, tmp, cxxDir string, err error) {
	if _, cxxDir, err = tc.runtime(); err != nil {
		return "", "", "", err
	}
	if tmp, err = os.MkdirTemp("", "mslcpu-lib"); err != nil {
		return "", "", "", err
	}
	if err = os.WriteFile(filepath.Join(tmp, "library.metal"), []byte(source), 0o644); err != nil {
		return "", tmp, "", err
	}
	tu, _, err = tc.translationUnit(cxxDir, tmp, "library.metal")
	return tu, tmp, cxxDir, err
}

// checkSyntax writes tu to tmp/name and runs the C++ compiler with args on
// it; its diagnostics come back as a CompileError for what.
func (tc *Toolchain) checkSyntax(tu, tmp, name, what string, args ...string) error {
	p := filepath.Join(tmp, name)
	if err := os.WriteFile(p, []byte(tu), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command(tc.CXX, append(args, p)...).CombinedOutput(); err != nil {
		return &CompileError{File: what, Msg: tidy(string(out), tmp)}
	}
	return nil
}

// tidy shortens cache paths in compiler output to the .metal file names.
func tidy(s, dir string) string {
	s = strings.ReplaceAll(s, dir+string(filepath.Separator), "")
	return strings.TrimSpace(s)
}

// Library is every .metal file of a source tree, built, with its entry points
// indexed by name.
type Library struct {
	Modules []*Module
	byName  map[string]*Module
}

// BuildLibrary builds every *.metal file at the top of srcs (in parallel on
// up to workers processes) and indexes the kernels; a name defined in two
// files is an error.
func (tc *Toolchain) BuildLibrary(srcs fs.FS, workers int) (*Library, error) {
	files, err := fs.Glob(srcs, "*.metal")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if workers < 1 {
		workers = 1
	}
	mods := make([]*Module, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func(i int, f string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mods[i], errs[i] = tc.Build(srcs, f)
		}(i, f)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	lib := &Library{Modules: mods, byName: map[string]*Module{}}
	for _, m := range mods {
		for _, k := range m.Kernels {
			if o, dup := lib.byName[k.Name]; dup {
				return nil, fmt.Errorf("mslcpu: kernel %s is defined in %s and in %s", k.Name, path.Base(o.File), path.Base(m.File))
			}
			lib.byName[k.Name] = m
		}
	}
	return lib, nil
}

// Module returns the module defining kernel name.
func (l *Library) Module(name string) (*Module, bool) {
	m, ok := l.byName[name]
	return m, ok
}

// Names lists every entry point, sorted.
func (l *Library) Names() []string {
	var n []string
	for k := range l.byName {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
