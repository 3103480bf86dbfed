// Facts about the host that the coordinator and the worker both record.
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace ditbench {

std::string Hostname();
// The "model name" line of /proc/cpuinfo, or "unknown".
std::string CpuModel();
// Environment variables whose names start with one of `prefixes`, as a JSON object.
nlohmann::json VariablesWithPrefixes(std::initializer_list<const char*> prefixes);

}  // namespace ditbench
