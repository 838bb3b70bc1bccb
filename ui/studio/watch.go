package studio

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher follows the files a draft uses and the model folder with
// fsnotify. It watches folders, not files (editors save by replacing files,
// which drops a file watch), ignores attribute-only changes (Spotlight,
// backups), and debounces per file: a large copy sends hundreds of writes,
// and a model download thousands, so a callback runs only after a quiet
// period. Output folders (the library) are never watched.
type watcher struct {
	fs       *fsnotify.Watcher
	debounce time.Duration
	onFile   func(path string) // a media file changed, appeared or vanished
	onModel  func()            // something under the model folder changed

	mu        sync.Mutex
	files     map[string]bool // media files of interest
	dirs      map[string]bool // folders watched for media
	modelDir  string
	modelDirs map[string]bool
	timers    map[string]*time.Timer
	closed    bool
}

// modelDepth is how deep the model folder is watched: root, partitions
// (FL2VA/), components (transformer/), video_vae/source.
const modelDepth = 3

func newWatcher(debounce time.Duration, onFile func(string), onModel func()) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{fs: fw, debounce: debounce, onFile: onFile, onModel: onModel,
		files: map[string]bool{}, dirs: map[string]bool{}, modelDirs: map[string]bool{}, timers: map[string]*time.Timer{}}
	go w.loop()
	return w, nil
}

func (w *watcher) loop() { drainWatch(w.fs, w.event, w.revalidate) }

// revalidate schedules a check of every watched file and the model folder:
// after an overflow or a vanished folder, events may have been lost.
func (w *watcher) revalidate() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for f := range w.files {
		w.scheduleLocked(f, func() { w.onFile(f) })
	}
	if w.modelDir != "" {
		w.scheduleLocked("\x00model", w.onModel)
	}
}

// debouncer runs f once things are quiet: delay after the last of a burst
// of pokes. After stop, nothing pending or poked later runs.
type debouncer struct {
	delay time.Duration
	f     func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func newDebouncer(delay time.Duration, f func()) *debouncer {
	return &debouncer{delay: delay, f: f}
}

// poke (re)starts the wait before f runs.
func (d *debouncer) poke() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if d.timer != nil {
		d.timer.Reset(d.delay)
		return
	}
	d.timer = time.AfterFunc(d.delay, func() {
		d.mu.Lock()
		d.timer = nil
		stopped := d.stopped
		d.mu.Unlock()
		if !stopped {
			d.f()
		}
	})
}

func (d *debouncer) stop() {
	d.mu.Lock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
}

// drainWatch hands each of fw's events to onEvent and calls onError on
// each of its errors (an overflow: events were lost), until fw is closed.
func drainWatch(fw *fsnotify.Watcher, onEvent func(fsnotify.Event), onError func()) {
	for {
		select {
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			onEvent(ev)
		case _, ok := <-fw.Errors:
			if !ok {
				return
			}
			onError()
		}
	}
}

// ignoreChmod is an event handler calling f on every event but a change
// of mode, which changes no content.
func ignoreChmod(f func()) func(fsnotify.Event) {
	return func(ev fsnotify.Event) {
		if ev.Op != fsnotify.Chmod {
			f()
		}
	}
}

func (w *watcher) event(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	p := filepath.Clean(ev.Name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.files[p] {
		w.scheduleLocked(p, func() { w.onFile(p) })
	}
	if w.modelDir != "" && within(p, w.modelDir) {
		if ev.Has(fsnotify.Create) {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				w.addModelTreeLocked(p, depthBelow(p, w.modelDir))
			}
		}
		w.scheduleLocked("\x00model", w.onModel)
	}
}

func (w *watcher) scheduleLocked(key string, fn func()) {
	if t, ok := w.timers[key]; ok {
		t.Reset(w.debounce)
		return
	}
	w.timers[key] = time.AfterFunc(w.debounce, func() {
		w.mu.Lock()
		delete(w.timers, key)
		closed := w.closed
		w.mu.Unlock()
		if !closed {
			fn()
		}
	})
}

// setFiles replaces the set of media files followed.
func (w *watcher) setFiles(paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	want := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		want[p] = true
		dirs[filepath.Dir(p)] = true
	}
	w.files = want
	for d := range w.dirs {
		if !dirs[d] && !w.modelDirs[d] {
			w.fs.Remove(d)
		}
	}
	for d := range dirs {
		if !w.dirs[d] && !w.modelDirs[d] {
			w.fs.Add(d) // a folder that can't be watched (gone) is simply not followed
		}
	}
	w.dirs = dirs
}

// setModel follows a model folder ("" for none).
func (w *watcher) setModel(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for d := range w.modelDirs {
		if !w.dirs[d] {
			w.fs.Remove(d)
		}
	}
	w.modelDirs = map[string]bool{}
	w.modelDir = ""
	if dir == "" {
		return
	}
	w.modelDir = filepath.Clean(dir)
	w.addModelTreeLocked(w.modelDir, 0)
}

func (w *watcher) addModelTreeLocked(dir string, depth int) {
	if depth > modelDepth || w.modelDirs[dir] {
		return
	}
	if err := w.fs.Add(dir); err != nil {
		return
	}
	w.modelDirs[dir] = true
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			w.addModelTreeLocked(filepath.Join(dir, e.Name()), depth+1)
		}
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	for _, t := range w.timers {
		t.Stop()
	}
	w.mu.Unlock()
	w.fs.Close()
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

func depthBelow(p, dir string) int {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." {
		return 0
	}
	return strings.Count(rel, string(filepath.Separator)) + 1
}
