"""Parameter counts of diffusers' video transformers for the presets of
model_zoo/shapes/wan_shapes.cc and hunyuan_video_shapes.cc, built on the meta device (no
memory, no weights): the numbers tests/model_zoo/shapes/video_shapes_test.cc pins.

    pip install --target /tmp/refdeps diffusers==0.35.2 safetensors
    PYTHONPATH=/tmp/refdeps .venv/bin/python tests/reference/count_video_parameters.py
"""
import torch
from diffusers import HunyuanVideoTransformer3DModel, WanTransformer3DModel


def wan(heads, layers, ffn, channels, head_dim=128, text_dim=4096):
    return WanTransformer3DModel(patch_size=(1, 2, 2), num_attention_heads=heads,
                                 attention_head_dim=head_dim, in_channels=channels,
                                 out_channels=channels, text_dim=text_dim, ffn_dim=ffn,
                                 num_layers=layers, cross_attn_norm=True,
                                 qk_norm="rms_norm_across_heads")


def hunyuan(heads, head_dim, layers, single, text_dim, pooled, axes):
    return HunyuanVideoTransformer3DModel(num_attention_heads=heads, attention_head_dim=head_dim,
                                          num_layers=layers, num_single_layers=single,
                                          num_refiner_layers=2, text_embed_dim=text_dim,
                                          pooled_projection_dim=pooled, rope_axes_dim=axes,
                                          guidance_embeds=True)


MODELS = {
    "WAN_1_3B": lambda: wan(12, 30, 8960, 16),
    "WAN_14B": lambda: wan(40, 40, 13824, 16),
    "WAN_5B": lambda: wan(24, 30, 14336, 48),
    "WAN_TINY": lambda: wan(4, 2, 128, 16, head_dim=16, text_dim=32),
    "WAN22_TINY": lambda: wan(4, 2, 128, 48, head_dim=16, text_dim=32),
    "HUNYUAN": lambda: hunyuan(24, 128, 20, 40, 4096, 768, (16, 56, 56)),
    "HUNYUAN_TINY": lambda: hunyuan(4, 16, 2, 2, 32, 16, (4, 6, 6)),
}

if __name__ == "__main__":
    for name, make in MODELS.items():
        with torch.device("meta"):
            model = make()
        print(f"{name}_PARAMETERS {sum(p.numel() for p in model.parameters())}")
