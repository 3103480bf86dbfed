#!/usr/bin/env python3
"""Builds the reference cases of tests/reference/: tiny configurations of diffusers' PixArt, SD3,
Flux, Wan and HunyuanVideo transformers, of its AutoencoderKL decoder (4 and 16 latent
channels) and of the video VAEs AutoencoderKLWan (Wan 2.1's and Wan 2.2's residual one) and
AutoencoderKLHunyuanVideo, with seeded
random weights; saves each model folder in diffusers' format, the forward's inputs, and
diffusers' outputs in fp32 and bf16.

Pinned to diffusers==0.35.2 (PyPI). Not part of the build or of CI: the files it wrote are
committed, and tests/reference/reference_forward_test.cc reads them. To regenerate:

  pip install --target /tmp/refdeps diffusers==0.35.2 safetensors
  PYTHONPATH=/tmp/refdeps python tests/reference/make_reference.py tests/reference/data

with torch 2.11 (the project's .venv). Writes DIR/<case>/{model/config.json,
model/diffusion_pytorch_model.safetensors, inputs.safetensors, expected_fp32.safetensors,
expected_bf16.safetensors}, and DIR/samplers.safetensors (each family's scheduler stepped over
seeded model outputs). `--samplers-only` rewrites that file alone; `--vae-tiles-only` the VAE cases'
inputs_tiled.safetensors and expected_tiled_fp32.safetensors (diffusers' tiled decode, 64-pixel
tiles, of a 16 x 16 latent) alone; `--wide-only` the image transformers' non-square cases
(inputs_wide.safetensors, expected_wide_{fp32,bf16}.safetensors) alone; `--vae-flops-only` the
VAE decodes' FlopCounterMode counts (vae_decode_flops.json) alone; `--class-parameters-only`
the __init__ parameters and defaults of every class ditbench reads (class_parameters.json)
alone; `--only CASE`
(repeatable) the named cases' folders alone, e.g. `--only sd3_dual`. Cases draw their inputs in
order from one generator, so a new case goes last and leaves the others' files as they are.
"""
import json
import os
import sys

import diffusers
import torch
from safetensors.torch import save_file

PINNED = "0.35.2"
SEED = 1234
# Every parameter gets this much seeded noise on top of diffusers' initialisation, so that
# norms initialised to ones and biases to zeros are told apart by a wrong name mapping.
NOISE = 0.02


def perturb(model):
    gen = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.add_(torch.randn(p.shape, generator=gen) * NOISE)


def randn(*shape, gen):
    return torch.randn(*shape, generator=gen)


def flux_ids(rows, cols, text_tokens):
    img = torch.zeros(rows, cols, 3)
    img[..., 1] = torch.arange(rows)[:, None]
    img[..., 2] = torch.arange(cols)[None, :]
    return img.reshape(rows * cols, 3), torch.zeros(text_tokens, 3)


