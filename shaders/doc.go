// Package shaders embeds H3 Studio's Metal Shading Language kernels, compiled
// at run time by the Metal backend (fast-math off).
package shaders
