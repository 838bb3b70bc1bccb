// Package lora reads LoRA files for the MiniMax-H3 transformer (every key
// format in circulation, from safetensors, validated like checkpoints) and
// turns them into the transformer's run-time updates (dit.Adapters) in
// either checkpoint layout. See docs/lora.md.
//
// A file is classified by its key patterns, never by its name:
//
//   - diffusers/PEFT: transformer_blocks.N.attn.to_q.lora_A[.NAME].weight
//     and lora_B (also to_k, to_v, to_out.0, ff.net.0.proj = [value; gate],
//     ff.net.2, token_refiner.refiner_blocks.N, norm_out.linear);
//   - release names: blocks.N.attn.qkv_proj.lora_A.weight (rows interleaved
//     per head, as the checkpoint's), attn.out_proj, mlp.fc1 = [gate; value],
//     mlp.fc2, adaln_proj.linear, token_refiner.blocks.N,
//     final_layer.adaln_proj.linear;
//   - ComfyUI / ai-toolkit: the release names behind a diffusion_model.
//     prefix, with a contiguous [q; k; v] qkv_proj (ComfyUI's model order);
//   - kohya: lora_unet_blocks_N_attn_qkv_proj.lora_down.weight / lora_up
//     with .alpha (contiguous [q; k; v] like ComfyUI's, which it targets);
//     lora_down/lora_up under dotted names too;
//   - full deltas NAME.diff (weights) and NAME.diff_b (biases);
//
// with optional transformer. or base_model.model. prefixes and an optional
// alpha in __metadata__.
package lora

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"h3studio/engine/dit"
)

// Role is what a tensor of a LoRA file holds for its module.
type Role uint8

// Roles.
const (
	RoleA     Role = iota + 1 // lora_A / lora_down: [rank, in]
	RoleB                     // lora_B / lora_up: [out, rank]
	RoleAlpha                 // .alpha: a scalar
	RoleDiff                  // .diff: the full weight delta [out, in]
	RoleDiffB                 // .diff_b: the full bias delta [out]
)

func (r Role) String() string {
	return [...]string{"?", "lora_A", "lora_B", "alpha", "diff", "diff_b"}[min(int(r), 5)]
}

// Format is a key family.
type Format string

// Key families.
const (
	FormatPEFT    Format = "diffusers/PEFT"
	FormatRelease Format = "release names"
	FormatComfyUI Format = "ComfyUI/ai-toolkit"
	FormatKohya   Format = "kohya"
	FormatDiff    Format = "full deltas"
)

// Key is one parsed tensor name.
type Key struct {
	Raw string
	// Module is the module's dotted name without prefixes, as the file
	// spells it ("transformer_blocks.0.attn.to_q", "blocks.3.mlp.fc1").
	Module  string
	Role    Role
	Prefix  string // "", "transformer.", "diffusion_model.", "base_model.model.", "lora_unet_", …
	Adapter string // PEFT adapter name (lora_A.NAME.weight), "" when absent
	Kohya   bool   // lora_down / lora_up naming
}

var (
	peftSuffix  = regexp.MustCompile(`^(.+)\.lora_([AB])(?:\.([A-Za-z0-9_\-]+))?\.weight$`)
	kohyaSuffix = regexp.MustCompile(`^(.+)\.lora_(down|up)\.weight$`)
	prefixes    = []string{"base_model.model.", "transformer.", "diffusion_model.", "model.diffusion_model.", "dit."}
	kohyaPrefix = regexp.MustCompile(`^lora_(unet|transformer|te)_`)
	kohyaModule = regexp.MustCompile(`^(token_refiner_refiner_blocks|token_refiner_blocks|transformer_blocks|blocks)_(\d+)_(.+)$`)
	kohyaSubs   = map[string]string{
		"attn_qkv_proj": "attn.qkv_proj", "attn_out_proj": "attn.out_proj", "mlp_fc1": "mlp.fc1", "mlp_fc2": "mlp.fc2",
		"adaln_proj_linear": "adaln_proj.linear", "attn_to_q": "attn.to_q", "attn_to_k": "attn.to_k", "attn_to_v": "attn.to_v",
		"attn_to_out_0": "attn.to_out.0", "ff_net_0_proj": "ff.net.0.proj", "ff_net_2": "ff.net.2",
	}
	kohyaStacks = map[string]string{
		"token_refiner_refiner_blocks": "token_refiner.refiner_blocks", "token_refiner_blocks": "token_refiner.blocks",
		"transformer_blocks": "transformer_blocks", "blocks": "blocks",
	}
	kohyaFinal = map[string]string{"final_layer_adaln_proj_linear": "final_layer.adaln_proj.linear", "norm_out_linear": "norm_out.linear"}
)

