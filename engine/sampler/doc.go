// Package sampler is MiniMax-H3's flow-matching sampler: the shifted sigma
// grids, timesteps, the Euler update, keyframe noising, velocity reuse, and
// the seeded initial noise.
//
// It mirrors diffusers' MiniMaxH3Scheduler (schedulers/scheduling_minimax_h3.py
// at commit 58eb52c0) as spec shared/spec/H3-DIT.md §11 states it, with the
// corrections of ERRATA.md F4 (the keyframe mix uses t = float32(0.999) and
// 1−t in float32) and F15 (one request generator, drawn in packed order).
// Every value is float32 with one rounding per reference operation; products
// are rounded explicitly so that no compiler fuses them into FMAs, which makes
// grids and steps bit-identical on every platform. The reference grids of the
// oracle (n ∈ {2,3,4,5,8,10,20,30,50}, video and audio) are reproduced bit for
// bit.
//
// # Conventions
//
// x_σ = (1 − σ)·x0 + σ·ε and t = 1 − σ (t = 1 is clean). The model predicts
// a data-ward velocity v ≈ x0 − ε, so x0 = x_σ + σ·v. Video and audio keep
// separate grids (shift 12 and 3) advanced in lockstep from one forward.
//
// Everything here is safe for concurrent use except a Stream, which is used
// from one goroutine at a time.
//
// # Initial noise
//
// A request's noise comes from one seed (default 42) through a Source:
//
//   - Portable (the default): an infinite stream z_0, z_1, … of float32
//     standard normals that is a pure function of the seed, identical on
//     every platform and backend. Pair j = (z_2j, z_2j+1) is Box–Muller on
//     two SplitMix64 outputs:
//
//     a = mix(seed + (2j+1)·γ), b = mix(seed + (2j+2)·γ), γ = 0x9e3779b97f4a7c15,
//     mix(z): z ^= z>>30; z *= 0xbf58476d1ce4e5b9; z ^= z>>27; z *= 0x94d049bb133111eb; z ^= z>>31
//     (i.e. the sequential SplitMix64 generator started at the seed),
//     u1 = ((a>>11) + 1)·2⁻⁵³ ∈ (0, 1], u2 = (b>>11)·2⁻⁵³ ∈ [0, 1),
//     r = √(−2 ln u1), z_2j = float32(r·cos 2πu2), z_2j+1 = float32(r·sin 2πu2),
//
//     with ln, sin and cos evaluated by this package's own float64 routines
//     (mathx.go) so that no libm or FMA contraction changes a bit. Because
//     value i depends only on (seed, i), large draws are filled in parallel
//     with the same result.
//
//   - H3C: antirez/h3.c's PCG-style generator (spec §11.5), for reproducing
//     h3.c runs: state and increment as h3_rng_seed sets them, each 32-bit
//     draw an XSH-RR output, normals by Box–Muller with u1 = (d+1)/4294967297
//     and u2 = (d+0.5)/4294967296, returning r·cos and keeping r·sin for the
//     next call. h3.c computes cos and sin with the platform libm; this
//     package's portable routines agree with glibc to the float32 result
//     except in rare last-bit ties.
//
// Torch's CPU generator (MT19937 and its vectorised Box–Muller) is not
// offered: its AVX2 transcendental kernels are not reproducible bit for bit,
// and the oracle fixtures inject their noise as inputs anyway.
//
// The draw order follows the reference (ERRATA F15): one generator per
// request, drawing first one noise tensor per visual condition in packed
// order (each in its latent shape [C, T, h, w]), then the video latent
// [C, T, H, W] (patchified afterwards), then the audio rows [2A, C_a]
// directly in row layout. With the H3C source InitialNoise follows h3.c
// instead: separate video and audio generators seeded with the seed, the
// audio drawn as [C_a][2][A] and the conditions each from a generator
// restarted at the seed, drawn in packed-row order.
package sampler
