package studio

import (
	"os"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// libWatcher follows the library folder (its top level: one folder per
// take) with fsnotify, so a take folder moved away or deleted in the Finder
// leaves the list, and one moved in appears, without Reload. Events are
// debounced: the studio's own saves and a large copy send many.
type libWatcher struct {
	fs       *fsnotify.Watcher
	settle   *debouncer // runs changed
	onChange func()

	mu     sync.Mutex
	dir    string
	closed bool
}

func newLibWatcher(debounce time.Duration, onChange func()) (*libWatcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if debounce <= 0 {
		debounce = 300 * time.Millisecond
	}
	w := &libWatcher{fs: fw, onChange: onChange}
	w.settle = newDebouncer(debounce, w.changed)
	go w.loop()
	return w, nil
}

// follow watches dir instead of the folder watched before.
func (w *libWatcher) follow(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || dir == w.dir {
		return
	}
	if w.dir != "" {
		w.fs.Remove(w.dir)
	}
	w.dir = ""
	if w.fs.Add(dir) == nil {
		w.dir = dir
	}
}

// loop reads the folder again after any change but a mode change, and
// after an overflow.
func (w *libWatcher) loop() { drainWatch(w.fs, ignoreChmod(w.settle.poke), w.settle.poke) }

// changed is a quiet moment after changes: the folder is read again.
func (w *libWatcher) changed() {
	w.mu.Lock()
	dir := w.dir
	w.mu.Unlock()
	if dir != "" {
		if _, err := os.Stat(dir); err != nil {
			// The library folder itself went (its disk was
			// disconnected): the watch is gone with it.
			w.mu.Lock()
			w.dir = ""
			w.mu.Unlock()
		}
	}
	w.onChange()
}

func (w *libWatcher) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.settle.stop()
	w.fs.Close()
}

// takeGone reports whether a take's folder has left the library (moved
// away or deleted outside the app), and if so drops it from the list and
// says so: an action on it would otherwise fail with a message about
// something else (an MP4 writer, a last frame).
func (s *Studio) takeGone(t Take) bool {
	if _, err := os.Stat(t.Dir); err == nil {
		return false
	}
	s.update(func() {
		if _, i, ok := s.takeLocked(t.ID); ok {
			s.takes = append(s.takes[:i:i], s.takes[i+1:]...)
		}
		if s.viewer.TakeID == t.ID {
			s.viewerSeq++
			s.viewer = Viewer{}
		}
		s.noticeLocked(Warn, "“"+t.Meta.Title+"” is no longer in the library: its folder was moved or deleted outside H3 Studio.", "")
	})
	return true
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
