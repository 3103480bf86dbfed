#!/usr/bin/env python3
"""Builds a tiny pipeline folder in diffusers' format, for the reference engine
(python/ditbench_engine_server.py) and its tests, every weight drawn from a seeded generator:

- images (the default): PixArt-alpha, a 2-layer PixArtTransformer2DModel, a 2-layer T5 text
  encoder, a 4-level AutoencoderKL (8 pixels per latent, as the real one) and a DPM-Solver++
  scheduler;
- `--video`: Wan 2.1 text to video, a 2-layer WanTransformer3DModel, a 2-layer UMT5 text
  encoder, an AutoencoderKLWan (8 pixels per latent, 4 frames per latent frame, as the real
  one) and the flow-matching Euler scheduler.

Both take a word-level tokenizer made here from a vocabulary written below. Nothing is
downloaded: the tokenizer is built offline with the `tokenizers` package, and the folder is
written with save_pretrained.

    python make_tiny_pipeline.py OUT_DIR [--seed N] [--video]

A few seconds on a CPU; a 64 x 64 image in 2 steps then takes well under a second, a 32 x 32
video of 9 frames in 2 steps about as long. The same seed writes the same weights. Needs torch,
diffusers==0.35.2 and transformers (scripts/setup --tests installs them into the project's
.venv).
"""
import argparse
import os
import sys

# The words the tokenizer knows; any other word is <unk>. Enough for prompts that differ.
WORDS = """a an the of and with in on at by to from for under over near beside
cat dog bird fish horse cow fox owl bear lion tiger wolf rabbit mouse frog
red orange yellow green blue purple pink black white grey brown gold silver
small large tiny huge old young bright dark soft sharp calm wild happy quiet
tree forest river lake sea mountain hill field garden city street house castle
sky sun moon star cloud rain snow fog night day morning evening winter summer
photo painting drawing sketch portrait landscape picture image render scene
sitting running flying standing sleeping swimming walking reading looking
astronaut robot car boat train bicycle book cup chair table window door lamp""".split()

SPECIAL = ["<pad>", "</s>", "<unk>"]


def make_tokenizer():
    """A T5-style fast tokenizer (lower-cased words, </s> appended) built without a download."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import T5TokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIAL + sorted(set(WORDS)))}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", vocab["</s>"])])
    return T5TokenizerFast(tokenizer_object=tokenizer, extra_ids=0, eos_token="</s>",
                           unk_token="<unk>", pad_token="<pad>", model_max_length=120)


def text_encoder_config(tokenizer):
    """A 2-layer, 32-wide T5 (or UMT5) encoder's configuration for `tokenizer`."""
    return dict(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2,
                num_heads=4, relative_attention_num_buckets=8, dropout_rate=0.0,
                feed_forward_proj="gated-gelu", pad_token_id=0, eos_token_id=1,
                decoder_start_token_id=0)


def make_pipeline(seed):
    import torch
    from diffusers import (AutoencoderKL, DPMSolverMultistepScheduler, PixArtAlphaPipeline,
                           PixArtTransformer2DModel)
    from transformers import T5Config, T5EncoderModel

    tokenizer = make_tokenizer()
    torch.manual_seed(seed)
    text_encoder = T5EncoderModel(T5Config(**text_encoder_config(tokenizer)))
    # sample_size 8 latents x 8 pixels per latent: 64 x 64 by default.
    transformer = PixArtTransformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8,
        num_layers=2, cross_attention_dim=16, caption_channels=32, sample_size=8, patch_size=2,
        norm_type="ada_norm_single", norm_elementwise_affine=False, norm_eps=1e-6,
        attention_bias=True, activation_fn="gelu-approximate", num_embeds_ada_norm=1000,
        use_additional_conditions=False)
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
        block_out_channels=(8, 8, 8, 8), norm_num_groups=4, sample_size=64,
        scaling_factor=0.18215)
    scheduler = DPMSolverMultistepScheduler()
    for model in (text_encoder, transformer, vae):
        model.eval()
    return PixArtAlphaPipeline(tokenizer=tokenizer, text_encoder=text_encoder, vae=vae,
                               transformer=transformer, scheduler=scheduler)


def make_video_pipeline(seed):
    import torch
    from diffusers import (AutoencoderKLWan, FlowMatchEulerDiscreteScheduler, WanPipeline,
                           WanTransformer3DModel)
    from transformers import UMT5Config, UMT5EncoderModel

    tokenizer = make_tokenizer()
    torch.manual_seed(seed)
    text_encoder = UMT5EncoderModel(UMT5Config(**text_encoder_config(tokenizer)))
    transformer = WanTransformer3DModel(
        patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=12, in_channels=16,
        out_channels=16, text_dim=32, freq_dim=256, ffn_dim=32, num_layers=2,
        cross_attn_norm=True, qk_norm="rms_norm_across_heads", rope_max_seq_len=32)
    vae = AutoencoderKLWan(base_dim=3, z_dim=16, dim_mult=[1, 1, 1, 1], num_res_blocks=1,
                           temperal_downsample=[False, True, True])
    scheduler = FlowMatchEulerDiscreteScheduler(shift=3.0)
    for model in (text_encoder, transformer, vae):
        model.eval()
    return WanPipeline(tokenizer=tokenizer, text_encoder=text_encoder, vae=vae,
                       scheduler=scheduler, transformer=transformer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--video", action="store_true", help="a Wan 2.1 text-to-video pipeline")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    pipeline = make_video_pipeline(args.seed) if args.video else make_pipeline(args.seed)
    pipeline.save_pretrained(args.out_dir, safe_serialization=True)
    print(f"wrote a tiny {type(pipeline).__name__} pipeline to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
