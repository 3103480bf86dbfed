#include "model_zoo/weights/weight_rules.h"

namespace ditbench {

std::string At(const std::string& prefix, int index) {
  return prefix + "." + std::to_string(index);
}

void JointBlockRules(WeightRules& r, const std::string& ours, const std::string& theirs) {
  const std::string o = ours + ".", t = theirs + ".";
  r[o + "norm1"] = {t + "norm1.linear"};
  r[o + "norm1_context"] = {t + "norm1_context.linear"};
  r[o + "qkv"] = {t + "attn.to_q", t + "attn.to_k", t + "attn.to_v"};
  r[o + "add_qkv"] = {t + "attn.add_q_proj", t + "attn.add_k_proj", t + "attn.add_v_proj"};
  r[o + "to_out"] = {t + "attn.to_out.0"};
  r[o + "to_add_out"] = {t + "attn.to_add_out"};
  for (const char* norm : {"norm_q", "norm_k", "norm_added_q", "norm_added_k"})
    r[o + norm] = {t + "attn." + norm};
  r[o + "ff_fc1"] = {t + "ff.net.0.proj"};
  r[o + "ff_fc2"] = {t + "ff.net.2"};
  r[o + "ff_context_fc1"] = {t + "ff_context.net.0.proj"};
  r[o + "ff_context_fc2"] = {t + "ff_context.net.2"};
  // SD3.5's dual attention (its 3 extra modulation chunks are norm1's last rows).
  r[o + "attn2_qkv"] = {t + "attn2.to_q", t + "attn2.to_k", t + "attn2.to_v"};
  r[o + "attn2_out"] = {t + "attn2.to_out.0"};
  r[o + "attn2_norm_q"] = {t + "attn2.norm_q"};
  r[o + "attn2_norm_k"] = {t + "attn2.norm_k"};
}

WeightRules PixArtWeightRules(const ModelConfig& c) {
  WeightRules r;
  r["patch_embed"] = {"pos_embed.proj"};
  r["t_fc1"] = {"adaln_single.emb.timestep_embedder.linear_1"};
  r["t_fc2"] = {"adaln_single.emb.timestep_embedder.linear_2"};
  r["t_block"] = {"adaln_single.linear"};
  r["resolution_embedder"] = {"adaln_single.emb.resolution_embedder"};
  r["aspect_ratio_embedder"] = {"adaln_single.emb.aspect_ratio_embedder"};
  r["caption_fc1"] = {"caption_projection.linear_1"};
  r["caption_fc2"] = {"caption_projection.linear_2"};
  for (int i = 0; i < c.depth; ++i) {
    const std::string o = At("blocks", i) + ".", t = At("transformer_blocks", i) + ".";
    r[o + "scale_shift_table"] = {t + "scale_shift_table"};
    r[o + "qkv"] = {t + "attn1.to_q", t + "attn1.to_k", t + "attn1.to_v"};
    r[o + "attn_out"] = {t + "attn1.to_out.0"};
    r[o + "cross_q"] = {t + "attn2.to_q"};
    r[o + "cross_kv"] = {t + "attn2.to_k", t + "attn2.to_v"};
    r[o + "cross_out"] = {t + "attn2.to_out.0"};
    r[o + "fc1"] = {t + "ff.net.0.proj"};
    r[o + "fc2"] = {t + "ff.net.2"};
  }
  r["final_table"] = {"scale_shift_table"};
  r["final_linear"] = {"proj_out"};
  return r;
}

void SingleBlockRules(WeightRules& r, const std::string& ours, const std::string& theirs) {
  const std::string o = ours + ".", t = theirs + ".";
  r[o + "norm_linear"] = {t + "norm.linear"};
  r[o + "qkv_mlp"] = {t + "attn.to_q", t + "attn.to_k", t + "attn.to_v", t + "proj_mlp"};
  r[o + "norm_q"] = {t + "attn.norm_q"};
  r[o + "norm_k"] = {t + "attn.norm_k"};
  r[o + "proj_out"] = {t + "proj_out"};
}

WeightRules Sd3WeightRules(const ModelConfig& c) {
  WeightRules r;
  r["pos_embed_proj"] = {"pos_embed.proj"};
  r["context_embedder"] = {"context_embedder"};
  r["timestep_embedder"] = {"time_text_embed.timestep_embedder"};
  r["text_embedder"] = {"time_text_embed.text_embedder"};
  for (int i = 0; i < c.depth; ++i)
    JointBlockRules(r, At("transformer_blocks", i), At("transformer_blocks", i));
  r["norm_out"] = {"norm_out.linear"};
  r["proj_out"] = {"proj_out"};
  return r;
}

WeightRules FluxWeightRules(const ModelConfig& c) {
  WeightRules r;
  r["x_embedder"] = {"x_embedder"};
  r["context_embedder"] = {"context_embedder"};
  r["timestep_embedder"] = {"time_text_embed.timestep_embedder"};
  r["guidance_embedder"] = {"time_text_embed.guidance_embedder"};
  r["text_embedder"] = {"time_text_embed.text_embedder"};
  for (int i = 0; i < c.depth; ++i)
    JointBlockRules(r, At("transformer_blocks", i), At("transformer_blocks", i));
  for (int i = 0; i < c.single_blocks; ++i)
    SingleBlockRules(r, At("single_transformer_blocks", i), At("single_transformer_blocks", i));
  r["norm_out"] = {"norm_out.linear"};
  r["proj_out"] = {"proj_out"};
  return r;
}

}  // namespace ditbench
