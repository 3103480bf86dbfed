#include "model_zoo/shapes/safetensors_header.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"

namespace ditbench {
namespace {

struct DtypeSize {
  const char* name;
  std::uint64_t bytes;
};
constexpr DtypeSize kDtypes[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
    {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1},
};

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

SafetensorsEntry EntryOf(const std::string& name, const nlohmann::json& entry,
                         std::uint64_t data_size, const std::string& where) {
  SafetensorsEntry e;
  e.name = name;
  e.dtype = entry.at("dtype").get<std::string>();
  const std::uint64_t element = SafetensorsElementBytes(e.dtype);
  if (element == 0) Fail(where, "unsupported dtype '" + e.dtype + "'");
  e.shape = entry.at("shape").get<std::vector<std::int64_t>>();
  const auto offsets = entry.at("data_offsets").get<std::vector<std::uint64_t>>();
  if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size)
    Fail(where,
         fmt::format("tensor '{}': data_offsets outside the {} data bytes", name, data_size));
  e.begin = offsets[0];
  e.end = offsets[1];
  // Checked in 128 bits: a shape whose product overflows 64 bits must not wrap round to the
  // byte count its data_offsets give.
  unsigned __int128 bytes_wide = element;
  for (std::int64_t d : e.shape) {
    if (d < 0) Fail(where, "tensor '" + name + "': negative dimension");
    bytes_wide *= static_cast<std::uint64_t>(d);
    if (bytes_wide > data_size) bytes_wide = data_size + 1;  // already too large
  }
  const auto bytes = static_cast<std::uint64_t>(bytes_wide);
  if (bytes != e.end - e.begin)
    Fail(where, fmt::format("tensor '{}': shape needs {} bytes, data_offsets give {}", name, bytes,
                            e.end - e.begin));
  return e;
}

}  // namespace

std::uint64_t SafetensorsElementBytes(std::string_view dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.bytes;
  return 0;
}

std::vector<SafetensorsEntry> ParseSafetensorsHeader(std::string_view header,
                                                     std::uint64_t data_size,
                                                     const std::string& where) {
  if (header.size() > kMaxSafetensorsHeaderBytes)
    Fail(where, fmt::format("header of {} bytes, more than the {} the format allows", header.size(),
                            kMaxSafetensorsHeaderBytes));
  // Each tensor's entry is checked and kept as it is read; the header is never built whole.
  std::vector<SafetensorsEntry> entries;
  JsonLimits limits;
  limits.max_depth = 4;  // {name: {"shape": [...]}} is three levels deep
  limits.max_values = kMaxSafetensorsHeaderValues;
  limits.on_top_level_member = [&](std::string&& name, nlohmann::json&& entry) {
    if (name == "__metadata__") return;
    try {
      entries.push_back(EntryOf(name, entry, data_size, where));
    } catch (const nlohmann::json::exception& e) {
      Fail(where, "tensor '" + name + "': " + e.what());
    }
  };
  nlohmann::json json;
  try {
    json = ParseBoundedJson(header, limits, "header");
  } catch (const nlohmann::json::exception& e) {
    Fail(where, e.what());
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.starts_with(where + ": ")) throw;  // an entry's own refusal, already named
    Fail(where, what);
  }
  if (!json.is_object()) Fail(where, "header is not a JSON object");
  // In name order, as the format's readers list them (and a repeated name: its last entry).
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.name < b.name; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (i + 1 == entries.size() || entries[i].name != entries[i + 1].name)
      if (kept++ != i) entries[kept - 1] = std::move(entries[i]);
  entries.resize(kept);
  std::multimap<std::uint64_t, const SafetensorsEntry*> extents;  // begin -> entry
  for (const auto& e : entries)
    if (e.end > e.begin) extents.emplace(e.begin, &e);
  // Two tensors over the same bytes would alias: a write through one changes the other.
  std::uint64_t end = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const auto& [begin, entry] : extents) {
    if (previous && begin < end)
      Fail(where, "tensors '" + previous->name + "' and '" + entry->name +
                      "': data_offsets overlap, expected disjoint ranges");
    if (entry->end > end) {
      end = entry->end;
      previous = entry;
    }
  }
  return entries;
}

}  // namespace ditbench
