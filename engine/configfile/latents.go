package configfile

// Denormalize is x·std + mean, one latent value mapped with its channel's
// statistics: the pipeline's `latents * latents_std + latents_mean`, the
// product rounded to float32 before the sum.
func Denormalize(x, std, mean float32) float32 { return float32(x*std) + mean }

// Normalize is (x − mean)/std, the inverse map the pipeline applies to
// encoded conditions.
func Normalize(x, std, mean float32) float32 { return (x - mean) / std }
