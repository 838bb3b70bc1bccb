package main

import "os/exec"

// reveal selects a file or folder in a Finder window.
func reveal(path string) error { return exec.Command("open", "-R", path).Run() }
