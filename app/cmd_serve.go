package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"h3studio/engine/credstore"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
)

func init() {
	register(&command{name: "serve", summary: "serve the local /v1/videos API (OpenAI- and SGLang-compatible)", run: runServe})
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

const serveUsage = `usage: h3studio serve [-d MODEL_DIR] [--addr 127.0.0.1:8420] [options]

Serves OpenAI's /v1/videos API with SGLang's MiniMax-H3 fields. Takes run one at
a time and are saved in the library with their take.json, like the studio's.
Every request needs the bearer token: H3_API_TOKEN, else the one in the
credential store (the Keychain on macOS; generated on the first start and
printed once).
`

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", stderr)
	var modelDir, addr, libDir string
	var allowDirs, hosts, origins listFlag
	fs.StringVar(&modelDir, "d", "", "model snapshot `folder` (default: the demo checkpoint)")
	fs.StringVar(&modelDir, "model-dir", "", "same as -d")
	fs.StringVar(&addr, "addr", "127.0.0.1:8420", "`host:port` to listen on (loopback unless --lan)")
	fs.StringVar(&libDir, "library", "", "library `folder` takes are saved in (default: ~/Movies/H3 Studio)")
	lan := fs.Bool("lan", false, "allow listening on a non-loopback address (other machines can then reach the API; the token still guards it)")
	fs.Var(&allowDirs, "allow-dir", "a `folder` whose files file:// references may name (repeatable; default: none)")
	fs.Var(&hosts, "allow-host", "an extra Host `name` to answer for (the machine's LAN name with --lan; repeatable)")
	fs.Var(&origins, "allow-origin", "a browser `origin` allowed to call the API (CORS; repeatable; default: none)")
	maxPending := fs.Int("max-queue", 16, "the most queued and running takes")
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "h3studio serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if !videoapi.IsLoopback(addr) && !*lan {
		fmt.Fprintf(stderr, "h3studio serve: %s is not a loopback address; pass --lan to let other machines reach the API\n", addr)
		return 2
	}
	var folders videoapi.Folders
	for _, d := range allowDirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			fmt.Fprintf(stderr, "h3studio serve: --allow-dir %s: %v\n", d, err)
			return 2
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "h3studio serve: --allow-dir %s is not a folder\n", d)
			return 2
		}
		folders.Allowed = append(folders.Allowed, abs)
	}
	o := serveOptions{modelDir: modelDir, addr: addr, libDir: libDir, folders: folders, hosts: hosts, origins: origins, maxPending: *maxPending}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, o, nil, stderr)
}

// serveOptions are serve's settings (its flags).
type serveOptions struct {
	modelDir, addr, libDir string
	folders                videoapi.Folders
	hosts, origins         []string
	maxPending             int
	pollAfter              time.Duration
}

// serve runs the API until ctx ends; ready, when set, gets the listening
// address.
func serve(ctx context.Context, o serveOptions, ready func(net.Addr), stderr io.Writer) int {
	token, generated, err := apiToken(credstore.Default)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	libDir := o.libDir
	remembered := ""
	if libDir == "" {
		remembered = loadPrefs().LibraryDir
		libDir = remembered
		if libDir == "" {
			libDir = defaultLibrary()
		}
	}
	var lib *studio.Library
	if o.libDir != "" {
		if lib, err = openLibraryFlag(libDir); err != nil {
			return libraryFlagFailed(stderr, "h3studio serve", libDir, err)
		}
	} else if err := checkRememberedLibrary(remembered); remembered != "" && err != nil {
		// Never made again: on a disk that is not connected it would land
		// on the empty mount point.
		fmt.Fprintf(stderr, "h3studio serve: the library folder %s chosen in the studio can't be used (%s); connect its disk, or pass --library FOLDER\n", remembered, libraryCause(err))
		return 1
	} else if lib, err = studio.OpenLibrary(libDir, nil); err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	uploads, err := os.MkdirTemp("", "h3studio-uploads-")
	if err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	defer os.RemoveAll(uploads)

	cache := cacheDir()
	modelDir := o.modelDir
	if modelDir == "" {
		if modelDir, err = ensureDemoModel(cache); err != nil {
			fmt.Fprintf(stderr, "h3studio serve: the demo checkpoint: %v\n", err)
			return 1
		}
	}
	s, err := studio.New(studio.Options{Engine: realEngine{cacheDir: cache}, Library: lib, Opener: mediaOpener, VideoSink: newVideoSink,
		Device: deviceDescription(), MemoryBytes: memoryBytes(), AppVersion: version})
	if err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	defer s.Close()
	s.Model().Use(modelDir)
	if err := waitForModel(s, 2*time.Minute); err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	jobs := newStudioJobs(s)
	h, err := videoapi.NewHandler(videoapi.ServerOptions{Jobs: jobs, Token: token, Hosts: o.hosts, Origins: o.origins,
		Folders: o.folders, UploadDir: uploads, MaxPending: o.maxPending, PollAfter: o.pollAfter})
	if err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	}
	srv := videoapi.NewHTTPServer(h)
	fmt.Fprintf(stderr, "h3studio serve: %s on http://%s/v1/videos; takes go to %s\n", jobs.ModelName(), ln.Addr(), lib.Dir)
	switch {
	case generated:
		fmt.Fprintf(stderr, "h3studio serve: a new API token was stored in the credential store: %s\n", token)
	case os.Getenv("H3_API_TOKEN") != "":
		fmt.Fprintln(stderr, "h3studio serve: the API token is H3_API_TOKEN")
	default:
		fmt.Fprintf(stderr, "h3studio serve: the API token is the one in the credential store\n")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "h3studio serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	s.Queue().CancelAll()
	fmt.Fprintln(stderr, "h3studio serve: stopped")
	return 0
}

// waitForModel waits until the studio's model is open (or failed).
func waitForModel(s *studio.Studio, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		m := s.Snapshot().Model
		switch {
		case m.Ready:
			return nil
		case m.Err != "":
			return errors.New(m.Err)
		case !m.Loading && !m.Info.Usable && m.Info.Problem != "":
			return errors.New(m.Info.Problem)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the model did not open in time")
}
