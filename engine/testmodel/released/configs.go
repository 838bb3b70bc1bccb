package released

import "h3studio/engine/dit"

// Configs is the released configuration files of one partition ("fl2va"
// or "ref2va") of the original layout, path → JSON content: the
// transformer's from dit.Released(), the text encoder, processors, video
// and audio VAE as MiniMaxAI/MiniMax-H3 publishes them (H3-DIT.md §1.3,
// H3-ENCODERS-VAES.md).
func Configs(partition string) map[string]any {
	d := dit.Released()
	tasks := []string{"t2va", "fl2va"}
	if partition == "ref2va" {
		tasks = []string{"ref2va"}
	}
	processor := map[string]any{
		"size": map[string]any{"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
		"image_mean": []float64{0.5, 0.5, 0.5}, "image_std": []float64{0.5, 0.5, 0.5},
		"processor_class": "Qwen3VLProcessor", "image_processor_type": "Qwen2VLImageProcessorFast",
	}
	videoProcessor := map[string]any{
		"size": map[string]any{"longest_edge": 25165824, "shortest_edge": 4096}, "patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
		"image_mean": []float64{0.5, 0.5, 0.5}, "image_std": []float64{0.5, 0.5, 0.5},
		"processor_class": "Qwen3VLProcessor", "video_processor_type": "Qwen3VLVideoProcessor",
	}
	return map[string]any{
		"model_index.json": map[string]any{
			"_class_name": "MiniMaxH3Pipeline", "_diffusers_version": "0.32.2",
			"text_encoder": []string{"transformers", "MiniMaxH3Qwen3VLHFEncoder"}, "tokenizer": []string{"transformers", "Qwen2TokenizerFast"},
			"video_vae": []string{"diffusers", "MiniMaxH3VideoVAE"}, "audio_vae": []string{"diffusers", "MiniMaxH3AudioVAE"},
			"scheduler": nil, "transformer": []string{"diffusers", "MiniMaxH3DiTModel"}, "processor": []string{"transformers", "Qwen3VLProcessor"},
			"_minimax_h3": map[string]any{"schema_version": 1, "partition": partition, "tasks": tasks, "task_aliases": map[string]any{},
				"sigma_shift_scales": map[string]any{"video": 12.0, "audio": 3.0}},
		},
		"transformer/config.json": map[string]any{
			"_class_name": "MiniMaxH3DiTModel", "_diffusers_version": "0.32.2",
			"hidden_size": d.HiddenSize, "num_layers": d.NumLayers, "token_refiner_num_layers": d.RefinerLayers,
			"num_attention_heads": d.Heads, "attention_head_dim": d.HeadDim, "ffn_hidden_size": d.FFNDim,
			"latents_dim": d.InChannels, "audio_latents_dim": d.AudioInChannels, "patch_size": d.PatchSize[:], "text_dim": d.TextDim,
			"timestep_input_dim": d.FreqDim, "time_embed_hidden_size": d.TimeHiddenDim, "time_embed_dim": d.TimeEmbedDim,
			"adaln_out_features": d.AdaLNWidth(), "final_adaln_out_features": 2 * d.HiddenSize, "rope_inv_freq_len": d.RopeFreqDim,
			"norm_eps": d.NormEps, "qk_norm_eps": d.QKNormEps, "final_norm_eps": d.FinalNormEps,
		},
		"text_encoder/config.json": map[string]any{
			"architectures": []string{"Qwen3VLForConditionalGeneration"}, "model_type": "qwen3_vl",
			"image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652, "vision_end_token_id": 151653,
			"tie_word_embeddings": false,
			"text_config": map[string]any{
				"hidden_size": 5120, "num_hidden_layers": 64, "intermediate_size": 25600, "num_attention_heads": 64,
				"num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 5000000,
				"rope_scaling": map[string]any{"rope_type": "default", "mrope_interleaved": true, "mrope_section": []int{24, 20, 20}},
				"vocab_size":   151936, "attention_bias": false, "max_position_embeddings": 262144, "bos_token_id": 151643, "eos_token_id": 151645,
			},
			"vision_config": map[string]any{
				"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "num_heads": 16, "hidden_act": "gelu_pytorch_tanh",
				"patch_size": 16, "temporal_patch_size": 2, "spatial_merge_size": 2, "num_position_embeddings": 2304,
				"out_hidden_size": 5120, "deepstack_visual_indexes": []int{8, 16, 24}, "in_channels": 3,
			},
		},
		"text_encoder/preprocessor_config.json":       processor,
		"text_encoder/video_preprocessor_config.json": videoProcessor,
		"processor/preprocessor_config.json":          processor,
		"processor/video_preprocessor_config.json":    videoProcessor,
		"tokenizer/tokenizer_config.json":             map[string]any{"tokenizer_class": "Qwen2Tokenizer", "model_max_length": 262144},
		"video_vae/config.json": map[string]any{
			"_class_name": "MiniMaxH3VideoVAE", "_diffusers_version": "0.32.2", "mode": "standalone",
			"source_path": "source", "source_class_name": "AutoencoderKLLegacy", "source_safetensors_path": "model.safetensors",
			"vae_clip_length": 17, "vae_token_drop": 3, "vae_encoder_tiling": 1, "vae_decoder_tiling": 1, "vae_parallel_tiling": 1,
			"vae_tile_size": 256, "vae_tile_overlap_min": 64, "vae_encoder_parallel": 0, "vae_decoder_parallel": 0, "vae_chunk_dim": -1,
			"latent_channels": 24, "latents_mean": videoMean, "latents_std": videoStd,
		},
		"video_vae/source/config.json": map[string]any{
			"_class_name": "AutoencoderKLLegacy", "ch": 128, "ch_mult": []int{1, 2, 2, 4, 4, 8}, "num_res_blocks": 2,
			"space_down": []int{2, 2, 2, 2, 1, 1}, "time_down": []int{1, 2, 2, 1, 1, 1}, "z_channels": 24, "embed_dim": 24,
			"in_channels": 3, "out_ch": 3, "causal_encoder": true, "causal_decoder": false, "padding_mode": "reflect",
			"use_3d_conv": true, "use_t_isolated_gn": true, "pixel_norm_type": "imagenet", "scaling_factor": 1.0, "shift_factor": 0.0,
			"vae_ratio": 16, "vae_ratio_t": 4, "use_vit_decoder": true,
			"vit_decoder_kwargs": map[string]any{"num_layers": 36, "heads": 32, "dim_head": 64, "norm_type": "rms_norm", "norm_affine": true,
				"qk_norm_type": "rms_norm", "qk_norm_affine": false, "ffn_activation_fn": "silu", "ffn_use_gated": true, "rope_theta": 100.0, "rope_dim_ratio": 0.75},
		},
		"audio_vae/config.json": map[string]any{
			"_class_name": "MiniMaxH3AudioVAE", "_diffusers_version": "0.32.2", "output_channel": 2, "sample_rate": 32000,
			"source_config_path": "config.yaml", "source_safetensors_path": "model.safetensors", "source_metadata_path": "metadata.json",
			"latent_channels": 32, "latents_mean": audioMean, "latents_std": audioStd,
		},
		"audio_vae/metadata.json": map[string]any{"metadata": map[string]any{"kwargs": map[string]any{
			"attn_proj": true, "decoder_dim": 1024, "decoder_rates": []int{5, 5, 2, 2, 2, 2, 2}, "decoder_type": "bigvgan",
			"encoder_dim": 64, "encoder_rates": []int{2, 4, 4, 5, 5}, "latent_dim": 2048, "sample_rate": 32000, "vae_latent_channels": 32,
		}}},
	}
}

var (
	videoMean = []float64{0.858090341091156, -0.9606591463088989, 1.0661640167236328, -0.5090325474739075, -0.2727581858634949, -1.3675414323806763, -0.2553254961967468, -0.26907554268836975, -0.5376840829849243, -0.0464097298681736, 0.6657370328903198, 0.19690127670764923, -0.5460608005523682, -0.4035342037677765, -0.23683024942874908, 0.25928452610969543, -0.30133944749832153, 0.211341992020607, -1.1206848621368408, 0.3581933379173279, -0.04225143790245056, 0.2604829967021942, 0.22864092886447906, 0.7056031823158264}
	videoStd  = []float64{1.2223774194717407, 1.2767263650894165, 1.6831774711608887, 1.7549455165863037, 1.5636216402053833, 2.194143533706665, 0.9653137922286987, 1.0569885969161987, 0.841948926448822, 0.7729952931404114, 1.8955937623977661, 0.946841835975647, 0.7996809482574463, 0.44988900423049927, 0.7197399735450745, 0.6936293244361877, 2.961095094680786, 2.7694199085235596, 3.0496184825897217, 2.1088054180145264, 3.276226282119751, 3.1627357006073, 2.2816812992095947, 2.6127843856811523}
	audioMean = []float64{-0.020211687488382354, 0.3876466479950502, -0.04398279799186767, -0.28591514936373, 0.08179686214561671, -0.35782641352446604, 0.040623809960919084, -0.01552534501956604, -0.223362481667332, 0.1821006842509091, 0.2941778783780663, -0.07901167601970885, -0.056815072777201, -0.3699028221860095, -0.31616315591624855, 0.5905951377425391, -0.052139568068853864, 0.013673160263486295, -0.03691647864630577, 0.09732660653298163, -0.3394662328788498, -0.30685677538541667, -0.24504598907458763, -0.034698524462007344, 0.02868032184767538, -0.21217779266454084, -0.1678263169941987, 0.3221287889040614, -0.1223055851554907, 0.4356604928128464, -0.0502599202236253, 0.3979258376211797}
	audioStd  = []float64{1.6895524230479284, 2.76263727217653, 1.7945344281264435, 1.6801681847309828, 1.6390226546605453, 2.7788298348882177, 1.7659090095747236, 1.6199757612137327, 2.6336525640336896, 1.8539356672817833, 2.5056497896915633, 1.811019237886178, 1.9579657790720237, 1.6685498243529284, 1.4922469314453364, 3.298670198067373, 1.9491804496832168, 1.8720003270431442, 1.8334080103291832, 1.6488070416529093, 1.6176957696319716, 1.9131449234774398, 1.5695245398428617, 1.6943659940415912, 1.8318420762504692, 1.5540637421583379, 1.9344930328968526, 1.599198216109855, 1.718045989838149, 1.6307219190837705, 1.8661226051202384, 1.5613768203168363}
)