def cases():
    gen = torch.Generator().manual_seed(SEED)
    out = []

    # PixArt-alpha's structure with micro-conditions and position interpolation; the latent is
    # larger than sample_size, so diffusers rebuilds its position table (base size 8, scale 2).
    pixart = dict(num_attention_heads=4, attention_head_dim=18, in_channels=4, out_channels=8,
                  num_layers=2, cross_attention_dim=72, caption_channels=64, sample_size=16,
                  patch_size=2, interpolation_scale=2, use_additional_conditions=True,
                  norm_type="ada_norm_single", norm_elementwise_affine=False, norm_eps=1e-6,
                  attention_bias=True, activation_fn="gelu-approximate", num_embeds_ada_norm=1000)
    out.append(("pixart", diffusers.PixArtTransformer2DModel, pixart, {
        "hidden_states": randn(2, 4, 20, 20, gen=gen),
        "encoder_hidden_states": randn(2, 8, 64, gen=gen),
        "timestep": torch.tensor([999.0, 261.0]),
        "resolution": torch.tensor([[1024.0, 1024.0], [768.0, 1344.0]]),
        "aspect_ratio": torch.tensor([[1.0], [1.75]]),
    }))

    sd3 = dict(sample_size=16, patch_size=2, in_channels=16, num_layers=2, attention_head_dim=32,
               num_attention_heads=2, joint_attention_dim=48, caption_projection_dim=64,
               pooled_projection_dim=32, out_channels=16, pos_embed_max_size=24)
    out.append(("sd3", diffusers.SD3Transformer2DModel, sd3, {
        "hidden_states": randn(2, 16, 16, 16, gen=gen),
        "encoder_hidden_states": randn(2, 10, 48, gen=gen),
        "pooled_projections": randn(2, 32, gen=gen),
        "timestep": torch.tensor([980.0, 137.5]),
    }))

    flux = dict(patch_size=1, in_channels=64, num_layers=2, num_single_layers=2,
                attention_head_dim=32, num_attention_heads=2, joint_attention_dim=48,
                pooled_projection_dim=32, guidance_embeds=True, axes_dims_rope=(4, 14, 14))
    img_ids, txt_ids = flux_ids(8, 8, 10)
    out.append(("flux", diffusers.FluxTransformer2DModel, flux, {
        "hidden_states": randn(2, 64, 64, gen=gen),
        "encoder_hidden_states": randn(2, 10, 48, gen=gen),
        "pooled_projections": randn(2, 32, gen=gen),
        "timestep": torch.tensor([0.98, 0.3137]),
        "guidance": torch.tensor([3.5, 3.5]),
        "img_ids": img_ids,
        "txt_ids": txt_ids,
    }))

    vae = dict(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 4,
               up_block_types=("UpDecoderBlock2D",) * 4, block_out_channels=(32, 32, 32, 32),
               layers_per_block=1, norm_num_groups=32, sample_size=64)
    # SD's VAE (PixArt): 4 channels, post-quantisation convolution.
    out.append(("vae4", diffusers.AutoencoderKL,
                dict(vae, latent_channels=4, scaling_factor=0.18215),
                {"latent_sample": randn(1, 4, 8, 8, gen=gen)}))
    # Flux's and SD3's VAE: 16 channels, no quantisation convolutions, a shift factor.
    out.append(("vae16", diffusers.AutoencoderKL,
                dict(vae, latent_channels=16, scaling_factor=0.3611, shift_factor=0.1159,
                     use_quant_conv=False, use_post_quant_conv=False),
                {"latent_sample": randn(1, 16, 8, 8, gen=gen)}))
    # SD3.5's RMS norm on queries and keys, without dual attention.
    sd3_qk = dict(sd3, attention_head_dim=16, joint_attention_dim=24, caption_projection_dim=32,
                  pooled_projection_dim=16, qk_norm="rms_norm")
    out.append(("sd3_qknorm", diffusers.SD3Transformer2DModel, sd3_qk, {
        "hidden_states": randn(2, 16, 12, 12, gen=gen),
        "encoder_hidden_states": randn(2, 6, 24, gen=gen),
        "pooled_projections": randn(2, 16, gen=gen),
        "timestep": torch.tensor([500.0, 20.0]),
    }))
    # SD3.5-medium's dual attention (MMDiT-X): a second, image-only self-attention with its own
    # qk norms in block 0; block 1, the last, has none (as SD3.5-medium's last block).
    sd3_dual = dict(sd3, qk_norm="rms_norm", dual_attention_layers=(0,))
    out.append(("sd3_dual", diffusers.SD3Transformer2DModel, sd3_dual, {
        "hidden_states": randn(2, 16, 16, 16, gen=gen),
        "encoder_hidden_states": randn(2, 10, 48, gen=gen),
        "pooled_projections": randn(2, 32, gen=gen),
        "timestep": torch.tensor([731.0, 64.5]),
    }))
    # Wan 2.1's structure at the tiny preset's dimensions (wan2.1-t2v-tiny: head dimension 16,
    # where diffusers' two rotary splits differ), a clip of 2 latent frames of 6 x 10 patches.
    wan = dict(patch_size=(1, 2, 2), num_attention_heads=4, attention_head_dim=16,
               in_channels=16, out_channels=16, text_dim=32, freq_dim=256, ffn_dim=128,
               num_layers=2, cross_attn_norm=True, qk_norm="rms_norm_across_heads", eps=1e-6)
    out.append(("wan", diffusers.WanTransformer3DModel, wan, {
        "hidden_states": randn(2, 16, 2, 12, 20, gen=gen),
        "encoder_hidden_states": randn(2, 16, 32, gen=gen),
        "timestep": torch.tensor([999.0, 261.0]),
    }))
    # HunyuanVideo's structure (token refiner, dual- and single-stream blocks, 3D rotary axes
    # (4, 6, 6) as the tiny preset's), 32 wide to keep the folder small; a clip of 3 latent
    # frames of 6 x 10 patches. Row 0's prompt has 9 tokens and 3 of padding, masked as
    # HunyuanVideoPipeline masks it; row 1's fills all 12. Guidance as the pipeline passes it
    # (guidance_scale x 1000), at scales 4.0 and 5.12 whose inputs bf16 holds exactly (the
    # pipeline's 6000 rounds to 6016, which would move both bf16 outputs alike and hide the
    # arithmetic's error that the bf16 bound checks).
    hunyuan = dict(in_channels=16, out_channels=16, num_attention_heads=2, attention_head_dim=16,
                   num_layers=2, num_single_layers=2, num_refiner_layers=2, mlp_ratio=4.0,
                   patch_size=2, patch_size_t=1, qk_norm="rms_norm", guidance_embeds=True,
                   text_embed_dim=24, pooled_projection_dim=16, rope_theta=256.0,
                   rope_axes_dim=(4, 6, 6))
    out.append(("hunyuan_video", diffusers.HunyuanVideoTransformer3DModel, hunyuan, {
        "hidden_states": randn(2, 16, 3, 12, 20, gen=gen),
        "encoder_hidden_states": randn(2, 12, 24, gen=gen),
        "encoder_attention_mask": torch.tensor([[1.0] * 9 + [0.0] * 3, [1.0] * 12]),
        "pooled_projections": randn(2, 16, gen=gen),
        "timestep": torch.tensor([999.0, 261.0]),
        "guidance": torch.tensor([4000.0, 5120.0]),
    }))
    # Wan 2.1's VAE (AutoencoderKLWan) at a CPU size: widths 8 x (1, 2, 2, 2), one residual
    # block per level (+1), the two deepest levels temporal; a clip of 3 latent frames (9
    # frames) of 4 x 6 latent pixels. Its latent comes from a generator of its own, so the
    # cases after it draw what they would without it.
    wan_vae = dict(base_dim=8, z_dim=16, dim_mult=[1, 2, 2, 2], num_res_blocks=1,
                   temperal_downsample=[False, True, True])
    out.append(("wan_vae", diffusers.AutoencoderKLWan, wan_vae, {
        "latent_sample": randn(1, 16, 3, 4, 6, gen=torch.Generator().manual_seed(81)),
    }))
    # HunyuanVideo's VAE (AutoencoderKLHunyuanVideo) at a CPU size: widths (8, 16, 16, 16) in
    # GroupNorms of 8, one resnet per level (+1); 6 latent frames (21 frames), more than the 4
    # that diffusers decodes in one piece, so its default temporal tiling (5 latent frames every
    # 3, blended over 4 frames) is in the reference. A generator of its own, as wan_vae's.
    hunyuan_vae = dict(block_out_channels=[8, 16, 16, 16], norm_num_groups=8, layers_per_block=1,
                       latent_channels=16)
    out.append(("hunyuan_vae", diffusers.AutoencoderKLHunyuanVideo, hunyuan_vae, {
        "latent_sample": randn(1, 16, 6, 3, 4, gen=torch.Generator().manual_seed(129)),
    }))
    # Wan 2.2's residual VAE (AutoencoderKLWan, is_residual) at a CPU size: decoder widths
    # 4 x (1, 2, 2, 2) (decoder_base_dim apart from base_dim, as Wan 2.2's), one residual block
    # per level (+1), 8 latent channels, 2x2 patches (12 pixel channels): 16x in all. 3 latent
    # frames (9 frames) of 1 x 2 latent pixels keep the files small. A generator of its own.
    wan22_vae = dict(base_dim=8, decoder_base_dim=4, z_dim=8, dim_mult=[1, 2, 2, 2],
                     num_res_blocks=1, temperal_downsample=[False, True, True], is_residual=True,
                     in_channels=12, out_channels=12, patch_size=2, scale_factor_spatial=16,
                     latents_mean=[round(0.1 * i - 0.3, 2) for i in range(8)],
                     latents_std=[round(0.5 + 0.1 * i, 2) for i in range(8)])
    out.append(("wan22_vae", diffusers.AutoencoderKLWan, wan22_vae, {
        "latent_sample": randn(1, 8, 3, 1, 2, gen=torch.Generator().manual_seed(121)),
    }))
    # A value other than the class's default (issue 38): HunyuanVideo with mlp_ratio 2, which
    # narrows the double- and single-stream blocks' MLPs but not the token refiner's (diffusers
    # builds it with its own default, 4). Otherwise hunyuan_video's; a generator of its own.
    hunyuan_mlp2 = dict(hunyuan, mlp_ratio=2.0)
    g = torch.Generator().manual_seed(157)
    out.append(("hunyuan_video_mlp2", diffusers.HunyuanVideoTransformer3DModel, hunyuan_mlp2, {
        "hidden_states": randn(1, 16, 3, 8, 10, gen=g),
        "encoder_hidden_states": randn(1, 12, 24, gen=g),
        "encoder_attention_mask": torch.tensor([[1.0] * 10 + [0.0] * 2]),
        "pooled_projections": randn(1, 16, gen=g),
        "timestep": torch.tensor([500.0]),
        "guidance": torch.tensor([4000.0]),
    }))
    # More values other than the classes' defaults (issue 38), each a generator of its own:
    # PixArt with its blocks' norms at eps 1e-2 (the output norm keeps 1e-6, as diffusers');
    # Wan with eps 1e-2 in its LayerNorms and q/k RMSNorms, 128 timestep features and no norm
    # before cross-attention; HunyuanVideo with a rotary base of 10000.
    g = torch.Generator().manual_seed(163)
    out.append(("pixart_eps", diffusers.PixArtTransformer2DModel, dict(pixart, norm_eps=1e-2), {
        "hidden_states": randn(1, 4, 20, 20, gen=g),
        "encoder_hidden_states": randn(1, 8, 64, gen=g),
        "timestep": torch.tensor([500.0]),
        "resolution": torch.tensor([[1024.0, 1024.0]]),
        "aspect_ratio": torch.tensor([[1.0]]),
    }))
    g = torch.Generator().manual_seed(167)
    wan_variant = dict(wan, eps=1e-2, freq_dim=128, cross_attn_norm=False)
    out.append(("wan_variant", diffusers.WanTransformer3DModel, wan_variant, {
        "hidden_states": randn(1, 16, 2, 12, 20, gen=g),
        "encoder_hidden_states": randn(1, 16, 32, gen=g),
        "timestep": torch.tensor([500.0]),
    }))
    g = torch.Generator().manual_seed(173)
    out.append(("hunyuan_video_theta", diffusers.HunyuanVideoTransformer3DModel,
                dict(hunyuan, rope_theta=10000.0), {
        "hidden_states": randn(1, 16, 3, 8, 10, gen=g),
        "encoder_hidden_states": randn(1, 12, 24, gen=g),
        "encoder_attention_mask": torch.tensor([[1.0] * 12]),
        "pooled_projections": randn(1, 16, gen=g),
        "timestep": torch.tensor([500.0]),
        "guidance": torch.tensor([4000.0]),
    }))
    return out


