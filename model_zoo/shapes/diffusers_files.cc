#include "model_zoo/shapes/diffusers_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"

namespace ditbench {

namespace {

constexpr const char* kWeightsName = "diffusion_pytorch_model.safetensors";
constexpr const char* kIndexName = "diffusion_pytorch_model.safetensors.index.json";
constexpr std::size_t kMaxIndexBytes = 64 << 20;
// Values in an index: two per tensor (its name and file), so about two million tensors.
constexpr std::uint64_t kMaxIndexValues = 4'000'000;

// diffusers' _add_variant: "a.b.json" with variant v -> "a.b.v.json".
std::string WithVariant(const std::string& name, const std::string& variant) {
  if (variant.empty()) return name;
  const auto dot = name.rfind('.');
  return name.substr(0, dot) + "." + variant + name.substr(dot);
}

bool Exists(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool IsRegularFile(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The folder's weight files, for the error that names what it does have. POSIX listing:
// std::filesystem's directory iterators misbehave in binaries linking LibTorch.
std::vector<std::string> WeightFilesIn(const std::filesystem::path& dir) {
  std::vector<std::string> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (name.size() > 12 && (name.ends_with(".safetensors") || name.ends_with(".json")) &&
          name != "config.json")
        files.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::filesystem::path> FilesOfIndex(const std::filesystem::path& dir,
                                                const std::filesystem::path& index) {
  // Untrusted: a regular file whose size is checked before a byte is read, JSON whose depth
  // and count of values are capped as it is read ({"weight_map": {name: file}} is two levels;
  // "metadata" and any other field are read and dropped).
  nlohmann::json json;
  try {
    JsonLimits limits;
    limits.max_depth = 3;
    limits.max_values = kMaxIndexValues;
    limits.keep_top_level_keys = {"weight_map"};
    json = ParseBoundedJson(ReadRegularFile(index, kMaxIndexBytes), limits, index.string());
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object() ||
      json["weight_map"].empty())
    throw std::invalid_argument(index.string() +
                                ": expected a JSON object with a non-empty 'weight_map'");
  std::set<std::string> names;
  for (const auto& [tensor, file] : json["weight_map"].items()) {
    std::string name = file.is_string() ? file.get<std::string>() : file.dump();
    if (name.size() > 200) name = name.substr(0, 200) + "...";  // shown in one line
    if (!file.is_string() || name.find('/') != std::string::npos || name == "." ||
        name == ".." || !name.ends_with(".safetensors"))
      throw std::invalid_argument(fmt::format(
          "{}: weight_map['{}'] is {}, expected a .safetensors file name in the folder",
          index.string(), tensor, nlohmann::json(name).dump()));
    names.insert(name);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& name : names) {
    // Present is enough here: the safetensors reader refuses what is no regular file.
    if (!Exists(dir / name))
      throw std::invalid_argument(
          fmt::format("{}: names {}, which is not a file in {}", index.string(), name, dir.string()));
    files.push_back(dir / name);
  }
  return files;
}

}  // namespace

bool IsValidWeightsVariant(const std::string& variant) {
  return !variant.empty() && variant.size() <= 32 &&
         std::all_of(variant.begin(), variant.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
         });
}

std::vector<std::filesystem::path> DiffusersWeightFiles(const std::filesystem::path& dir,
                                                        const std::string& variant) {
  if (!variant.empty() && !IsValidWeightsVariant(variant))
    throw std::invalid_argument(fmt::format(
        "weights variant '{}': expected 1 to 32 letters, digits, '_' or '-' (e.g. fp16)", variant));
  const std::string index = WithVariant(kIndexName, variant);
  if (Exists(dir / index)) {
    // Read here, so never a FIFO (a read would wait) or a device.
    if (!IsRegularFile(dir / index))
      throw std::invalid_argument((dir / index).string() + ": expected a regular file");
    return FilesOfIndex(dir, dir / index);
  }
  const std::string single = WithVariant(kWeightsName, variant);
  if (Exists(dir / single)) return {dir / single};  // its reader checks what it is
  std::string has = fmt::format("{}", fmt::join(WeightFilesIn(dir), ", "));
  std::string hint;
  if (variant.empty()) {
    for (const auto& name : WeightFilesIn(dir)) {
      // diffusion_pytorch_model.V.safetensors -> "weights_variant: V"
      const std::string stem = "diffusion_pytorch_model.";
      if (name.starts_with(stem) && name.ends_with(".safetensors") &&
          name.size() > stem.size() + 12) {
        hint = "; for " + name + " set weights_variant: " +
               name.substr(stem.size(), name.size() - stem.size() - 12);
        break;
      }
    }
  }
  throw std::invalid_argument(fmt::format("{}: no {} or {} (the folder has: {}){}", dir.string(),
                                          single, index, has.empty() ? "no weight files" : has,
                                          hint));
}

}  // namespace ditbench
