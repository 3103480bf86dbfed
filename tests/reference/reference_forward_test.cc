// ditbench's models against diffusers': `ditbench forward` on the tiny diffusers-format folders
// that tests/reference/make_reference.py wrote (seeded random weights, diffusers==0.35.2), at
// world size 1 and 2 (Ulysses, ring), in fp32 and bf16.
//
// fp32: the output's relative L2 distance to diffusers' fp32 output is at most 1e-5.
//
// bf16, on any CPU: bf16 output differs between machines (oneDNN picks AVX2, AVX-512, AVX-512
// BF16 or AMX kernels, which round and accumulate differently), so it is never compared with
// another machine's bf16 output. Both ditbench's and diffusers' bf16 outputs are compared with
// the *fp32* reference instead, and ditbench's bf16 error must be of the size bf16 arithmetic
// gives this computation (docs/measurement.md, "bf16 against the fp32 reference"):
//   0.25 e_ref <= rel L2(ours_bf16, diffusers_fp32) <= 1.25 e_ref,
//   e_ref = rel L2(diffusers_bf16, diffusers_fp32), both committed files.
// Each rounding to bf16 perturbs a value by a relative error of at most u = 2^-8; the output's
// error is the sum over the computation's rounding sites of each site's sensitivity times its
// perturbation. The kernels of another ISA round at other sites in another order, but draw
// from the same distribution over as many sites, so the sum has the same expected size on every
// CPU: e_ref measures u x the depth x the conditioning of this very computation. Measured on an
// AMD EPYC under every oneDNN cap (AVX2 to AMX), ours / e_ref was 0.99 to 1.03; the 25% margin
// is eight times that spread. The lower bound catches a bf16 run that silently computed in
// fp32 (an error near 1e-7). Every bf16 case also runs under the oneDNN caps below AMX, so the
// rule is checked on the machine's every kernel family, not only its best.
//
// Also: folders whose tensors do not match their config.json are refused by name, and each
// family's sampler against diffusers' scheduler configured as its pipeline configures it.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/families/vae.h"
#include "model_zoo/layers/flow_unipc.h"
#include "model_zoo/layers/sampler.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/vae_shapes.h"
#include "model_zoo/weights/diffusers_weights.h"
#include "model_zoo/weights/safetensors.h"

