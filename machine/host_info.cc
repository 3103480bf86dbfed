#include "machine/host_info.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

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

nlohmann::json RecordedVariables() {
  return VariablesWithPrefixes({"NCCL_", "CUDA_", "OMP_", "TORCH_", "PYTORCH_", "ONEDNN_", "DNNL_",
                                "MKL_", "KMP_", "CUBLAS_", "CUBLASLT_"});
}

std::vector<std::string> CommandOutputLines(const std::vector<std::string>& argv) {
  std::vector<std::string> lines;
  if (argv.empty()) return lines;
  // Built before fork: between fork and exec only async-signal-safe calls are made.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return lines;
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return lines;
  }
  if (child == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::dup2(out[1], STDOUT_FILENO);
    ::execvp(args[0], args.data());  // a program name, never a shell command line
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof(buffer))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
    begin = end + 1;
  }
  return lines;
}

}  // namespace ditbench
