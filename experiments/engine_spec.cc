#include "experiments/engine_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model_zoo/shapes/parallel_degrees.h"

namespace ditbench {
namespace {

using Json = nlohmann::json;

bool StringList(const Json& value, bool allow_empty, std::vector<std::string>* out) {
  if (!value.is_array() || (!allow_empty && value.empty())) return false;
  std::vector<std::string> list;
  for (const Json& item : value) {
    if (!item.is_string() || item.get_ref<const std::string&>().empty()) return false;
    list.push_back(item.get<std::string>());
  }
  *out = std::move(list);
  return true;
}

bool ReadRequest(const Json& value, EngineSpec* spec, std::string* problem) {
  if (!value.is_object()) {
    *problem = "'request': expected a mapping of the engine's request fields";
    return false;
  }
  for (const auto& [name, field] : value.items())
    if (name.empty() || !field.is_primitive() || field.is_null()) {
      *problem = fmt::format("'request.{}': expected a string, number or true/false", name);
      return false;
    }
  spec->request = value;
  return true;
}

// A name a file may have in a run folder: 1 to 128 characters of [A-Za-z0-9._-], not starting
// with '.', so that it can neither leave the folder nor hide in it.
bool PlainFileName(const std::string& name) {
  return !name.empty() && name.size() <= 128 && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

bool ReadFiles(const Json& value, EngineSpec* spec, std::string* problem) {
  if (!value.is_object() || value.size() > kMaxEngineFiles) {
    *problem = fmt::format(
        "'files': expected a mapping of at most {} file names to their text (templates of the "
        "trial's fields)",
        kMaxEngineFiles);
    return false;
  }
  for (const auto& [name, text] : value.items()) {
    if (!PlainFileName(name)) {
      *problem = fmt::format(
          "'files': '{}' is not a plain file name (1 to 128 letters, digits, '.', '_', '-', "
          "not starting with '.')",
          name);
      return false;
    }
    if (!text.is_string() || text.get_ref<const std::string&>().size() > kMaxEngineFileBytes) {
      *problem = fmt::format("'files.{}': expected the file's text, at most {} bytes", name,
                             kMaxEngineFileBytes);
      return false;
    }
    spec->files[name] = text.get<std::string>();
  }
  return true;
}

bool ReadNumbers(const Json& value, EngineSpec* spec, std::string* problem) {
  for (const char* key :
       {"start_timeout", "start_timeout_s", "request_timeout", "request_timeout_s"})
    if (value.contains(key)) {
      const Json& s = value.at(key);
      if (!s.is_number() || !(s.get<double>() > 0) || s.get<double>() > kMaxEngineStartTimeoutS) {
        *problem = fmt::format("'{}': expected seconds above 0, at most {:.0f}", key,
                               kMaxEngineStartTimeoutS);
        return false;
      }
      if (std::string_view(key).starts_with("start"))
        spec->start_timeout_s = s.get<double>();
      else
        spec->request_timeout_s = s.get<double>();
    }
  if (value.contains("warmup_requests")) {
    const Json& n = value.at("warmup_requests");
    if (!n.is_number_integer() || n.get<std::int64_t>() < 0 ||
        n.get<std::int64_t>() > kMaxEngineWarmupRequests) {
      *problem = fmt::format("'warmup_requests': expected an integer from 0 to {}",
                             kMaxEngineWarmupRequests);
      return false;
    }
    spec->warmup_requests = n.get<int>();
  }
  if (value.contains("poll_interval_ms")) {
    const Json& ms = value.at("poll_interval_ms");
    if (!ms.is_number_integer() || ms.get<std::int64_t>() < 1 ||
        ms.get<std::int64_t>() > kMaxEnginePollMs) {
      *problem = fmt::format("'poll_interval_ms': expected whole milliseconds from 1 to {}",
                             kMaxEnginePollMs);
      return false;
    }
    spec->poll_interval_ms = ms.get<int>();
  }
  if (value.contains("max_error_rate")) {
    const Json& r = value.at("max_error_rate");
    if (!r.is_number() || !(r.get<double>() >= 0 && r.get<double>() < 1)) {
      *problem = "'max_error_rate': expected a share from 0 (no error) to below 1";
      return false;
    }
    spec->max_error_rate = r.get<double>();
  }
  if (value.contains("dirty_gpu_mb")) {
    const Json& mb = value.at("dirty_gpu_mb");
    if (!mb.is_number() || !(mb.get<double>() >= 0 && mb.get<double>() <= kMaxDirtyGpuMb)) {
      *problem = fmt::format(
          "'dirty_gpu_mb': expected the most MiB a GPU may hold before the server starts, 0 to "
          "{:.0f}",
          kMaxDirtyGpuMb);
      return false;
    }
    spec->dirty_gpu_mb = mb.get<double>();
  }
  return true;
}

bool ReadDegrees(const Json& value, EngineSpec* spec, std::string* problem) {
  std::vector<std::string> names;
  std::vector<std::string_view> known;
  for (const DegreeInfo& d : kDegreeTable) known.push_back(d.name);
  bool ok = StringList(value, true, &names);
  for (std::size_t i = 0; ok && i < names.size(); ++i)
    ok = std::find(known.begin(), known.end(), names[i]) != known.end() &&
         std::find(names.begin(), names.begin() + i, names[i]) == names.begin() + i;
  if (!ok) {
    *problem = fmt::format(
        "'degrees': expected a list of distinct degrees the engine takes, "
        "each one of {}",
        fmt::join(known, ", "));
    return false;
  }
  spec->degrees = std::move(names);
  return true;
}

}  // namespace

Json EngineSpecJson(const EngineSpec& spec) {
  Json out = {{"api", spec.api},
              {"ready", spec.ready},
              {"request", spec.request},
              {"start_timeout_s", spec.start_timeout_s},
              {"warmup_requests", spec.warmup_requests}};
  if (!spec.start.empty()) out["start"] = spec.start;
  if (!spec.files.empty()) out["files"] = spec.files;
  if (!spec.url.empty()) out["url"] = spec.url;
  if (spec.degrees) out["degrees"] = *spec.degrees;
  if (spec.request_timeout_s) out["request_timeout_s"] = *spec.request_timeout_s;
  if (spec.max_error_rate > 0) out["max_error_rate"] = spec.max_error_rate;
  if (spec.poll_interval_ms) out["poll_interval_ms"] = *spec.poll_interval_ms;
  if (spec.dirty_gpu_mb != kDefaultDirtyGpuMb) out["dirty_gpu_mb"] = spec.dirty_gpu_mb;
  if (spec.version != kDefaultEngineVersionPath) out["version"] = spec.version;
  return out;
}

bool EngineSpecFromJson(const Json& value, EngineSpec* spec, std::string* problem) {
  static const std::set<std::string> kKeys = {"start",
                                              "url",
                                              "ready",
                                              "api",
                                              "request",
                                              "start_timeout",
                                              "start_timeout_s",
                                              "warmup_requests",
                                              "degrees",
                                              "request_timeout",
                                              "request_timeout_s",
                                              "max_error_rate",
                                              "poll_interval_ms",
                                              "version",
                                              "files",
                                              "dirty_gpu_mb"};
  if (!value.is_object()) {
    *problem = "expected a mapping {start: [argv] or url: URL, ready, api, request, ...}";
    return false;
  }
  for (const auto& [key, item] : value.items())
    if (!kKeys.contains(key)) {
      *problem = fmt::format(
          "unknown key '{}'; expected start, url, ready, api, request, "
          "start_timeout, request_timeout, warmup_requests, max_error_rate, degrees, "
          "poll_interval_ms, version, files or dirty_gpu_mb",
          key);
      return false;
    }
  EngineSpec out;
  if (value.contains("start") && !StringList(value.at("start"), false, &out.start)) {
    *problem = "'start': expected a non-empty list of non-empty strings (the server's argv)";
    return false;
  }
  if (value.contains("url")) {
    const Json& url = value.at("url");
    if (!url.is_string() || url.get_ref<const std::string&>().empty()) {
      *problem = "'url': expected the server's address, e.g. http://127.0.0.1:8000";
      return false;
    }
    out.url = url.get<std::string>();
  }
  if (out.start.empty() == out.url.empty()) {
    *problem =
        "give exactly one of 'start' (a server to start per trial) and 'url' (one to "
        "attach to)";
    return false;
  }
  if (value.contains("ready") && !StringList(value.at("ready"), true, &out.ready)) {
    *problem = "'ready': expected a list of paths, e.g. [/health]";
    return false;
  }
  for (const std::string& path : out.ready)
    if (path.front() != '/') {
      *problem = fmt::format("'ready': '{}' is not a path starting with '/'", path);
      return false;
    }
  if (value.contains("api")) {
    const Json& api = value.at("api");
    if (api != "images" && api != "videos") {
      *problem = "'api': expected images (POST /v1/images/generations) or videos (POST /v1/videos)";
      return false;
    }
    out.api = api.get<std::string>();
  }
  if (value.contains("version")) {
    const Json& path = value.at("version");
    if (!path.is_string() || (!path.get_ref<const std::string&>().empty() &&
                              path.get_ref<const std::string&>()[0] != '/')) {
      *problem =
          "'version': expected a path starting with '/' (e.g. /version), or \"\" to ask none";
      return false;
    }
    out.version = path.get<std::string>();
  }
  if (value.contains("request") && !ReadRequest(value.at("request"), &out, problem)) return false;
  if (value.contains("files") && !ReadFiles(value.at("files"), &out, problem)) return false;
  if (!ReadNumbers(value, &out, problem)) return false;
  if (!out.files.empty() && !out.url.empty()) {
    *problem = "'files': applies to a server ditbench starts (start), not to one attached by url";
    return false;
  }
  if (out.poll_interval_ms && out.api != "videos") {
    *problem = "'poll_interval_ms': applies to api: videos only (an image answers at once)";
    return false;
  }
  if (value.contains("degrees") && !ReadDegrees(value.at("degrees"), &out, problem)) return false;
  *spec = std::move(out);
  return true;
}

}  // namespace ditbench
