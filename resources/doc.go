// Package resources embeds the files H3 Studio ships inside its binary: the
// app icon, the prompt-builder templates for the official MiniMax-H3 prompt
// format, and example prompts. Everything here is read-only data reached
// through //go:embed; nothing is generated at run time.
package resources
