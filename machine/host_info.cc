#include "machine/host_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include <boost/process.hpp>

extern char** environ;

namespace ditbench {

namespace bp = boost::process;

std::string ReadProcText(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[4096];
  while (text.size() < (1u << 20)) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;  // the end, or the process gone (ESRCH): what was read stands
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

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

nlohmann::json RecordedVariables() {
  return VariablesWithPrefixes({"NCCL_", "CUDA_", "OMP_", "TORCH_", "PYTORCH_", "ONEDNN_", "DNNL_",
                                "MKL_", "KMP_", "CUBLAS_", "CUBLASLT_"});
}

std::vector<std::string> CommandOutputLines(const std::vector<std::string>& argv) {
  std::vector<std::string> lines;
  if (argv.empty()) return lines;
  try {
    // A program name, never a shell command line: its arguments reach it verbatim.
    const boost::filesystem::path program = argv[0].find('/') != std::string::npos
                                                ? boost::filesystem::path(argv[0])
                                                : bp::search_path(argv[0]);
    if (program.empty()) return lines;
    bp::ipstream out;
    bp::child child(program, bp::args(std::vector<std::string>(argv.begin() + 1, argv.end())),
                    bp::std_in < bp::null, bp::std_out > out, bp::std_err > bp::null);
    for (std::string line; std::getline(out, line);) {
      while (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) lines.push_back(std::move(line));
    }
    child.wait();
  } catch (const std::exception&) {
    lines.clear();  // a program that cannot start says nothing
  }
  return lines;
}

}  // namespace ditbench
