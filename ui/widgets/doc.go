// Package widgets holds H3 Studio's custom Fyne widgets: the frame player
// (24 fps playback with play/pause, frame steps, loop and an audio clock),
// the scrub bar with its frame strip, the waveform, keyframe slots and
// reference rows (drop targets with thumbnails and type badges), and thin
// progress bars.
//
// Widgets never start goroutines: playback is driven by a fyne.Animation on
// Fyne's own loop, and everything else reacts to calls on the UI goroutine.
// They know nothing of the studio's state; package ui feeds them.
package widgets
