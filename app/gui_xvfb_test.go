package main

import (
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestXvfbWindow opens the real window under Xvfb at 1440×900 with a fresh
// home folder, as a first start, lets the studio settle (and, in the
// second case, type a prompt and generate a take end to end), screenshots
// the X screen with ImageMagick and checks that the picture is not blank.
//
// It needs xvfb-run and ImageMagick (make deps) and runs when H3_XVFB=1
// (make test-gui, part of make test). Until the engine façade lands, the
// generating case runs on the development fake engine (-fake-engine); the
// LEAD switches it to the demo checkpoint once newGenerator is wired.
func TestXvfbWindow(t *testing.T) {
	if os.Getenv("H3_XVFB") != "1" {
		t.Skip("gui: set H3_XVFB=1 (make test-gui) to open a real window under Xvfb")
	}
	for _, tool := range []string{"xvfb-run", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("gui: %s is missing (make deps installs xvfb and imagemagick)", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "h3studio")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"first-start", nil, []string{`the studio shows "Sample take"`}},
		// The default path: the demo checkpoint and the real engine.
		{"generate-demo", []string{"-selftest-generate"}, []string{"selftest: generated"}},
		// The same through the window on the development fake engine.
		{"generate-fake", []string{"-fake-engine", "-selftest-generate"}, []string{"selftest: generated"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := filepath.Join(dir, c.name)
			os.MkdirAll(home, 0o755)
			shot := filepath.Join(dir, c.name+".png")
			log := filepath.Join(dir, c.name+".log")
			// The app prints "selftest: ready" when the window shows what is
			// wanted and quits when its stdin closes: screenshot in between.
			script := `fifo=$(mktemp -u); mkfifo "$fifo"
"$BIN" -selftest $FLAGS <"$fifo" >"$LOG" 2>&1 & p=$!
exec 3>"$fifo"
for i in $(seq 1 1800); do grep -q "selftest: ready" "$LOG" && break; kill -0 $p 2>/dev/null || break; sleep 0.1; done
import -window root "$SHOT"
exec 3>&-
wait $p; st=$?; rm -f "$fifo"; exit $st`
			cmd := exec.Command("xvfb-run", "-a", "-s", "-screen 0 1440x900x24", "bash", "-c", script)
			cmd.Env = append(os.Environ(), "BIN="+bin, "FLAGS="+strings.Join(c.flags, " "), "LOG="+log, "SHOT="+shot,
				"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
				"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "LANG=en_US.UTF-8")
			out, err := cmd.CombinedOutput()
			logb, _ := os.ReadFile(log)
			if err != nil && c.name == "generate-demo" && (strings.Contains(string(logb), "has no engine yet") || strings.Contains(string(logb), "not in this build yet")) {
				t.Skip("gui: the engine façade is not wired into app/ yet (newGenerator, ensureDemoModel in app/engine.go); generate-fake covers the window meanwhile")
			}
			if err != nil {
				t.Fatalf("window run failed: %v\n%s\n%s", err, out, logb)
			}
			for _, w := range append(c.want, "selftest: ready") {
				if !strings.Contains(string(logb), w) {
					t.Errorf("log lacks %q:\n%s", w, logb)
				}
			}
			if strings.Contains(string(logb), "Error in Fyne call thread") {
				t.Errorf("a call crossed into Fyne outside fyne.Do:\n%s", logb)
			}
			n, bright := colours(t, shot)
			t.Logf("%s: %d distinct colours, %.0f%% non-black", c.name, n, bright*100)
			if n <= 200 || bright < 0.5 {
				t.Errorf("the screenshot looks blank: %d colours, %.0f%% non-black", n, bright*100)
			}
			if strings.HasPrefix(c.name, "generate") {
				checkLibrary(t, filepath.Join(home, "Movies", "H3 Studio"), c.name == "generate-fake")
			}
			if keep := os.Getenv("H3_XVFB_KEEP"); keep != "" {
				b, _ := os.ReadFile(shot)
				os.WriteFile(filepath.Join(keep, c.name+".png"), b, 0o644)
			}
		})
	}
}

func colours(t *testing.T, path string) (int, float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	seen := map[uint32]bool{}
	b := img.Bounds()
	lit := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|bl>>8] = true
			if r|g|bl > 0x0800 {
				lit++
			}
		}
	}
	return len(seen), float64(lit) / float64(b.Dx()*b.Dy())
}

// checkLibrary verifies the generated take landed in the library with
// every file and a sidecar that names its engine, next to the first
// start's sample take (rendered first, through the same queue).
func checkLibrary(t *testing.T, lib string, fake bool) {
	t.Helper()
	ents, err := os.ReadDir(lib)
	if err != nil {
		t.Fatalf("library: %v", err)
	}
	var takes []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			takes = append(takes, e.Name())
		}
	}
	if len(takes) != 2 {
		t.Fatalf("library holds %v, want the sample take and the generated one", takes)
	}
	generated, samples := 0, 0
	for _, take := range takes {
		dir := filepath.Join(lib, take)
		files := []string{"take.json", "audio.wav", "thumb.png", "last.png", "viewer.mjpeg"}
		if _, err := exec.LookPath("ffmpeg"); err == nil {
			files = append(files, "video.mp4") // the media layer's MP4 writer on Linux
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("take %s lacks %s", take, f)
			}
		}
		var m struct {
			Prompt string   `json:"prompt"`
			Frames int      `json:"frames"`
			Sample bool     `json:"sample"`
			Notes  []string `json:"notes"`
			Model  struct {
				Name    string `json:"name"`
				Engine  string `json:"engine"`
				Version string `json:"version"`
			} `json:"model"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "take.json"))
		if err := json.Unmarshal(b, &m); err != nil || m.Frames != 22 || (m.Model.Engine != "") != fake || m.Model.Version == "" {
			t.Errorf("take.json: %v %s", err, b)
		}
		switch {
		case m.Sample:
			samples++
			if len(m.Notes) == 0 || (!fake && !strings.Contains(m.Model.Name, "random weights")) {
				t.Errorf("the sample take does not say what made it: %s", b)
			}
		case strings.Contains(m.Prompt, "red fox"):
			generated++
		}
	}
	if generated != 1 || samples != 1 {
		t.Errorf("%d generated takes and %d sample takes, want 1 and 1", generated, samples)
	}
}
