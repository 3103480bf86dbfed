#!/usr/bin/env python3
"""Builds a tiny PixArt-alpha pipeline folder in diffusers' format, for the reference engine
(python/ditbench_engine_server.py) and its tests: a 2-layer PixArtTransformer2DModel, a 2-layer
T5 text encoder with a word-level tokenizer made here from a vocabulary written below, a
4-level AutoencoderKL (8 pixels per latent, as the real one) and a DPM-Solver++ scheduler,
every weight drawn from a seeded generator. Nothing is downloaded: the tokenizer is built
offline with the `tokenizers` package, and the folder is written with save_pretrained.

    python make_tiny_pipeline.py OUT_DIR [--seed N]

A few seconds on a CPU; a 64 x 64 image in 2 steps then takes well under a second. The same
seed writes the same weights. Needs torch, diffusers==0.35.2 and transformers (scripts/setup
--tests installs them into the project's .venv).
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


def make_pipeline(seed):
    import torch
    from diffusers import (AutoencoderKL, DPMSolverMultistepScheduler, PixArtAlphaPipeline,
                           PixArtTransformer2DModel)
    from transformers import T5Config, T5EncoderModel

    tokenizer = make_tokenizer()
    torch.manual_seed(seed)
    text_encoder = T5EncoderModel(T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
        relative_attention_num_buckets=8, dropout_rate=0.0, feed_forward_proj="gated-gelu",
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0))
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    pipeline = make_pipeline(args.seed)
    pipeline.save_pretrained(args.out_dir, safe_serialization=True)
    print(f"wrote a tiny PixArt-alpha pipeline to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
