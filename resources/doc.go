// Package resources embeds the app's icons, prompt templates and examples,
// presets and third-party notices.
package resources
