package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"h3studio/engine"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot"
	"h3studio/ui/studio"
)

// inspectModel describes a model folder without mapping weights: the
// layout, every component with its checkpoint's tensor count and size (or
// what is wrong with it), and the tasks it can serve. It is the report the
// GUI shows when a folder is chosen; `h3studio info` should print the same
// (LEAD: share this function with cmd_info when it lands).
func inspectModel(dir string) studio.ModelInfo {
	info := studio.ModelInfo{Dir: dir, Name: filepath.Base(dir)}
	var b strings.Builder
	fmt.Fprintf(&b, "model folder: %s\n", dir)
	snap, err := snapshot.Open(dir)
	if err != nil {
		info.Problem = problemText(err, dir)
		fmt.Fprintf(&b, "not usable: %s\n", info.Problem)
		info.Report = b.String()
		return info
	}
	fmt.Fprintf(&b, "layout: %s\n", snap.Layout)
	demoName, isDemo := demoMarker(dir)
	info.Demo = isDemo
	ok := map[snapshot.Partition]map[snapshot.Kind]bool{snapshot.FL2VA: {}, snapshot.Ref2VA: {}}
	for _, p := range []snapshot.Partition{snapshot.FL2VA, snapshot.Ref2VA} {
		fmt.Fprintf(&b, "\n%s:\n", p)
		for _, k := range snapshot.Kinds {
			c := snap.Find(p, k)
			if c == nil {
				fmt.Fprintf(&b, "  %-13s missing\n", k)
				continue
			}
			rel, _ := filepath.Rel(dir, c.Dir)
			switch k {
			case snapshot.Tokenizer, snapshot.Processor:
				files := listFiles(c.Dir)
				fmt.Fprintf(&b, "  %-13s %s (%s)\n", k, rel, strings.Join(files, ", "))
				ok[p][k] = len(files) > 0
				continue
			}
			ck, err := safetensors.ValidateDir(c.Dir)
			if err != nil {
				fmt.Fprintf(&b, "  %-13s %s: %v\n", k, rel, err)
				continue
			}
			fmt.Fprintf(&b, "  %-13s %s: %d tensors, %s\n", k, rel, len(ck.Names()), sizeText(ck.TotalBytes()))
			ck.Close()
			ok[p][k] = true
		}
	}
	complete := func(p snapshot.Partition) bool {
		for _, k := range snapshot.Kinds {
			if !ok[p][k] {
				return false
			}
		}
		return true
	}
	var missing []string
	if complete(snapshot.FL2VA) {
		info.Tasks = append(info.Tasks, engine.TaskT2VA, engine.TaskFL2VA)
	} else {
		for _, k := range snapshot.Kinds {
			if !ok[snapshot.FL2VA][k] {
				missing = append(missing, string(k))
			}
		}
	}
	if complete(snapshot.Ref2VA) {
		info.Tasks = append(info.Tasks, engine.TaskRef2VA)
	}
	var tasks []string
	for _, t := range info.Tasks {
		tasks = append(tasks, string(t))
	}
	sort.Strings(tasks)
	switch {
	case len(info.Tasks) == 0:
		info.Problem = "the FL2VA partition lacks " + strings.Join(missing, ", ")
		fmt.Fprintf(&b, "\ntasks: none yet (%s)\n", info.Problem)
	default:
		fmt.Fprintf(&b, "\ntasks: %s\n", strings.Join(tasks, ", "))
		info.Usable = true
	}
	switch {
	case info.Demo:
		info.Name = demoName
	case len(info.Tasks) == 3:
		info.Name = "MiniMax-H3 FL2VA + Ref2VA"
	case len(info.Tasks) == 2:
		info.Name = "MiniMax-H3 FL2VA"
	}
	info.Report = b.String()
	return info
}

// demoMarker reads the "_h3studio" block the demo checkpoint writer puts in
// model_index.json ({"demo": true, "name": …}).
func demoMarker(dir string) (string, bool) {
	for _, p := range []string{filepath.Join(dir, "FL2VA", "model_index.json"), filepath.Join(dir, "model_index.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var mi struct {
			H3Studio *struct {
				Demo bool   `json:"demo"`
				Name string `json:"name"`
			} `json:"_h3studio"`
		}
		if json.Unmarshal(b, &mi) == nil && mi.H3Studio != nil && mi.H3Studio.Demo {
			name := mi.H3Studio.Name
			if name == "" {
				name = "MiniMax-H3 demo model (tiny random weights)"
			}
			return name, true
		}
	}
	return "", false
}

func problemText(err error, dir string) string {
	switch {
	case errors.Is(err, snapshot.ErrNotSnapshot):
		return "it holds none of FL2VA/, Ref2VA/, transformer/, text_encoder/, vae/, audio_vae/ — choose the folder that `hf download MiniMaxAI/MiniMax-H3` created"
	case errors.Is(err, os.ErrNotExist):
		return dir + " does not exist"
	}
	return err.Error()
}

func listFiles(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var n []string
	for _, e := range ents {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n = append(n, e.Name())
		}
	}
	if len(n) > 4 {
		n = append(n[:4], fmt.Sprintf("%d more", len(n)-4))
	}
	return n
}

func sizeText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