// ParseKey splits a tensor name into module, role and prefix. It fails on
// a name of no LoRA form; whether the module exists is Resolve's question.
func ParseKey(raw string) (Key, error) {
	k := Key{Raw: raw}
	name := raw
	switch {
	case strings.HasSuffix(name, ".alpha"):
		k.Role, name = RoleAlpha, strings.TrimSuffix(name, ".alpha")
	case strings.HasSuffix(name, ".diff_b"):
		k.Role, name = RoleDiffB, strings.TrimSuffix(name, ".diff_b")
	case strings.HasSuffix(name, ".diff"):
		k.Role, name = RoleDiff, strings.TrimSuffix(name, ".diff")
	default:
		if m := peftSuffix.FindStringSubmatch(name); m != nil {
			k.Role, name, k.Adapter = RoleA, m[1], m[3]
			if m[2] == "B" {
				k.Role = RoleB
			}
		} else if m := kohyaSuffix.FindStringSubmatch(name); m != nil {
			k.Role, name, k.Kohya = RoleA, m[1], true
			if m[2] == "up" {
				k.Role = RoleB
			}
		} else {
			return k, fmt.Errorf("lora: %q is not a LoRA tensor name (want …lora_A[.NAME].weight, lora_B, lora_down/lora_up.weight, .alpha, .diff or .diff_b)", raw)
		}
	}
	if p := kohyaPrefix.FindString(name); p != "" {
		k.Prefix, k.Kohya = p, true
		rest := name[len(p):]
		if f, ok := kohyaFinal[rest]; ok {
			k.Module = f
		} else if m := kohyaModule.FindStringSubmatch(rest); m != nil && kohyaSubs[m[3]] != "" {
			k.Module = kohyaStacks[m[1]] + "." + m[2] + "." + kohyaSubs[m[3]]
		} else {
			return k, fmt.Errorf("lora: %q: kohya module %q names no MiniMax-H3 projection", raw, rest)
		}
		return k, nil
	}
	for changed := true; changed; {
		changed = false
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				k.Prefix += p
				name = name[len(p):]
				changed = true
			}
		}
	}
	if name == "" {
		return k, fmt.Errorf("lora: %q has no module name", raw)
	}
	k.Module = name
	return k, nil
}

// Target is where a module of a LoRA file lands in the transformer.
type Target struct {
	Site dit.Site
	// Part is the q/k/v part (0, 1, 2) a diffusers to_q/to_k/to_v module
	// updates, −1 for a whole module.
	Part int
	// Interleaved is true for a fused qkv_proj whose rows are interleaved
	// per head (release names); false means contiguous [q; k; v] (ComfyUI,
	// kohya). Only for ProjQKV with Part −1.
	Interleaved bool
	// ValueFirst is true for diffusers' ff.net.0.proj ([value; gate]).
	ValueFirst bool
	// Diffusers is true for diffusers module names.
	Diffusers bool
}

var (
	blockModule = regexp.MustCompile(`^(transformer_blocks|blocks|token_refiner\.refiner_blocks|token_refiner\.blocks)\.(\d+)\.(.+)$`)
	subModules  = map[string]struct {
		proj      dit.Proj
		part      int
		diffusers bool
	}{
		"attn.qkv_proj": {dit.ProjQKV, -1, false}, "attn.out_proj": {dit.ProjOut, -1, false},
		"mlp.fc1": {dit.ProjFC1, -1, false}, "mlp.fc2": {dit.ProjFC2, -1, false},
		"adaln_proj.linear": {dit.ProjAdaLN, -1, false},
		"attn.to_q":         {dit.ProjQKV, 0, true}, "attn.to_k": {dit.ProjQKV, 1, true}, "attn.to_v": {dit.ProjQKV, 2, true},
		"attn.to_out.0": {dit.ProjOut, -1, true}, "ff.net.0.proj": {dit.ProjFC1, -1, true}, "ff.net.2": {dit.ProjFC2, -1, true},
	}
)

// Resolve names the transformer module of k. It fails for a module
// MiniMax-H3 does not have (whatever its depth: block indices are checked
// against a config later).
func Resolve(k Key) (Target, error) {
	switch k.Module {
	case "final_layer.adaln_proj.linear":
		return Target{Site: dit.Site{Stack: dit.StackFinal, Proj: dit.ProjAdaLN}, Part: -1}, nil
	case "norm_out.linear":
		return Target{Site: dit.Site{Stack: dit.StackFinal, Proj: dit.ProjAdaLN}, Part: -1, Diffusers: true}, nil
	}
	m := blockModule.FindStringSubmatch(k.Module)
	if m == nil {
		return Target{}, fmt.Errorf("lora: %s: module %q is not a MiniMax-H3 transformer projection", k.Raw, k.Module)
	}
	i, err := strconv.Atoi(m[2])
	if err != nil || i > 1<<20 || (len(m[2]) > 1 && m[2][0] == '0') {
		return Target{}, fmt.Errorf("lora: %s: block index %q", k.Raw, m[2])
	}
	sub, ok := subModules[m[3]]
	if !ok {
		return Target{}, fmt.Errorf("lora: %s: %q is not an adaptable projection of a block (attn.qkv_proj, attn.to_q, …, mlp.fc1, ff.net.2, adaln_proj.linear)", k.Raw, m[3])
	}
	t := Target{Site: dit.Site{Stack: dit.StackBlocks, Block: i, Proj: sub.proj}, Part: sub.part, Diffusers: sub.diffusers}
	if strings.HasPrefix(m[1], "token_refiner") {
		t.Site.Stack = dit.StackRefiner
		if sub.proj == dit.ProjAdaLN {
			return Target{}, fmt.Errorf("lora: %s: the token refiner has no AdaLN projection", k.Raw)
		}
	}
	t.ValueFirst = sub.proj == dit.ProjFC1 && sub.diffusers
	// The release checkpoint interleaves q, k, v per head; ComfyUI's model
	// (and so ComfyUI, ai-toolkit and kohya files) keeps [q; k; v].
	t.Interleaved = sub.proj == dit.ProjQKV && sub.part < 0 && !k.Kohya && !strings.Contains(k.Prefix, "diffusion_model.")
	return t, nil
}

// format is the key family of k.
func (k Key) format(t Target) Format {
	switch {
	case k.Role == RoleDiff || k.Role == RoleDiffB:
		return FormatDiff
	case k.Kohya:
		return FormatKohya
	case strings.Contains(k.Prefix, "diffusion_model."):
		return FormatComfyUI
	case t.Diffusers:
		return FormatPEFT
	}
	return FormatRelease
}