def run(model, inputs, dtype):
    # As the pipelines pass them: timesteps in fp32 (Flux casts them itself), ids as they are,
    # everything else in the model's dtype.
    cast = {k: (v.to(dtype) if k not in ("img_ids", "txt_ids", "timestep") else v)
            for k, v in inputs.items()}
    with torch.no_grad():
        if isinstance(model, (diffusers.AutoencoderKL, diffusers.AutoencoderKLWan,
                              diffusers.AutoencoderKLHunyuanVideo)):
            return model.decode(cast["latent_sample"]).sample
        kwargs = dict(cast)
        if "resolution" in kwargs:
            kwargs["added_cond_kwargs"] = {"resolution": kwargs.pop("resolution"),
                                           "aspect_ratio": kwargs.pop("aspect_ratio")}
        return model(**kwargs, return_dict=False)[0]


def write_expected(model, inputs, folder, suffix=""):
    """diffusers' output on `inputs` in fp32, then in bf16 (the weights rounded in place):
    folder/expected{suffix}_{fp32,bf16}.safetensors. Returns the fp32 output and diffusers'
    bf16 error against it."""
    expected32 = run(model, inputs, torch.float32)
    expected16 = run(model.to(torch.bfloat16), inputs, torch.bfloat16)
    save_file({"sample": expected32.contiguous()},
              os.path.join(folder, f"expected{suffix}_fp32.safetensors"))
    save_file({"sample": expected16.float().contiguous()},
              os.path.join(folder, f"expected{suffix}_bf16.safetensors"))
    return expected32, ((expected16.float() - expected32).norm() / expected32.norm()).item()


