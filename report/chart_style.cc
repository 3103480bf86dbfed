#include "report/chart_style.h"

#include <array>
#include <cstdint>
#include <ctime>
#include <utility>

#include <fmt/format.h>

namespace ditbench {
namespace {

// The common strategies, each its own colour (Tableau 10 and a few more).
constexpr std::array<std::pair<const char*, const char*>, 12> kStrategyColors{{
    {"", "#555555"},  // one rank
    {"ulysses", "#4e79a7"},
    {"ring", "#f28e2b"},
    {"ulysses+ring", "#59a14f"},
    {"pipefusion", "#e15759"},
    {"ulysses+pipefusion", "#b07aa1"},
    {"cfg", "#76b7b2"},
    {"ulysses+cfg", "#edc948"},
    {"ring+cfg", "#9c755f"},
    {"dp", "#ff9da7"},
    {"ulysses+dp", "#1b9e77"},
    {"pipefusion+cfg", "#d95f02"},
}};

// For any other strategy: picked by a hash of its name (FNV-1a), never by its position.
constexpr std::array<const char*, 8> kOtherColors{
    "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#1f78b4", "#b2df8a", "#fb9a99"};

}  // namespace

std::string StrategyColor(const std::string& strategy) {
  for (const auto& [name, color] : kStrategyColors)
    if (strategy == name) return color;
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : strategy) hash = (hash ^ c) * 16777619u;
  return kOtherColors[hash % kOtherColors.size()];
}

std::string StageColor(const std::string& segment) {
  if (segment == "transformer blocks") return "#6b6b6b";
  if (segment == "steps outside blocks") return "#a8a8a8";
  if (segment == "denoising steps") return "#8c8c8c";
  if (segment == "VAE decode") return "#c49c6b";
  // The profile chart's segments (report/profile_section.h).
  if (segment == "compute") return "#595959";
  if (segment == "exposed communication") return "#b8860b";
  if (segment == "idle") return "#e3e3e3";
  return "#dcd3c4";  // the rest of the iteration
}

}  // namespace ditbench
