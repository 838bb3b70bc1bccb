// Package darwin holds H3 Studio's macOS-only code: the Metal device layer
// (darwin/mtl), AVFoundation media (darwin/avf) and system facts
// (darwin/sysinfo). Objective-C and cgo live only below this folder; every
// file carries `//go:build darwin` except the untagged package docs, so
// Linux builds and tests stay green.
package darwin