def samplers(root):
    """Each family's scheduler, configured as its pipeline configures it, stepped over seeded
    random model outputs: the model times it asks for and the final sample. Written to
    DIR/samplers.safetensors as <case>_{x,outputs,times,final}."""
    from diffusers import (DPMSolverMultistepScheduler, FlowMatchEulerDiscreteScheduler,
                           UniPCMultistepScheduler)
    import numpy as np

    def calculate_shift(tokens, base_tokens, max_tokens, base_shift, max_shift):
        # FluxPipeline's mu: linear in the image's token count (its module needs transformers).
        slope = (max_shift - base_shift) / (max_tokens - base_tokens)
        return tokens * slope + base_shift - slope * base_tokens
    gen = torch.Generator().manual_seed(SEED + 2)
    pixart = dict(algorithm_type="dpmsolver++", beta_start=0.0001, beta_end=0.02,
                  beta_schedule="linear", lower_order_final=True, num_train_timesteps=1000,
                  prediction_type="epsilon", solver_order=2, solver_type="midpoint",
                  steps_offset=0, thresholding=False, use_karras_sigmas=False)
    flux_dev = dict(base_image_seq_len=256, base_shift=0.5, max_image_seq_len=4096,
                    max_shift=1.15, num_train_timesteps=1000, shift=3.0,
                    use_dynamic_shifting=True)
    # Wan's scheduler_config.json (Wan-AI/Wan2.1-T2V-*-Diffusers): UniPC on flow sigmas; the
    # rest is UniPCMultistepScheduler's defaults (solver_order 2, bh2, predict_x0,
    # lower_order_final, final sigma zero). flow_shift: 3.0 for 480p, 5.0 for 720p.
    wan = dict(num_train_timesteps=1000, prediction_type="flow_prediction", use_flow_sigmas=True,
               solver_order=2, solver_type="bh2", predict_x0=True, lower_order_final=True,
               final_sigmas_type="zero", timestep_spacing="linspace")
    tensors = {}
    for name, steps, tokens in [("pixart_2", 2, 0), ("pixart_5", 5, 0), ("pixart_20", 20, 0),
                                ("sd3_4", 4, 0), ("flux_dev_4", 4, 1024),
                                ("flux_schnell_4", 4, 1024), ("wan_480p_4", 4, 0),
                                ("wan_720p_10", 10, 0), ("wan_480p_1", 1, 0),
                                ("wan_480p_50", 50, 0), ("hunyuan_4", 4, 0),
                                ("hunyuan_50", 50, 0)]:
        family = name.split("_")[0]
        if family == "wan":
            scheduler = UniPCMultistepScheduler(
                **wan, flow_shift=5.0 if name.startswith("wan_720p") else 3.0)
            scheduler.set_timesteps(steps)
        elif family == "hunyuan":
            # HunyuanVideo's scheduler_config.json (shift 7.0); HunyuanVideoPipeline passes
            # sigmas linspace(1, 0, steps + 1) without the last.
            scheduler = FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=7.0)
            scheduler.set_timesteps(steps, sigmas=np.linspace(1.0, 0.0, steps + 1)[:-1])
        elif family == "pixart":
            scheduler = DPMSolverMultistepScheduler(**pixart)
            scheduler.set_timesteps(steps)
        elif family == "sd3":
            scheduler = FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=3.0)
            scheduler.set_timesteps(steps)
        else:
            dev = name.startswith("flux_dev")
            scheduler = FlowMatchEulerDiscreteScheduler(
                **(flux_dev if dev else dict(num_train_timesteps=1000, shift=1.0)))
            sigmas = np.linspace(1.0, 1 / steps, steps)
            mu = calculate_shift(tokens, 256, 4096, 0.5, 1.15) if dev else None
            scheduler.set_timesteps(sigmas=sigmas, mu=mu)
        x = randn(1, 4, 6, 6, gen=gen)
        outputs = randn(steps, 1, 4, 6, 6, gen=gen)
        sample = x.clone()
        for i, t in enumerate(scheduler.timesteps):
            sample = scheduler.step(outputs[i], t, sample, return_dict=False)[0]
        tensors.update({f"{name}_x": x, f"{name}_outputs": outputs,
                        f"{name}_times": scheduler.timesteps.double(),
                        f"{name}_final": sample.contiguous()})
    save_file(tensors, os.path.join(root, "samplers.safetensors"))
    print(f"samplers: {len(tensors) // 4} cases")


