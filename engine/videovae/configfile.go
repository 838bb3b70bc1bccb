package videovae

import (
	"fmt"
	"path/filepath"

	"h3studio/engine/configfile"
)

// ConfigFile is the video VAE's configuration files as the snapshot report
// reads and checks them: the original wrapper video_vae/config.json with its
// source/config.json, or the diffusers vae/config.json. Each problem is a
// *configfile.Error naming the file and the field.
type ConfigFile struct {
	Path   string // the wrapper or diffusers config.json
	Layout Layout

	LatentChannels          int
	LatentsMean, LatentsStd []float64
	ClipLength              int // pixel frames per encoded clip (17)
	TokenDrop               int // latent frames dropped at the end (3)
	SpatialCompression      int // 16 released
	TemporalCompression     int // 4 released
	TileSize                int // original wrapper: 256
	TileOverlapMin          int // original wrapper: 64
	DecoderLayers           int // ViT decoder blocks
	DecoderHeads            int
	DecoderHeadDim          int

	// Original layout: the source model's config and weights.
	SourceConfig string // video_vae/source/config.json
	WeightsDir   string // video_vae/source (original) or vae (diffusers)
	WeightsFile  string // source_safetensors_path (original), "" for the diffusers index
}

// ReadConfigFile reads the video VAE config of a component folder: dir
// is video_vae/ (original: the wrapper config names the source folder, whose
// config.json is read too) or vae/ (diffusers).
func ReadConfigFile(dir string, layout Layout) (*ConfigFile, error) {
	o, err := configfile.Read(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	if layout != Original {
		return videoVAEDiffusersFrom(o, dir)
	}
	c, err := videoWrapperFrom(o, dir)
	if err != nil {
		return nil, err
	}
	if err := configfile.ReadInto(c.SourceConfig, func(s *configfile.Object) error { return videoSourceFrom(s, c) }); err != nil {
		return nil, err
	}
	if err := checkVideoGeometry(c); err != nil {
		return nil, err
	}
	return c, nil
}

// checkVideoGeometry checks the chunking and tiling values against the
// compression factors, as Config.Validate does: token_drop at most one clip's latents (its decode
// windows would read past the latents), the tile size a multiple of the
// spatial compression and the overlap a smaller one.
func checkVideoGeometry(c *ConfigFile) error {
	drop, tile, overlap := "vae_token_drop", "vae_tile_size", "vae_tile_overlap_min"
	if c.Layout != Original {
		drop = "token_drop"
	}
	if c.TemporalCompression > 0 {
		if chunk := (c.ClipLength + c.TemporalCompression - 1) / c.TemporalCompression; c.TokenDrop > chunk {
			return &configfile.Error{Path: c.Path, Field: drop, Rule: fmt.Sprintf("%d exceeds the %d latents of one %d-frame clip (temporal compression %d)", c.TokenDrop, chunk, c.ClipLength, c.TemporalCompression)}
		}
	}
	if r := c.SpatialCompression; c.TileSize != 0 && r > 0 {
		if c.TileSize%r != 0 {
			return &configfile.Error{Path: c.Path, Field: tile, Rule: fmt.Sprintf("%d is not a multiple of the spatial compression %d", c.TileSize, r)}
		}
		if c.TileOverlapMin%r != 0 || c.TileOverlapMin >= c.TileSize {
			return &configfile.Error{Path: c.Path, Field: overlap, Rule: fmt.Sprintf("%d must be a multiple of the spatial compression %d smaller than the tile size %d", c.TileOverlapMin, r, c.TileSize)}
		}
	}
	return nil
}

// videoWrapperFrom reads the original wrapper config (MiniMaxH3VideoVAE).
func videoWrapperFrom(o *configfile.Object, dir string) (*ConfigFile, error) {
	c := &ConfigFile{Path: o.Path, Layout: Original}
	o.ClassName("MiniMaxH3VideoVAE")
	src := o.OptStr("source_path", "source")
	c.WeightsFile = o.OptStr("source_safetensors_path", "model.safetensors")
	if o.Err() == nil && !configfile.PlainName(src) {
		o.Fail("source_path", "must name a folder inside video_vae/, got %q", src)
	}
	if o.Err() == nil && !configfile.PlainName(c.WeightsFile) {
		o.Fail("source_safetensors_path", "must name a file inside the source folder, got %q", c.WeightsFile)
	}
	c.WeightsDir = filepath.Join(dir, src)
	c.SourceConfig = filepath.Join(c.WeightsDir, "config.json")
	c.LatentChannels = o.PosInt("latent_channels")
	c.LatentsMean = o.Floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.Floats("latents_std", c.LatentChannels)
	c.ClipLength = o.OptInt("vae_clip_length", 1, 1<<16, 17)
	c.TokenDrop = o.OptInt("vae_token_drop", 0, 1<<16, 3)
	c.TileSize = o.OptInt("vae_tile_size", 16, 1<<16, 256)
	c.TileOverlapMin = o.OptInt("vae_tile_overlap_min", 0, 1<<16, 64)
	o.CheckStd(c.LatentsStd)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// videoSourceFrom reads the original source config (AutoencoderKLLegacy).
func videoSourceFrom(s *configfile.Object, c *ConfigFile) error {
	s.ClassName("AutoencoderKLLegacy")
	if e := s.PosInt("embed_dim"); s.Err() == nil && e != c.LatentChannels {
		s.Fail("embed_dim", "is %d but the wrapper's latent_channels is %d", e, c.LatentChannels)
	}
	s.PosInt("ch")
	s.Ints("ch_mult", -1, 1)
	c.SpatialCompression = configfile.Product(s.Ints("space_down", -1, 1))
	c.TemporalCompression = configfile.Product(s.Ints("time_down", -1, 1))
	if s.Has("vae_ratio") {
		if r := s.PosInt("vae_ratio"); s.Err() == nil && r != c.SpatialCompression {
			s.Fail("vae_ratio", "is %d but space_down multiplies to %d", r, c.SpatialCompression)
		}
	}
	if s.Has("vae_ratio_t") {
		if r := s.PosInt("vae_ratio_t"); s.Err() == nil && r != c.TemporalCompression {
			s.Fail("vae_ratio_t", "is %d but time_down multiplies to %d", r, c.TemporalCompression)
		}
	}
	if s.OptBool("use_vit_decoder", true) {
		k := s.Sub("vit_decoder_kwargs", false)
		c.DecoderLayers = k.PosInt("num_layers")
		c.DecoderHeads = k.PosInt("heads")
		c.DecoderHeadDim = k.PosInt("dim_head")
		k.PosFloat("rope_theta")
		k.PosFloat("rope_dim_ratio")
	}
	return s.Err()
}

// videoVAEDiffusersFrom reads vae/config.json (AutoencoderKLMiniMaxH3).
func videoVAEDiffusersFrom(o *configfile.Object, dir string) (*ConfigFile, error) {
	c := &ConfigFile{Path: o.Path, Layout: Diffusers, WeightsDir: dir}
	o.ClassName("AutoencoderKLMiniMaxH3")
	c.LatentChannels = o.PosInt("latent_channels")
	c.LatentsMean = o.Floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.Floats("latents_std", c.LatentChannels)
	o.Ints("block_out_channels", -1, 1)
	o.PosInt("layers_per_block")
	c.SpatialCompression = configfile.Product(o.Ints("spatial_downsample_factors", -1, 1))
	c.TemporalCompression = configfile.Product(o.Ints("temporal_downsample_factors", -1, 1))
	c.DecoderLayers = o.PosInt("decoder_num_layers")
	c.DecoderHeads = o.PosInt("decoder_num_attention_heads")
	c.DecoderHeadDim = o.PosInt("decoder_attention_head_dim")
	c.ClipLength = o.OptInt("clip_length", 1, 1<<16, 17)
	c.TokenDrop = o.OptInt("token_drop", 0, 1<<16, 3)
	o.CheckStd(c.LatentsStd)
	if err := o.Err(); err != nil {
		return nil, err
	}
	if err := checkVideoGeometry(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Summary is the one-line description the snapshot report prints.
func (c *ConfigFile) Summary() string {
	return fmt.Sprintf("%d latent channels, %d× spatial, %d× temporal, %d-layer ViT decoder",
		c.LatentChannels, c.SpatialCompression, c.TemporalCompression, c.DecoderLayers)
}