namespace ditbench::reference_forward_test {
namespace {

const std::filesystem::path kData = REFERENCE_DATA;

// A scratch folder removed with POSIX calls (std::filesystem::remove_all crashes in binaries
// linked with LibTorch).
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/tmp/ditbench-reference-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    for (const char* name : {"out.safetensors", "log", "model/config.json",
                             "model/diffusion_pytorch_model.safetensors"})
      ::unlink((path_ / name).c_str());
    ::rmdir((path_ / "model").c_str());
    ::rmdir(path_.c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double RelativeL2(const torch::Tensor& ours, const torch::Tensor& reference) {
  auto a = ours.to(torch::kFloat64), b = reference.to(torch::kFloat64);
  return ((a - b).norm() / b.norm()).item<double>();
}

struct Layout {
  const char* name;
  int ulysses, ring;
  int tp = 1;
};

struct Case {
  std::string model;  // folder under tests/reference/data
  std::string precision;
  Layout layout;
  std::string isa_cap;  // ONEDNN_MAX_CPU_ISA for the ranks; empty: the machine's best
  // Which inputs of the folder: "" (inputs.safetensors, expected_{fp32,bf16}) or "_wide" (a
  // non-square image: inputs_wide.safetensors, expected_wide_{fp32,bf16}).
  std::string inputs;
  friend void PrintTo(const Case& c, std::ostream* os) {
    *os << c.model << c.inputs << " " << c.precision << " " << c.layout.name << " " << c.isa_cap;
  }
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  return info.param.model + info.param.inputs + "_" + info.param.precision + "_" +
         info.param.layout.name + (info.param.isa_cap.empty() ? "" : "_" + info.param.isa_cap);
}

// The bf16 error budget of a case (see the top of this file).
constexpr double kBf16Margin = 1.25;
constexpr double kBf16Floor = 0.25;

class ReferenceForwardTest : public testing::TestWithParam<Case> {};

TEST_P(ReferenceForwardTest, MatchesDiffusers) {
  const Case& c = GetParam();
  ScratchDir scratch;
  const auto dir = kData / c.model;
  const auto out = scratch.path() / "out.safetensors", log = scratch.path() / "log";
  const std::string isa = c.isa_cap.empty() ? "" : "ONEDNN_MAX_CPU_ISA=" + c.isa_cap + " ";
  const std::string command =
      isa + std::string(DITBENCH_BIN) + " forward " + (dir / "model").string() + " --inputs " +
      (dir / ("inputs" + c.inputs + ".safetensors")).string() + " --output " + out.string() +
      " --precision " + c.precision + " --ulysses " + std::to_string(c.layout.ulysses) +
      " --ring " + std::to_string(c.layout.ring) + " --tp " + std::to_string(c.layout.tp) +
      " --worker " + DITBENCH_WORKER + " > " + log.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << ReadAll(log);
  auto ours = ReadSafetensors(out).at("sample");
  auto fp32 = ReadSafetensors(dir / ("expected" + c.inputs + "_fp32.safetensors")).at("sample");
  ASSERT_EQ(ours.sizes(), fp32.sizes());
  const double rel = RelativeL2(ours, fp32);
  RecordProperty("relative_l2_to_fp32", std::to_string(rel));
  if (c.precision == "fp32") {
    std::printf("[ reference ] %s%s fp32 %s: rel L2 %.3g (limit 1e-05)\n", c.model.c_str(),
                c.inputs.c_str(), c.layout.name, rel);
    EXPECT_LE(rel, 1e-5);
    return;
  }
  auto bf16 = ReadSafetensors(dir / ("expected" + c.inputs + "_bf16.safetensors")).at("sample");
  const double e_ref = RelativeL2(bf16, fp32);
  std::printf("[ reference ] %s%s %s %s %s: rel L2 to fp32 %.4g, diffusers' bf16 %.4g (ratio "
              "%.3f, allowed %.2f to %.2f)\n",
              c.model.c_str(), c.inputs.c_str(), c.precision.c_str(), c.layout.name,
              c.isa_cap.empty() ? "best ISA" : c.isa_cap.c_str(), rel, e_ref, rel / e_ref,
              kBf16Floor, kBf16Margin);
  RecordProperty("bf16_error_ratio", std::to_string(rel / e_ref));
  EXPECT_LE(rel, kBf16Margin * e_ref) << "more error than bf16 gives this computation";
  EXPECT_GE(rel, kBf16Floor * e_ref) << "less error than bf16 gives: did it compute in fp32?";
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  const Layout layouts[] = {{"ws1", 1, 1}, {"ulysses2", 2, 1}, {"ring2", 1, 2}};
  const char* models[] = {"pixart",
                          "sd3",
                          "sd3_qknorm",
                          "sd3_dual",
                          "flux",
                          "wan",
                          "hunyuan_video",
                          "vae4",
                          "vae16",
                          "wan_vae",
                          "hunyuan_vae",
                          "wan22_vae",
                          "hunyuan_video_mlp2",
                          "pixart_eps",
                          "wan_variant",
                          "hunyuan_video_theta"};
  for (const char* model : models)
    for (const char* precision : {"fp32", "bf16"})
      for (const auto& layout : layouts) cases.push_back({model, precision, layout, "", ""});
  // bf16 on one rank under each oneDNN cap below AMX (a cap above the CPU's best runs its
  // best): each kernel family rounds bf16 its own way, and the budget must hold for all of
  // them. No AMX cap: a cap the user sets is taken as given (cpu_isa_guard.h), and on a guest
  // that advertises AMX it cannot run, forcing AMX would crash the ranks; the uncapped cases
  // run AMX wherever the guard finds it usable.
  for (const char* model : models)
    for (const char* cap : {"AVX2", "AVX512_CORE", "AVX512_CORE_BF16"})
      cases.push_back({model, "bf16", layouts[0], cap, ""});
  // Tensor parallelism: each rank reads its shard of the folder's split layers (PixArt's 4
  // heads: 2 a tp rank, 1 a rank with Ulysses inside them; the joint families' 2 heads: 1).
  for (const char* precision : {"fp32", "bf16"}) {
    for (const char* model : {"pixart", "sd3", "sd3_dual", "flux", "hunyuan_video"})
      cases.push_back({model, precision, Layout{"tp2", 1, 1, 2}, "", ""});
    cases.push_back({"pixart", precision, Layout{"tp2_ulysses2", 2, 1, 2}, "", ""});
    cases.push_back({"pixart", precision, Layout{"tp2", 1, 1, 2}, "", "_wide"});
  }
  // The image transformers on a non-square image (make_reference.py, wide_images), the same
  // rules.
  for (const char* model : {"pixart", "sd3", "flux"}) {
    for (const char* precision : {"fp32", "bf16"})
      for (const auto& layout : layouts) cases.push_back({model, precision, layout, "", "_wide"});
    for (const char* cap : {"AVX2", "AVX512_CORE", "AVX512_CORE_BF16"})
      cases.push_back({model, "bf16", layouts[0], cap, "_wide"});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Diffusers, ReferenceForwardTest, testing::ValuesIn(AllCases()),
                         CaseName);

// Tiled decoding against diffusers' tiled decode of the same latent (64-pixel tiles, the smallest
// a sweep takes: 3 x 3 tiles of a 16 x 16 latent, blended over a quarter tile; AutoencoderKLWan:
// 2 x 2 tiles of a 12 x 12 latent of 2 frames, each tile decoded frame by frame), which differs
// from the whole decode.
class VaeTiledDecodeTest : public testing::TestWithParam<std::string> {};

TEST_P(VaeTiledDecodeTest, MatchesDiffusersTiledDecode) {
  ScratchDir scratch;
  const auto dir = kData / GetParam();
  const auto out = scratch.path() / "out.safetensors", log = scratch.path() / "log";
  const std::string command = std::string(DITBENCH_BIN) + " forward " + (dir / "model").string() +
                              " --inputs " + (dir / "inputs_tiled.safetensors").string() +
                              " --output " + out.string() + " --vae-tile 64 --worker " +
                              DITBENCH_WORKER + " > " + log.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << ReadAll(log);
  auto ours = ReadSafetensors(out).at("sample");
  const auto expected = ReadSafetensors(dir / "expected_tiled_fp32.safetensors");
  const auto& tiled = expected.at("sample");
  const auto& whole = expected.at("whole");
  ASSERT_EQ(ours.sizes(), tiled.sizes());
  EXPECT_LE(RelativeL2(ours, tiled), 1e-5);
  EXPECT_GT(RelativeL2(ours, whole), 1e-2);  // the tiles did change the decode
}

INSTANTIATE_TEST_SUITE_P(Diffusers, VaeTiledDecodeTest,
                         testing::Values("vae4", "vae16", "wan_vae"));

class DiffusersWeightsTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = kData / "flux" / "model";
    model_ = ReadDiffusersConfig(dir_);
    model_.config.text_tokens = 4;
    tensors_ = ReadDiffusersTensors(dir_);
    dit_ = MakeDitModel(model_.config);
  }
  std::string LoadError() {
    try {
      LoadDiffusersWeights(dit_->module(), model_, tensors_, dir_.string());
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
  DiffusersModel model_;
  NamedTensors tensors_;
  std::unique_ptr<DitModel> dit_;
};

TEST_F(DiffusersWeightsTest, LoadsEveryParameter) {
  EXPECT_EQ(LoadError(), "");
  auto loaded = dit_->module().named_parameters()["single_transformer_blocks.1.qkv_mlp.weight"];
  auto proj_mlp = tensors_.at("single_transformer_blocks.1.proj_mlp.weight");
  EXPECT_TRUE(torch::equal(loaded.narrow(0, loaded.size(0) - proj_mlp.size(0), proj_mlp.size(0)),
                           proj_mlp));
}

TEST_F(DiffusersWeightsTest, MissingTensorIsNamed) {
  tensors_.erase("transformer_blocks.1.attn.norm_added_k.weight");
  EXPECT_NE(LoadError().find("missing tensor 'transformer_blocks.1.attn.norm_added_k.weight'"),
            std::string::npos);
}

TEST_F(DiffusersWeightsTest, ExtraTensorIsNamed) {
  tensors_.emplace("transformer_blocks.9.attn.to_q.weight", torch::zeros({2, 2}));
  EXPECT_NE(LoadError().find("unexpected tensor 'transformer_blocks.9.attn.to_q.weight'"),
            std::string::npos);
}

TEST_F(DiffusersWeightsTest, MisshapenTensorIsNamed) {
  tensors_["context_embedder.weight"] = torch::zeros({64, 47});
  const std::string error = LoadError();
  EXPECT_NE(error.find("tensor 'context_embedder.weight' has shape [64, 47]"), std::string::npos)
      << error;
  EXPECT_NE(error.find("[64, 48]"), std::string::npos) << error;
}

// Older VAE folders name the mid-block attention query/key/value/proj_attn; diffusers converts
// them on load, and so does ditbench.
TEST(DiffusersVaeWeightsTest, DeprecatedAttentionNamesLoad) {
  const auto dir = kData / "vae4" / "model";
  const DiffusersModel model = ReadDiffusersConfig(dir);
  NamedTensors tensors = ReadDiffusersTensors(dir);
  const std::string prefix = "decoder.mid_block.attentions.0.";
  for (auto [now, before] : {std::pair{"to_q", "query"}, {"to_k", "key"}, {"to_v", "value"},
                             {"to_out.0", "proj_attn"}})
    for (const char* leaf : {".weight", ".bias"}) {
      auto node = tensors.extract(prefix + now + leaf);
      ASSERT_FALSE(node.empty());
      node.key() = prefix + before + leaf;
      tensors.insert(std::move(node));
    }
  VaeDecoder vae(model.config);
  LoadDiffusersWeights(*vae, model, tensors, dir.string());
  EXPECT_TRUE(torch::equal(vae->named_parameters()["mid_attention.to_out.weight"],
                           tensors.at(prefix + "proj_attn.weight")));
}

// The analytic FLOPs of a decode (plan's decode price) are FlopCounterMode's count of diffusers'
// decode of the same folder and latent (make_reference.py, vae_flops): an image, a clip a
// latent frame at a time, a clip in one piece and one in temporal tiles.
TEST(DiffusersVaeFlopsTest, AnalyticDecodeFlopsAreFlopCounterModesCount) {
  std::ifstream in(kData / "vae_decode_flops.json");
  const auto rows = nlohmann::json::parse(in);
  ASSERT_GE(rows.size(), 5u);
  for (const auto& row : rows) {
    const std::string name = row.at("case");
    const DiffusersModel model = ReadDiffusersConfig(kData / name / "model");
    const auto latent = row.at("latent").get<std::vector<int>>();
    const bool clip = latent.size() == 5;
    const int rows_at = latent[clip ? 3 : 2], cols_at = latent[clip ? 4 : 3];
    ImageShape shape{cols_at * model.config.vae_downsample, rows_at * model.config.vae_downsample,
                     clip ? (latent[2] - 1) * model.config.vae_temporal + 1 : 0};
    const double expected = row.at("flops").get<double>();
    EXPECT_EQ(VaeDecodeFlops(model.config, shape), expected) << name << " " << row.at("latent");
  }
}

// The analytic parameter count (plan, results) of a diffusers configuration counts exactly the
// tensors diffusers saved for it.
TEST(DiffusersParameterCountTest, AnalyticCountIsTheFoldersTensorCount) {
  for (const char* name :
       {"pixart", "sd3", "sd3_qknorm", "sd3_dual", "flux", "wan", "hunyuan_video",
        "hunyuan_video_mlp2", "pixart_eps", "wan_variant", "hunyuan_video_theta"}) {
    const auto dir = kData / name / "model";
    const DiffusersModel model = ReadDiffusersConfig(dir);
    int64_t stored = 0;
    for (const auto& [tensor, value] : ReadDiffusersTensors(dir))
      if (!IsUnusedDiffusersTensor(model, tensor)) stored += value.numel();
    EXPECT_EQ(ParameterCount(model.config), stored) << name;
  }
  for (const char* name : {"vae4", "vae16", "wan_vae", "hunyuan_vae", "wan22_vae"}) {
    const auto dir = kData / name / "model";
    const DiffusersModel model = ReadDiffusersConfig(dir);
    int64_t stored = 0;
    for (const auto& [tensor, value] : ReadDiffusersTensors(dir))
      if (!IsUnusedDiffusersTensor(model, tensor)) stored += value.numel();
    EXPECT_EQ(VaeDecoderParameterCount(model.config), stored) << name;
  }
}

TEST(DiffusersForwardTest, WrongConfigIsRefusedWithFileAndKey) {
  ScratchDir scratch;
  const auto log = scratch.path() / "log";
  // The SD3 folder with Flux's inputs: the inputs file names what SD3's forward does not take.
  const std::string command = std::string(DITBENCH_BIN) + " forward " +
                              (kData / "sd3" / "model").string() + " --inputs " +
                              (kData / "flux" / "inputs.safetensors").string() + " --output " +
                              (scratch.path() / "out.safetensors").string() + " --worker " +
                              DITBENCH_WORKER + " > " + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2) << ReadAll(log);
  EXPECT_NE(ReadAll(log).find("inputs.safetensors"), std::string::npos) << ReadAll(log);
}

// HunyuanVideo's encoder_attention_mask must be a prompt then its padding, the only masks its
// pipeline makes (diffusers' blocks take the prompt length from the mask's sum); anything else
// is refused by input, row and what was expected.
TEST(DiffusersForwardTest, AMaskThatIsNoPromptThenPaddingIsRefusedByRow) {
  ScratchDir scratch;
  const auto dir = kData / "hunyuan_video";
  NamedTensors inputs = ReadSafetensors(dir / "inputs.safetensors");
  inputs["encoder_attention_mask"][1][4] = 0.0;  // a hole inside row 1's prompt
  const auto file = scratch.path() / "inputs.safetensors";
  WriteSafetensors(file, inputs);
  const auto log = scratch.path() / "log";
  const std::string command = std::string(DITBENCH_BIN) + " forward " + (dir / "model").string() +
                              " --inputs " + file.string() + " --output " +
                              (scratch.path() / "out.safetensors").string() + " --worker " +
                              DITBENCH_WORKER + " > " + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  ::unlink(file.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2) << ReadAll(log);
  EXPECT_NE(ReadAll(log).find(file.string() + ": input 'encoder_attention_mask' row 1: expected "
                                              "ones for the prompt's tokens, then zeros"),
            std::string::npos)
      << ReadAll(log);
}

// Flux's packed input takes its rows and columns from img_ids: ids that do not span the tokens
// of hidden_states, or the right grid walked column by column, are refused by input and what
// was expected, never run on another layout than diffusers'.
TEST(DiffusersForwardTest, FluxIdsThatAreNotTheLatentsGridAreRefused) {
  ScratchDir scratch;
  const auto dir = kData / "flux";
  const auto file = scratch.path() / "inputs.safetensors";
  const auto log = scratch.path() / "log";
  auto refusal = [&](const torch::Tensor& ids) {
    NamedTensors inputs = ReadSafetensors(dir / "inputs_wide.safetensors");  // 6 x 10 tokens
    inputs["img_ids"] = ids;
    WriteSafetensors(file, inputs);
    const std::string command = std::string(DITBENCH_BIN) + " forward " +
                                (dir / "model").string() + " --inputs " + file.string() +
                                " --output " + (scratch.path() / "out.safetensors").string() +
                                " --worker " + DITBENCH_WORKER + " > " + log.string() + " 2>&1";
    const int status = std::system(command.c_str());
    ::unlink(file.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2) << ReadAll(log);
    return ReadAll(log);
  };
  const std::string square = refusal(ReadSafetensors(dir / "inputs.safetensors").at("img_ids"));
  EXPECT_NE(square.find(": input 'img_ids' has shape [64, 3], expected [60, 3]"),
            std::string::npos)
      << square;
  auto mesh = torch::meshgrid({torch::arange(10.0), torch::arange(6.0)}, "ij");  // column-major
  auto by_column = torch::stack({torch::zeros_like(mesh[0]), mesh[1], mesh[0]}, -1).view({60, 3});
  const std::string walked = refusal(by_column);
  EXPECT_NE(walked.find(": input 'img_ids': only the (0, row, column) grid of the latent, "
                        "row-major"),
            std::string::npos)
      << walked;
}

// Rows whose prompts have the same length run as one forward over the prompts' tokens: row 1
// masked to row 0's 9 tokens, row 0 still gives diffusers' row 0, and row 1 no longer its own.
TEST(DiffusersForwardTest, PromptsOfOneLengthAttendToThatManyTokens) {
  ScratchDir scratch;
  const auto dir = kData / "hunyuan_video";
  NamedTensors inputs = ReadSafetensors(dir / "inputs.safetensors");
  inputs["encoder_attention_mask"][1].copy_(inputs["encoder_attention_mask"][0]);
  const auto file = scratch.path() / "inputs.safetensors";
  WriteSafetensors(file, inputs);
  const auto out = scratch.path() / "out.safetensors", log = scratch.path() / "log";
  const std::string command = std::string(DITBENCH_BIN) + " forward " + (dir / "model").string() +
                              " --inputs " + file.string() + " --output " + out.string() +
                              " --worker " + DITBENCH_WORKER + " > " + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  ::unlink(file.c_str());
  ASSERT_EQ(status, 0) << ReadAll(log);
  auto ours = ReadSafetensors(out).at("sample");
  auto expected = ReadSafetensors(dir / "expected_fp32.safetensors").at("sample");
  EXPECT_LE(RelativeL2(ours[0], expected[0]), 1e-5);
  EXPECT_GT(RelativeL2(ours[1], expected[1]), 1e-4);
}

// A hub folder: the default file beside an fp16 variant split into shards under its own index.
// `--variant fp16` loads the shards, and only them: the original folder's output, bit for bit;
// without it the default file loads (here: every weight doubled, so a mix-up shows).
TEST(DiffusersForwardTest, AVariantsShardedIndexLoadsInsteadOfTheDefaultFile) {
  ScratchDir scratch;
  const auto source = kData / "pixart" / "model";
  const auto dir = scratch.path() / "model";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir / "config.json") << ReadAll(source / "config.json");
  NamedTensors shards[2], doubled;
  int i = 0;
  nlohmann::json index = {{"metadata", nlohmann::json::object()}};
  const std::string names[2] = {"diffusion_pytorch_model.fp16-00001-of-00002.safetensors",
                                "diffusion_pytorch_model.fp16-00002-of-00002.safetensors"};
  for (const auto& [name, tensor] : ReadDiffusersTensors(source)) {
    shards[i % 2].emplace(name, tensor);
    index["weight_map"][name] = names[i++ % 2];
    doubled.emplace(name, tensor * 2);
  }
  WriteSafetensors(dir / names[0], shards[0]);
  WriteSafetensors(dir / names[1], shards[1]);
  WriteSafetensors(dir / "diffusion_pytorch_model.safetensors", doubled);
  const auto index_file = dir / "diffusion_pytorch_model.safetensors.index.fp16.json";
  std::ofstream(index_file) << index.dump();

  auto forward = [&](const std::filesystem::path& model, const std::string& extra,
                     const std::string& out) {
    const auto log = scratch.path() / "log";
    const std::string command =
        std::string(DITBENCH_BIN) + " forward " + model.string() + " --inputs " +
        (kData / "pixart" / "inputs.safetensors").string() + " --output " +
        (scratch.path() / out).string() + extra + " --worker " + DITBENCH_WORKER + " > " +
        log.string() + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << ReadAll(log);
    auto sample = ReadSafetensors(scratch.path() / out).at("sample");
    ::unlink((scratch.path() / out).c_str());
    return sample;
  };
  auto original = forward(source, "", "a.safetensors");
  EXPECT_TRUE(torch::equal(forward(dir, " --variant fp16", "b.safetensors"), original));
  EXPECT_FALSE(torch::allclose(forward(dir, "", "c.safetensors"), original));
  for (const auto& file : {dir / names[0], dir / names[1], index_file})
    ::unlink(file.c_str());
}

// A hostile or mistaken folder is refused in one line before anything large is allocated or
// anything waits (issue 19): a config.json whose parameters exceed the machine's memory, and a
// weights file that is a FIFO.
class HostileFolderTest : public testing::Test {
 protected:
  void SetUp() override {
    ::mkdir((scratch_.path() / "model").c_str(), 0700);
    std::ifstream in(kData / "pixart" / "model" / "config.json");
    config_ = nlohmann::json::parse(in);
  }
  // Runs `forward` on the scratch folder; returns the exit status and fills `log_`.
  int Forward() {
    std::ofstream(scratch_.path() / "model" / "config.json") << config_.dump();
    const auto log = scratch_.path() / "log";
    const std::string command =
        std::string(DITBENCH_BIN) + " forward " + (scratch_.path() / "model").string() +
        " --inputs " + (kData / "pixart" / "inputs.safetensors").string() + " --output " +
        (scratch_.path() / "out.safetensors").string() + " --worker " + DITBENCH_WORKER +
        " --timeout 60 > " + log.string() + " 2>&1";
    const int status = std::system(command.c_str());
    log_ = ReadAll(log);
    return WEXITSTATUS(status);
  }
  ScratchDir scratch_;
  nlohmann::json config_;
  std::string log_;
};

TEST_F(HostileFolderTest, ParametersLargerThanTheMachineAreRefusedBeforeAllocating) {
  // 60,000 blocks 4,608 wide: about 15e12 parameters, 61 TB in fp32.
  config_["num_layers"] = 60000;
  config_["num_attention_heads"] = 64;
  config_["attention_head_dim"] = 72;
  config_["cross_attention_dim"] = 64 * 72;
  // A weights file is there (empty: it is never read), as diffusers' file rules want.
  std::ofstream(scratch_.path() / "model" / "diffusion_pytorch_model.safetensors");
  EXPECT_EQ(Forward(), 2) << log_;
  EXPECT_NE(log_.find("config.json: "), std::string::npos) << log_;
  EXPECT_NE(log_.find("parameters need"), std::string::npos) << log_;
  EXPECT_NE(log_.find("more than the"), std::string::npos) << log_;
}

TEST_F(HostileFolderTest, WeightsThatAreAFifoAreRefusedWithoutWaiting) {
  const auto fifo = scratch_.path() / "model" / "diffusion_pytorch_model.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(Forward(), 0) << log_;
  EXPECT_NE(log_.find("is a FIFO; expected a regular file"), std::string::npos) << log_;
}

// The HunyuanVideo family's sampler, as a trial gets it.
std::unique_ptr<Sampler> HunyuanVideoSampler(int steps) {
  return MakeDitModel(*FindModelPreset("hunyuanvideo-tiny"))->MakeSampler(steps, 0);
}

// Each sampler stepped over the model outputs diffusers' scheduler was stepped over
// (tests/reference/make_reference.py, samplers()): the same model times, the same final sample.
struct SamplerCase {
  const char* name;
  std::function<std::unique_ptr<Sampler>()> make;
};

class SamplerReferenceTest : public testing::TestWithParam<SamplerCase> {};

TEST_P(SamplerReferenceTest, MatchesDiffusersScheduler) {
  static const NamedTensors data = ReadSafetensors(kData / "samplers.safetensors");
  const std::string name = GetParam().name;
  std::unique_ptr<Sampler> sampler = GetParam().make();
  const torch::Tensor times = data.at(name + "_times");
  const torch::Tensor outputs = data.at(name + "_outputs");
  ASSERT_EQ(sampler->steps(), times.size(0));
  for (int i = 0; i < sampler->steps(); ++i)
    EXPECT_NEAR(sampler->ModelTime(i), times[i].item<double>(), 1e-3) << "step " << i;
  torch::Tensor x = data.at(name + "_x");
  // Twice: a second trajectory must not remember the first one's steps.
  for (int pass = 0; pass < 2; ++pass) {
    torch::Tensor sample = x;
    for (int i = 0; i < sampler->steps(); ++i) sample = sampler->Step(i, sample, outputs[i]);
    EXPECT_LE(RelativeL2(sample, data.at(name + "_final")), 1e-5) << "pass " << pass;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, SamplerReferenceTest,
    testing::Values(
        SamplerCase{"pixart_2", [] { return std::make_unique<DpmSolverMultistep>(2); }},
        SamplerCase{"pixart_5", [] { return std::make_unique<DpmSolverMultistep>(5); }},
        SamplerCase{"pixart_20", [] { return std::make_unique<DpmSolverMultistep>(20); }},
        SamplerCase{"sd3_4",
                    [] { return std::make_unique<FlowMatchEuler>(FlowMatchEuler::Sd3(4)); }},
        SamplerCase{"flux_dev_4",
                    [] {
                      return std::make_unique<FlowMatchEuler>(FlowMatchEuler::Flux(4, 1024, true));
                    }},
        SamplerCase{"flux_schnell_4",
                    [] {
                      return std::make_unique<FlowMatchEuler>(
                          FlowMatchEuler::Flux(4, 1024, false));
                    }},
        // Wan: 480p (832 x 480, flow shift 3.0) and 720p (1280 x 720, 5.0); one step (first
        // and last at once) and fifty (WanPipeline's default).
        SamplerCase{"wan_480p_1", [] { return std::make_unique<FlowUniPcMultistep>(1, 3.0); }},
        SamplerCase{"wan_480p_4",
                    [] {
                      return std::make_unique<FlowUniPcMultistep>(
                          4, FlowUniPcMultistep::WanFlowShift(832, 480));
                    }},
        SamplerCase{"wan_720p_10",
                    [] {
                      return std::make_unique<FlowUniPcMultistep>(
                          10, FlowUniPcMultistep::WanFlowShift(1280, 720));
                    }},
        SamplerCase{"wan_480p_50",
                    [] { return std::make_unique<FlowUniPcMultistep>(50, 3.0); }},
        // HunyuanVideo: shift 7.0 over the pipeline's linspace sigmas, 4 steps and 50 (its
        // default), from the family's own sampler.
        SamplerCase{"hunyuan_4", [] { return HunyuanVideoSampler(4); }},
        SamplerCase{"hunyuan_50", [] { return HunyuanVideoSampler(50); }}),
    [](const testing::TestParamInfo<SamplerCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ditbench::reference_forward_test

namespace ditbench::reference_forward_test {
namespace {

// Wan 2.2 A14B's expert switch, step for step against diffusers' WanPipeline
// (make_reference.py --wan-experts-only): two tiny experts loaded from their folders, the same
// noise and prompt embeddings, 6 UniPC steps at shift 3 (timesteps 999 and 937 on the
// high-noise expert with CFG 4.0, then 856 ... 374 on the low-noise one with CFG 3.0). Every
// step's latent within rel L2 1e-5 in fp32.
TEST(WanExpertsReferenceTest, TheSwitchEqualsDiffusersPipelineStepForStep) {
  c10::InferenceMode inference;
  const std::filesystem::path dir = kData / "wan_experts";
  const NamedTensors steps = ReadSafetensors(dir / "steps.safetensors");
  DiffusersModel expert = ReadDiffusersConfig(dir / "transformer");
  ModelConfig config = expert.config;
  config.experts = 2;
  config.expert_boundary = 0.875;
  config.guidance_scale = 4.0;
  config.guidance_scale_2 = 3.0;
  config.text_tokens = steps.at("prompt").size(1);
  auto model = MakeDitModel(config, torch::kFloat32, Weights::kLoaded);
  auto children = model->module().named_children();
  for (const char* name : {"transformer", "transformer_2"}) {
    const DiffusersModel folder = ReadDiffusersConfig(dir / name);
    LoadDiffusersWeights(*children[name], folder, ReadDiffusersTensors(dir / name),
                         (dir / name).string());
  }
  const ImageShape shape{48, 32, 5};
  auto sampler = model->MakeSamplerFor(6, shape);
  const auto& times = steps.at("times");
  const auto& latents = steps.at("latents");
  Conditioning conditioning;
  conditioning.text = torch::cat({steps.at("negative"), steps.at("prompt")}, 0);
  const ParallelContext local;
  torch::Tensor x = steps.at("x");
  std::string experts;
  for (int i = 0; i < 6; ++i) {
    ASSERT_DOUBLE_EQ(sampler->ModelTime(i), times[i].item<double>()) << "step " << i;
    model->BeginStep(sampler->ModelTime(i));
    experts += std::to_string(model->expert());
    const auto out = model->Forward(torch::cat({x, x}, 0), torch::full({2}, sampler->ModelTime(i)),
                                    conditioning, local);
    const auto uncond = out.narrow(0, 0, 1), cond = out.narrow(0, 1, 1);
    x = sampler->Step(i, x, uncond + model->guidance_scale() * (cond - uncond));
    EXPECT_LE(((x - latents[i]).norm() / latents[i].norm()).item<double>(), 1e-5) << "step " << i;
  }
  EXPECT_EQ(experts, "001111");
}

}  // namespace
}  // namespace ditbench::reference_forward_test