VAE_TILE = 64  # pixels, the smallest tile a sweep's vae_tile takes (experiments/trial.h)
TILED_LATENT = 16  # a 128-pixel decode in tiles of 8 latent rows, 6 apart: 3 x 3 tiles


def vae_tiles(root):
    """diffusers' tiled decode of a latent of each VAE case (tiles of VAE_TILE pixels, its
    default overlap of a quarter), from the folder main() saved: DIR/<vae case>/
    inputs_tiled.safetensors (the latent, drawn from a generator of its own so that the other
    cases' inputs stay as they are) and expected_tiled_fp32.safetensors ("sample": the tiled
    decode, "whole": the decode in one piece, which the tiles change)."""
    gen = torch.Generator().manual_seed(64)
    for name in ("vae4", "vae16"):
        folder = os.path.join(root, name)
        model = diffusers.AutoencoderKL.from_pretrained(os.path.join(folder, "model")).eval()
        latent = torch.randn(1, model.config.latent_channels, TILED_LATENT, TILED_LATENT,
                             generator=gen)
        with torch.no_grad():
            plain = model.decode(latent).sample
            model.enable_tiling()
            model.tile_sample_min_size = VAE_TILE
            model.tile_latent_min_size = VAE_TILE // 2 ** (len(model.config.block_out_channels) - 1)
            tiled = model.decode(latent).sample
        save_file({"latent_sample": latent.contiguous()},
                  os.path.join(folder, "inputs_tiled.safetensors"))
        save_file({"sample": tiled.contiguous(), "whole": plain.contiguous()},
                  os.path.join(folder, "expected_tiled_fp32.safetensors"))
        rel = ((tiled - plain).norm() / plain.norm()).item()
        print(f"{name}: tiled decode ({VAE_TILE} px tiles) vs whole rel L2 {rel:.3g}")


