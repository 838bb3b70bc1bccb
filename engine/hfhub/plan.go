package hfhub

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"h3studio/engine/snapshot"
)

// ErrInvalid marks a request that cannot be right whatever the network does
// (an unknown task, a malformed revision).
var ErrInvalid = errors.New("invalid request")

// DefaultTasks are downloaded when none are named: the FL2VA partition
// (text to video+audio and first/last frame).
var DefaultTasks = []snapshot.Task{snapshot.T2VA, snapshot.FL2VAT}

// ParseTasks reads a comma-separated task list ("t2va,fl2va,ref2va").
func ParseTasks(s string) ([]snapshot.Task, error) {
	var out []snapshot.Task
	seen := map[snapshot.Task]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		t := snapshot.Task(f)
		known := false
		for _, k := range snapshot.Tasks {
			known = known || k == t
		}
		if !known {
			names := make([]string, len(snapshot.Tasks))
			for i, k := range snapshot.Tasks {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("%w: unknown task %q (tasks: %s)", ErrInvalid, f, strings.Join(names, ", "))
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no task named", ErrInvalid)
	}
	return out, nil
}

// rootIndex is the repo's top-level model_index.json, part of every set.
const rootIndex = "model_index.json"

// Select returns the files of the tree listing the tasks need, in path order.
// The base partition (FL2VA/) is needed whole: it holds the components every
// task shares. Another partition adds its top-level files and those of its
// component folders that differ from the base partition's folder of the same
// name; a folder identical file by file (same paths, same oids) is shared.
func Select(entries []Entry, tasks []snapshot.Task) ([]Entry, error) {
	base := string(snapshot.FL2VA) + "/"
	byPath := map[string]Entry{}
	for _, e := range entries {
		byPath[e.Path] = e
	}
	if _, ok := byPath[rootIndex]; !ok {
		return nil, fmt.Errorf("the repo has no %s: not a MiniMax-H3 repository", rootIndex)
	}
	want := map[string]bool{rootIndex: true}
	nbase := 0
	for p := range byPath {
		if strings.HasPrefix(p, base) {
			want[p] = true
			nbase++
		}
	}
	if nbase == 0 {
		return nil, fmt.Errorf("the repo has no %s folder: not the native MiniMax-H3 layout", snapshot.FL2VA)
	}
	for _, t := range tasks {
		part := string(snapshot.PartitionOf(t))
		if part == string(snapshot.FL2VA) {
			continue
		}
		prefix := part + "/"
		folders := map[string][]Entry{} // component folder -> its files
		found := false
		for p, e := range byPath {
			rest, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			found = true
			comp, _, nested := strings.Cut(rest, "/")
			if !nested {
				want[p] = true
				continue
			}
			folders[comp] = append(folders[comp], e)
		}
		if !found {
			return nil, fmt.Errorf("the repo has no %s folder, which task %s needs", part, t)
		}
		for comp, files := range folders {
			if sameFolder(byPath, files, prefix+comp+"/", base+comp+"/") {
				continue
			}
			for _, e := range files {
				want[e.Path] = true
			}
		}
	}
	out := make([]Entry, 0, len(want))
	for p := range want {
		out = append(out, byPath[p])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// sameFolder reports whether the files under a (given) equal, path for path
// and oid for oid, the files under b.
func sameFolder(byPath map[string]Entry, files []Entry, a, b string) bool {
	nb := 0
	for p := range byPath {
		if strings.HasPrefix(p, b) {
			nb++
		}
	}
	if nb != len(files) {
		return false
	}
	for _, e := range files {
		o, ok := byPath[b+strings.TrimPrefix(e.Path, a)]
		if !ok || o.OID != e.OID || o.Etag() != e.Etag() {
			return false
		}
	}
	return true
}
