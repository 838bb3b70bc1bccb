//go:build !darwin

package main

import "h3studio/ui/studio"

// moveToTrash moves path into the freedesktop.org trash (the studio's
// MoveToTrash), so file managers can restore it.
var moveToTrash = studio.MoveToTrash
