package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"h3studio/resources"
	"h3studio/ui"
	"h3studio/ui/sound"
	"h3studio/ui/studio"
)

// version is the app's version (stamped by the release build with
// -ldflags "-X main.version=…").
var version = "0.1.0-dev"

// appID is the bundle identifier (Info.plist's CFBundleIdentifier).
const appID = "studio.h3.H3Studio"

// runGUI opens the studio window.
func runGUI(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("h3studio", stderr,
		"usage: h3studio [flags]  (opens the studio; `h3studio help` lists the commands)",
	)
	modelDir := fs.String("model", "", "model snapshot `folder` (default: the one chosen last time, else the demo checkpoint)")
	libDir := fs.String("library", "", "library `folder` (default: ~/Movies/H3 Studio)")
	fake := fs.Bool("fake-engine", false, "developer: run on the development fake engine (synthetic, clearly marked output)")
	selftest := fs.Bool("selftest", false, "developer: drive a first start, print \"selftest: ready\" and quit when stdin closes (the Xvfb test screenshots in between)")
	selfGen := fs.Bool("selftest-generate", false, "developer: with -selftest, generate a take first")
	selfRun := fs.Bool("selftest-running", false, "developer: with -selftest-generate, be ready while the take is denoising (for screenshots of progress)")
	if err := fs.Parse(dropPSN(args)); err != nil {
		return 2
	}
	if *libDir != "" {
		// A --library that can't be used is refused before a window opens,
		// as the CLI's contract says.
		if _, err := openLibraryFlag(*libDir); err != nil {
			return libraryFlagFailed(stderr, "h3studio", *libDir, err)
		}
	}

	a := app.NewWithID(appID)
	a.Settings().SetTheme(ui.NewTheme())
	a.SetIcon(fyne.NewStaticResource("icon.png", resources.Icon()))

	prefs := loadPrefs()
	cache := cacheDir()
	library, libNotice, err := openLibrary(*libDir, prefs.LibraryDir, defaultLibrary())
	if err != nil && *libDir != "" {
		return libraryFlagFailed(stderr, "h3studio", *libDir, err)
	} else if err != nil {
		fmt.Fprintln(stderr, "h3studio:", err)
		return 1
	}
	var eng studio.Engine = realEngine{cacheDir: cache}
	if *fake {
		eng = fakeEngine(cache)
	}
	s, err := studio.New(studio.Options{
		Engine: eng, Library: library, Opener: mediaOpener, VideoSink: newVideoSink,
		Device: deviceDescription(), MemoryBytes: memoryBytes(), AppVersion: version, Watch: true, Sample: studio.SampleClip,
	})
	if err != nil {
		fmt.Fprintln(stderr, "h3studio:", err)
		return 1
	}

	w := a.NewWindow("H3 Studio")
	if *fake {
		w.SetTitle("H3 Studio — development fake engine")
	}
	out := &sound.Output{OnNotice: func(msg string) { s.Notify(studio.Warn, msg) }}
	models := newModels(a, s, prefs)
	api := newLocalAPI(s, prefs)
	remote := remoteSetting{s: s, prefs: prefs}
	win := ui.New(w, s, ui.Options{Version: version, Reveal: reveal, Sound: out, Prefs: prefs, Models: models, LocalAPI: api, Server: remote})
	if url, kind, shared, on := remote.Current(); on {
		if err := remote.connect(url, kind, shared); err != nil {
			s.Notify(studio.Warn, "Run on server is off for now: "+err.Error())
		}
	}
	if prefs.LocalAPI {
		if err := api.start(); err != nil {
			s.Notify(studio.Warn, "The local API could not start: "+err.Error())
		}
	}

	// The model: the command line, else the last one chosen, else (a first
	// start) the demo checkpoint with settings that suit it.
	firstStart := prefs.path == "" || !prefs.existed
	switch {
	case *modelDir != "":
		s.Model().Use(*modelDir)
	case prefs.ModelDir != "" && exists(prefs.ModelDir):
		s.Model().Use(prefs.ModelDir)
	default:
		if msg := missingModelNotice(prefs.ModelDir); msg != "" {
			s.Notify(studio.Warn, msg) // the choice is kept for the next start
		}
		s.Model().UseDemo()
		s.Queue().RenderSampleTake() // a real take behind the drawn placeholder, when the library is empty
		if !*selftest {
			// No model chosen: the Models window offers what is on the disk
			// (an `hf download` snapshot) or a download, while the demo works.
			go func() {
				models.ScanNow()
				fyne.Do(win.ShowModels)
			}()
		}
	}
	if libNotice != "" {
		s.OfferLibraryChoice(libraryChoice(libNotice, prefs.LibraryDir, defaultLibrary(), library.Dir, prefs.SetLibraryDir))
	}
	if prefs.kept != "" {
		s.Offer(studio.Warn, prefs.problem, settingsChoices(prefs.kept, reveal, moveToTrash, s.Notify)...)
	} else if prefs.problem != "" {
		s.Notify(studio.Warn, prefs.problem)
	}
	stopSaving := keepDraft(s, prefs, firstStart, nil)

	a.Lifecycle().SetOnStopped(func() {
		win.Stop()
		stopSaving()
		api.stop()
		s.Close()
	})
	w.Resize(fyne.NewSize(1400, 860))
	w.CenterOnScreen()
	if *selftest {
		go runSelftest(a, s, *selfGen, *selfRun, stdout, stderr)
	}
	w.ShowAndRun()
	return selftestStatus
}

