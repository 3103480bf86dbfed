#include "machine/cpu_governor.h"

#include <cctype>
#include <fstream>
#include <system_error>

#include "base/terminal_text.h"

namespace ditbench {
namespace {

// "cpu" followed by digits only (not "cpufreq", "cpuidle").
bool IsCpuFolder(const std::string& name) {
  if (name.size() <= 3 || name.compare(0, 3, "cpu") != 0) return false;
  for (std::size_t i = 3; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

}  // namespace

std::map<std::string, int> CpuGovernors(const std::filesystem::path& sys_cpu) {
  std::map<std::string, int> governors;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sys_cpu, ec)) {
    if (!IsCpuFolder(entry.path().filename().string())) continue;
    std::ifstream file(entry.path() / "cpufreq" / "scaling_governor");
    std::string governor;
    if (!(file >> governor)) continue;
    ++governors[ForTerminal(governor.substr(0, 32))];
  }
  return governors;
}

}  // namespace ditbench
