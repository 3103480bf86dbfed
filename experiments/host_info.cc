#include "experiments/host_info.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

extern char** environ;

namespace ditbench {

std::string Hostname() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  return "unknown";
}

nlohmann::json VariablesWithPrefixes(std::initializer_list<const char*> prefixes) {
  nlohmann::json vars = nlohmann::json::object();
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    for (const char* prefix : prefixes)
      if (kv.rfind(prefix, 0) == 0) {
        const auto eq = kv.find('=');
        vars[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
      }
  }
  return vars;
}

std::vector<std::string> CommandOutputLines(const std::string& command) {
  std::vector<std::string> lines;
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return lines;
  std::string line;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) {
    line += buffer;
    if (line.back() != '\n') continue;  // a line longer than the buffer: keep reading
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
    line.clear();
  }
  if (!line.empty()) lines.push_back(line);
  ::pclose(pipe);
  return lines;
}

}  // namespace ditbench