// openLibrary opens the library folder: the command line's, else the one
// chosen in Settings…, else ~/Movies/H3 Studio. A chosen folder that can't
// be opened does not stop the app: the default library is used for this
// run, the notice says so (the window offers the choices of
// libraryChoice), and the choice stays in the settings for the next start.
// A chosen folder that is gone, or on a disk that is not connected, is
// never made again nor written into (checkRememberedLibrary): a library
// made on an empty mount point would hide the real one. When not even the
// default can be made (a read-only home, ~/Movies a file), a temporary
// library is used for the run, and the notice says where.
func openLibrary(cmdline, chosen, def string) (lib *studio.Library, notice string, err error) {
	dir := cmdline
	if dir == "" {
		dir = chosen
	}
	if dir == "" {
		dir = def
	}
	if cmdline != "" {
		lib, err = openLibraryFlag(dir)
		return lib, "", err
	}
	var why string
	if dir == chosen && dir != def {
		if cerr := checkRememberedLibrary(dir); errors.Is(cerr, errDiskMissing) {
			why = fmt.Sprintf("The library folder %s can't be found: the disk %s is not connected; nothing was written there.", dir, volumeOf(dir))
		} else if errors.Is(cerr, os.ErrNotExist) {
			why = fmt.Sprintf("The library folder %s can't be found (moved, or its disk is not connected); it was not made again.", dir)
		} else if lib, err = studio.OpenLibrary(dir, nil); err == nil {
			return lib, "", nil
		} else {
			why = fmt.Sprintf("The library folder %s can't be opened (%s).", dir, errorCause(err))
		}
		lib, derr := studio.OpenLibrary(def, nil)
		if derr == nil {
			return lib, why + fmt.Sprintf(" Takes are saved in %s for now: connect its disk and retry, or choose another library.", def), nil
		}
		err, dir = derr, def
	} else if lib, err = studio.OpenLibrary(dir, nil); err == nil {
		return lib, "", nil
	}
	tmp, terr := os.MkdirTemp("", "H3 Studio Library-")
	if terr != nil {
		return nil, "", err
	}
	if lib, terr = studio.OpenLibrary(tmp, nil); terr != nil {
		return nil, "", err
	}
	if why == "" {
		why = fmt.Sprintf("The library folder %s can't be made (%s).", dir, errorCause(err))
	} else {
		why += fmt.Sprintf(" The default library %s can't be made either (%s).", dir, errorCause(err))
	}
	return lib, why + fmt.Sprintf(" Takes are kept in the temporary folder %s for this run only: choose a library folder to keep them.", tmp), nil
}

// missingModelNotice says why a remembered model folder is not used ("" when
// none was remembered).
func missingModelNotice(dir string) string {
	if dir == "" {
		return ""
	}
	return "The model folder " + dir + " can't be found (moved, or its disk is not connected), so the demo checkpoint is used for now. File ▸ Open Model Folder… chooses it again."
}

// errorCause is the innermost reason of a file error ("permission denied").
func errorCause(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// dropPSN removes the -psn_… argument macOS passes to apps started by the
// Finder.
func dropPSN(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-psn_") {
			out = append(out, a)
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// defaultLibrary is ~/Movies/H3 Studio.
func defaultLibrary() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "H3 Studio")
	}
	return filepath.Join(home, "Movies", "H3 Studio")
}

// ratesFile is where the engine keeps the throughputs it measured on this
// Mac between runs (time estimates from a new process's first take).
func ratesFile() string { return filepath.Join(cacheDir(), "rates.json") }

// cacheDir holds the demo checkpoint (~/Library/Caches/H3 Studio on macOS).
func cacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "H3 Studio")
}
