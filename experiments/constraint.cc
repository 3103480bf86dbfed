#include "experiments/constraint.h"

#include <array>
#include <cmath>

#include <muParser.h>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {
namespace {

struct Variables {
  // One per parallel degree, in kDegreeTable's order.
  std::array<double, kDegreeTable.size()> degrees = [] {
    std::array<double, kDegreeTable.size()> ones;
    ones.fill(1);
    return ones;
  }();
  double resolution = 1024, batch = 1, steps = 20, warmup = 5, seed = 0, pipefusion_patches = 1,
         world_size = 1, sp = 1, gpus = 8, heads = 16, depth = 28, hidden = 1152, tokens = 4096,
         latent = 128, precision = 2, scope = 1, width = 1024, height = 1024, frames = 0;
};

void Bind(mu::Parser& parser, Variables& v) {
  for (std::size_t i = 0; i < kDegreeTable.size(); ++i)
    parser.DefineVar(std::string(kDegreeTable[i].name), &v.degrees[i]);
  const std::array<std::pair<const char*, double*>, 19> names{
      {{"resolution", &v.resolution},
       {"batch", &v.batch},
       {"steps", &v.steps},
       {"warmup", &v.warmup},
       {"seed", &v.seed},
       {"pipefusion_patches", &v.pipefusion_patches},
       {"world_size", &v.world_size},
       {"sp", &v.sp},
       {"gpus", &v.gpus},
       {"heads", &v.heads},
       {"depth", &v.depth},
       {"hidden", &v.hidden},
       {"tokens", &v.tokens},
       {"latent", &v.latent},
       {"precision", &v.precision},
       {"scope", &v.scope},
       {"width", &v.width},
       {"height", &v.height},
       {"frames", &v.frames}}};
  for (const auto& [name, address] : names) parser.DefineVar(name, address);
  for (Precision p : AllPrecisions())
    parser.DefineConst(std::string(PrecisionName(p)), static_cast<double>(p));
  for (Scope s : AllScopes()) parser.DefineConst(std::string(ScopeName(s)), static_cast<double>(s));
  parser.DefineOprt(
      "%", [](double a, double b) { return std::fmod(a, b); }, mu::prMUL_DIV);
}

void Load(Variables& v, const TrialConfig& c, int gpus) {
  v.resolution = c.resolution;
  v.width = c.resolution;
  v.height = c.image_height();
  v.frames = c.frames;
  v.batch = c.batch;
  v.steps = c.steps;
  v.warmup = c.warmup;
  v.seed = static_cast<double>(c.seed);
  for (std::size_t i = 0; i < kDegreeTable.size(); ++i) v.degrees[i] = c.*kDegreeTable[i].member;
  v.pipefusion_patches = c.effective_pipefusion_patches();
  v.world_size = c.world_size();
  v.sp = c.sequence_size();
  v.gpus = gpus;
  v.precision = static_cast<double>(c.precision);
  v.scope = static_cast<double>(c.scope);
  std::string unused;
  if (auto m = ResolveModel(c.model, c.model_overrides, &unused)) {
    v.heads = m->heads;
    v.depth = m->total_blocks();
    v.hidden = m->hidden;
    v.tokens = static_cast<double>(ImageTokens(*m, c.image_shape()));
    v.latent = c.image_height() / m->vae_downsample;
  }
}

// Position of an `=` that is not part of ==, <=, >= or !=, or -1.
int LoneAssignment(const std::string& e) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i] != '=') continue;
    const bool before =
        i > 0 && (e[i - 1] == '=' || e[i - 1] == '<' || e[i - 1] == '>' || e[i - 1] == '!');
    const bool after = i + 1 < e.size() && e[i + 1] == '=';
    if (after) {
      ++i;
      continue;
    }
    if (!before) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

static_assert(static_cast<int>(Precision::kBf16) == 2 && static_cast<int>(Scope::kDenoise) == 1,
              "the variables' defaults are TrialConfig's (bf16, denoise)");

bool CheckConstraint(const std::string& expression, std::string* problem, int* position) {
  if (int at = LoneAssignment(expression); at >= 0) {
    *problem = "'=' is assignment; compare with '=='";
    *position = at;
    return false;
  }
  if (expression.size() > 2000) {
    *problem = "expression longer than 2000 characters";
    *position = 0;
    return false;
  }
  try {
    Variables v;
    mu::Parser parser;
    Bind(parser, v);
    parser.SetExpr(expression);
    parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    *problem = e.GetMsg();
    *position = std::max(0, e.GetPos());
    return false;
  }
  return true;
}

struct ConstraintSet::Compiled {
  Variables variables;
  std::vector<std::unique_ptr<mu::Parser>> parsers;
};

ConstraintSet::ConstraintSet(const std::vector<Constraint>& constraints)
    : compiled_(std::make_unique<Compiled>()) {
  for (const auto& c : constraints) {
    auto parser = std::make_unique<mu::Parser>();
    Bind(*parser, compiled_->variables);
    parser->SetExpr(c.expression);
    compiled_->parsers.push_back(std::move(parser));
  }
}

ConstraintSet::~ConstraintSet() = default;

int ConstraintSet::FirstFailing(const TrialConfig& config, int gpus) {
  if (compiled_->parsers.empty()) return -1;
  Load(compiled_->variables, config, gpus);
  for (std::size_t i = 0; i < compiled_->parsers.size(); ++i) {
    try {
      if (compiled_->parsers[i]->Eval() == 0) return static_cast<int>(i);
    } catch (const mu::Parser::exception_type&) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace ditbench