def wan_vae_tiles(model, folder):
    """AutoencoderKLWan's tiled decode (VAE_TILE-pixel tiles every 3/4 tile) of a clip of 2
    latent frames of 12 x 12 (2 x 2 tiles), from a generator of its own: the same files as
    vae_tiles() writes."""
    latent = torch.randn(1, model.config.z_dim, 2, 12, 12,
                         generator=torch.Generator().manual_seed(65))
    with torch.no_grad():
        plain = model.decode(latent).sample
        model.enable_tiling(tile_sample_min_height=VAE_TILE, tile_sample_min_width=VAE_TILE,
                            tile_sample_stride_height=VAE_TILE * 3 // 4,
                            tile_sample_stride_width=VAE_TILE * 3 // 4)
        tiled = model.decode(latent).sample
        model.disable_tiling()
    save_file({"latent_sample": latent.contiguous()},
              os.path.join(folder, "inputs_tiled.safetensors"))
    save_file({"sample": tiled.contiguous(), "whole": plain.contiguous()},
              os.path.join(folder, "expected_tiled_fp32.safetensors"))
    rel = ((tiled - plain).norm() / plain.norm()).item()
    print(f"wan_vae: tiled decode ({VAE_TILE} px tiles) vs whole rel L2 {rel:.3g}")


def wide_images(root):
    """Non-square images through the image transformers main() saved, from a generator of its
    own: DIR/<case>/inputs_wide.safetensors and expected_wide_{fp32,bf16}.safetensors. PixArt's
    table interpolated per axis (6 x 10 patches against a base of 8), SD3's crop centred per
    axis (7 x 10 patches of a 24 x 24 table: the top row rounds down), Flux's ids over 6 rows of
    10 columns."""
    gen = torch.Generator().manual_seed(66)
    img_ids, txt_ids = flux_ids(6, 10, 10)
    inputs = {
        "pixart": (diffusers.PixArtTransformer2DModel, {
            "hidden_states": randn(2, 4, 12, 20, gen=gen),
            "encoder_hidden_states": randn(2, 8, 64, gen=gen),
            "timestep": torch.tensor([999.0, 261.0]),
            "resolution": torch.tensor([[96.0, 160.0], [768.0, 1280.0]]),
            "aspect_ratio": torch.tensor([[0.6], [0.6]]),
        }),
        "sd3": (diffusers.SD3Transformer2DModel, {
            "hidden_states": randn(2, 16, 14, 20, gen=gen),
            "encoder_hidden_states": randn(2, 10, 48, gen=gen),
            "pooled_projections": randn(2, 32, gen=gen),
            "timestep": torch.tensor([980.0, 137.5]),
        }),
        "flux": (diffusers.FluxTransformer2DModel, {
            "hidden_states": randn(2, 60, 64, gen=gen),
            "encoder_hidden_states": randn(2, 10, 48, gen=gen),
            "pooled_projections": randn(2, 32, gen=gen),
            "timestep": torch.tensor([0.98, 0.3137]),
            "guidance": torch.tensor([3.5, 3.5]),
            "img_ids": img_ids,
            "txt_ids": txt_ids,
        }),
    }
    for name, (cls, case_inputs) in inputs.items():
        folder = os.path.join(root, name)
        model = cls.from_pretrained(os.path.join(folder, "model")).eval()
        save_file({k: v.contiguous() for k, v in case_inputs.items()},
                  os.path.join(folder, "inputs_wide.safetensors"))
        expected32, rel = write_expected(model, case_inputs, folder, "_wide")
        print(f"{name} wide: output {tuple(expected32.shape)}, diffusers bf16 vs fp32 rel L2 "
              f"{rel:.3g}")


# Latent shapes whose decode FlopCounterMode counts: an image, a clip decoded a latent frame at
# a time (Wan 2.1's and Wan 2.2's residual VAE), a clip in one piece and one in temporal tiles
# (HunyuanVideo: 7 latent frames).
VAE_FLOPS = [("vae4", diffusers.AutoencoderKL, (1, 4, 6, 10)),
             ("vae16", diffusers.AutoencoderKL, (1, 16, 8, 12)),
             ("wan_vae", diffusers.AutoencoderKLWan, (1, 16, 3, 6, 10)),
             ("hunyuan_vae", diffusers.AutoencoderKLHunyuanVideo, (1, 16, 2, 6, 10)),
             ("hunyuan_vae", diffusers.AutoencoderKLHunyuanVideo, (1, 16, 7, 4, 6)),
             ("wan22_vae", diffusers.AutoencoderKLWan, (1, 8, 3, 2, 3))]


def vae_flops(root):
    """FlopCounterMode's count of each VAE case's decode (attention on the math backend, so that
    its products are counted) at the shapes of VAE_FLOPS: DIR/vae_decode_flops.json, a list of
    {"case", "latent", "flops"}."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode
    rows = []
    for name, cls, shape in VAE_FLOPS:
        model = cls.from_pretrained(os.path.join(root, name, "model")).eval()
        with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as count:
            model.decode(torch.zeros(*shape))
        rows.append({"case": name, "latent": list(shape), "flops": count.get_total_flops()})
        print(f"{name} {shape}: {count.get_total_flops()} FLOPs")
    with open(os.path.join(root, "vae_decode_flops.json"), "w") as f:
        json.dump(rows, f, indent=1)


# The classes `ditbench forward` and the weights readers take (model_zoo/shapes/diffusers_config.h).
READ_CLASSES = ["PixArtTransformer2DModel", "SD3Transformer2DModel", "FluxTransformer2DModel",
                "WanTransformer3DModel", "HunyuanVideoTransformer3DModel", "AutoencoderKL",
                "AutoencoderKLWan", "AutoencoderKLHunyuanVideo"]


def class_parameters(root):
    """Every __init__ parameter of each class ditbench reads, with its default as JSON (a
    tuple as a list; "<required>" where there is none), so that a test can check, without
    diffusers, that each reader reads every key the pinned version's class takes."""
    import inspect
    out = {"diffusers": PINNED, "classes": {}}
    for name in READ_CLASSES:
        params = {}
        for p, spec in inspect.signature(getattr(diffusers, name).__init__).parameters.items():
            if p == "self" or spec.kind in (spec.VAR_POSITIONAL, spec.VAR_KEYWORD):
                continue
            default = spec.default
            if default is inspect.Parameter.empty:
                default = "<required>"
            elif isinstance(default, tuple):
                default = list(default)
            params[p] = default
        out["classes"][name] = params
    with open(os.path.join(root, "class_parameters.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"class_parameters.json: {sum(len(v) for v in out['classes'].values())} parameters")


def wan_experts(root):
    """Wan 2.2 A14B's expert switch as diffusers' WanPipeline runs it: two tiny transformers
    (transformer, transformer_2) with boundary_ratio 0.875 and CFG 4.0 then 3.0, UniPC at shift
    3 (48x32, 5 frames), 6 steps from given noise and prompt embeddings; every step's latent
    through callback_on_step_end. Written to DIR/wan_experts/{transformer,transformer_2}/ and
    DIR/wan_experts/steps.safetensors (x, prompt, negative, times, latents). Needs transformers
    (WanPipeline imports it) besides diffusers."""
    from diffusers import WanPipeline, WanTransformer3DModel, UniPCMultistepScheduler
    config = dict(patch_size=(1, 2, 2), num_attention_heads=4, attention_head_dim=16,
                  in_channels=16, out_channels=16, text_dim=32, freq_dim=256, ffn_dim=128,
                  num_layers=2, cross_attn_norm=True, eps=1e-6, rope_max_seq_len=1024)
    folder = os.path.join(root, "wan_experts")
    experts = []
    for i, name in enumerate(["transformer", "transformer_2"]):
        torch.manual_seed(SEED + 10 + i)
        model = WanTransformer3DModel(**config).eval()
        perturb(model)
        model.save_pretrained(os.path.join(folder, name), safe_serialization=True)
        experts.append(model)
    scheduler = UniPCMultistepScheduler(
        num_train_timesteps=1000, prediction_type="flow_prediction", use_flow_sigmas=True,
        solver_order=2, solver_type="bh2", predict_x0=True, lower_order_final=True,
        final_sigmas_type="zero", timestep_spacing="linspace", flow_shift=3.0)
    pipe = WanPipeline(tokenizer=None, text_encoder=None, vae=None, scheduler=scheduler,
                       transformer=experts[0], transformer_2=experts[1], boundary_ratio=0.875)
    gen = torch.Generator().manual_seed(SEED + 12)
    prompt, negative = randn(1, 16, 32, gen=gen), randn(1, 16, 32, gen=gen)
    x = randn(1, 16, 2, 4, 6, gen=gen)  # 5 frames of 32 x 48
    steps, times = [], []
    def record(p, i, t, kw):
        steps.append(kw["latents"].clone()); times.append(float(t)); return kw
    with torch.no_grad():
        pipe(prompt_embeds=prompt, negative_prompt_embeds=negative, latents=x.clone(),
             height=32, width=48, num_frames=5, num_inference_steps=6, guidance_scale=4.0,
             guidance_scale_2=3.0, output_type="latent", callback_on_step_end=record)
    save_file({"x": x, "prompt": prompt, "negative": negative,
               "times": torch.tensor(times, dtype=torch.float64),
               "latents": torch.stack(steps).contiguous()},
              os.path.join(folder, "steps.safetensors"))
    print(f"wan_experts: times {times}")


def main():
    if diffusers.__version__ != PINNED:
        sys.exit(f"make_reference.py: needs diffusers=={PINNED}, found {diffusers.__version__}")
    args, only = [], []
    argv = iter(sys.argv[1:])
    for a in argv:
        if a == "--only":
            only.append(next(argv, ""))
        elif not a.startswith("--"):
            args.append(a)
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "data")
    torch.set_num_threads(1)
    if "--vae-tiles-only" in sys.argv:
        return vae_tiles(root)
    if "--wide-only" in sys.argv:
        return wide_images(root)
    if "--vae-flops-only" in sys.argv:
        return vae_flops(root)
    if "--class-parameters-only" in sys.argv:
        return class_parameters(root)
    if "--wan-experts-only" in sys.argv:
        return wan_experts(root)
    all_cases = cases()
    unknown = set(only) - {name for name, _, _, _ in all_cases}
    if unknown:
        sys.exit(f"make_reference.py: no case named {', '.join(sorted(unknown))}")
    if not only:
        samplers(root)
    if "--samplers-only" in sys.argv:
        return
    for name, cls, config, inputs in all_cases:
        if only and name not in only:
            continue
        torch.manual_seed(SEED)
        model = cls(**config).eval()
        perturb(model)
        folder = os.path.join(root, name)
        model_dir = os.path.join(folder, "model")
        os.makedirs(model_dir, exist_ok=True)
        model.save_pretrained(model_dir, safe_serialization=True)
        if cls in (diffusers.AutoencoderKL, diffusers.AutoencoderKLWan,
                   diffusers.AutoencoderKLHunyuanVideo):
            # the encoder is not needed to decode: keep it small
            state = {k: v.contiguous() for k, v in model.state_dict().items()
                     if not k.startswith(("encoder.", "quant_conv."))}
            save_file(state, os.path.join(model_dir, "diffusion_pytorch_model.safetensors"))
        save_file({k: v.contiguous() for k, v in inputs.items()},
                  os.path.join(folder, "inputs.safetensors"))
        # Before the bf16 run rounds the weights. Not for the residual VAE: diffusers 0.35.2's
        # tiled decode neither unpatchifies nor marks its first frame (ditbench's does both).
        if cls is diffusers.AutoencoderKLWan and not model.config.is_residual:
            wan_vae_tiles(model, folder)
        expected32, rel = write_expected(model, inputs, folder)
        print(f"{name}: output {tuple(expected32.shape)}, |out| {expected32.norm():.4g}, "
              f"diffusers bf16 vs fp32 rel L2 {rel:.3g}")
    if not only:
        vae_tiles(root)
        wide_images(root)
        vae_flops(root)


if __name__ == "__main__":
    main()
