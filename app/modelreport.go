package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine"
	"h3studio/engine/snapshot"
	"h3studio/ui/studio"
)

// inspectModel describes a model folder without mapping weights, for the
// studio: its report is exactly what `h3studio info` prints (infoText over
// snapshot.Inspect: configs and safetensors headers only), and the tasks,
// name and usability come from the same inspection.
func inspectModel(dir string) studio.ModelInfo {
	info := studio.ModelInfo{Dir: dir, Name: filepath.Base(dir)}
	rep, err := snapshot.Inspect(dir)
	if err != nil {
		info.Problem = problemText(err, dir)
		info.Report = fmt.Sprintf("h3studio info: %v\n", err) // what the command prints (on stderr) for such a folder
		return info
	}
	info.Report = infoText(rep, deviceInfo())
	info.Demo = rep.Demo
	info.Name = rep.Name()
	for _, t := range rep.AvailableTasks() {
		info.Tasks = append(info.Tasks, engine.Task(t))
	}
	info.Usable = len(info.Tasks) > 0
	info.Problem = rep.Unusable()
	return info
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
