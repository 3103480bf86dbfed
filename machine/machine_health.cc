#include "machine/machine_health.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "machine/host_info.h"

namespace ditbench {
namespace {

// The host's monotonic clock (HostWindow): std::chrono::steady_clock, CLOCK_MONOTONIC.
double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool ReadStat(long pid, ProcessTimes* out) {
  const std::string text = ReadProcText(fmt::format("/proc/{}/stat", pid));
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ParseProcStat(text, ticks, out);
}

double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load1 = 0;
  in >> load1;
  return load1;
}

}  // namespace

// "pid (comm) state ppid ... utime(14) stime(15) ...". comm may hold spaces and parentheses,
// so the fields after it are read from the last ')'. comm is another user's choice: made
// valid UTF-8 with its controls escaped here, before it is stored or printed.
bool ParseProcStat(std::string_view text, double ticks_per_s, ProcessTimes* out) {
  const auto open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  out->name = ForTerminal(text.substr(open + 1, close - open - 1));
  std::istringstream rest{std::string(text.substr(close + 1))};
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  std::string skip;
  for (int field = 5; field < 14; ++field) rest >> skip;
  double utime = 0, stime = 0;
  if (!(rest >> utime >> stime)) return false;
  out->ppid = ppid;
  out->cpu_s = (utime + stime) / ticks_per_s;
  return true;
}

nlohmann::json MachineHealth::ToJson() const {
  nlohmann::json busiest_json = nlohmann::json::array();
  for (const auto& p : busiest)
    busiest_json.push_back({{"pid", p.pid}, {"name", p.name}, {"cores", p.cores}});
  nlohmann::json gpu_json = nlohmann::json::array();
  for (const auto& p : gpu_others)
    gpu_json.push_back(
        {{"gpu", p.gpu_uuid}, {"pid", p.pid}, {"name", p.name}, {"used_mb", p.used_mb}});
  nlohmann::json json = {{"load1", load1}, {"cores", cores},  {"other_cores", other_cores},
                         {"busy", busy},   {"busiest", busiest_json}};
  if (!gpu_others.empty()) json["gpu_others"] = gpu_json;
  return json;
}

std::string MachineHealth::Describe(const std::vector<std::string>& gpu_uuids) const {
  std::string text = fmt::format("load {:.2f} on {} cores; others used {:.2f} cores", load1,
                                 cores, other_cores);
  for (std::size_t i = 0; i < busiest.size() && i < 3; ++i)
    text += fmt::format("{}{} (pid {}) {:.2f}", i == 0 ? ": " : ", ", busiest[i].name,
                        busiest[i].pid, busiest[i].cores);
  for (const GpuProcess& p : gpu_others) {
    if (std::find(gpu_uuids.begin(), gpu_uuids.end(), p.gpu_uuid) == gpu_uuids.end()) continue;
    text += fmt::format("; on {}: {} (pid {}) {:.0f} MiB", p.gpu_uuid, p.name, p.pid, p.used_mb);
  }
  return text;
}

bool MachineHealth::BusyOn(const std::vector<std::string>& gpu_uuids) const {
  if (busy) return true;
  return std::any_of(gpu_others.begin(), gpu_others.end(), [&](const GpuProcess& p) {
    return std::find(gpu_uuids.begin(), gpu_uuids.end(), p.gpu_uuid) != gpu_uuids.end();
  });
}

std::optional<GpuProcess> ParseComputeAppLine(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) {
    const auto first = field.find_first_not_of(" \t");
    fields.push_back(first == std::string::npos
                         ? ""
                         : field.substr(first, field.find_last_not_of(" \t\r") - first + 1));
  }
  if (fields.size() != 4 || fields[0].rfind("GPU-", 0) != 0) return std::nullopt;
  GpuProcess p;
  p.gpu_uuid = fields[0];
  p.name = ForTerminal(fields[2]);  // another user's program: see ParseProcStat
  try {
    std::size_t used = 0;
    p.pid = std::stol(fields[1], &used);
    if (used != fields[1].size() || p.pid <= 0) return std::nullopt;
    // "[N/A]" when the driver may not say (another container's process): unknown, not zero.
    p.used_mb = fields[3].find_first_not_of("0123456789.") == std::string::npos && !fields[3].empty()
                    ? std::stod(fields[3])
                    : -1;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return p;
}

std::vector<long> ProcessTree(const ProcSnapshot& snapshot, long root) {
  std::set<long> tree{root};
  bool grew = true;
  while (grew) {  // processes are few; repeat until no new descendant appears
    grew = false;
    for (const auto& [pid, p] : snapshot.processes)
      if (tree.count(p.ppid) && tree.insert(pid).second) grew = true;
  }
  return {tree.begin(), tree.end()};
}

MachineHealth JudgeHealth(const ProcSnapshot& before, const ProcSnapshot& after,
                          const std::vector<long>& ours, double load1, int cores,
                          double busy_cores, std::size_t top) {
  MachineHealth health;
  health.load1 = load1;
  health.cores = cores;
  const double window = std::max(1e-6, after.at_s - before.at_s);
  const std::set<long> mine(ours.begin(), ours.end());
  for (const auto& [pid, p] : after.processes) {
    if (mine.count(pid)) continue;
    auto was = before.processes.find(pid);
    const double start = was != before.processes.end() ? was->second.cpu_s : 0.0;
    const double used = std::max(0.0, p.cpu_s - start) / window;
    health.other_cores += used;
    if (used >= 0.01) health.busiest.push_back({pid, p.name, used});
  }
  std::sort(health.busiest.begin(), health.busiest.end(),
            [](const BusyProcess& a, const BusyProcess& b) { return a.cores > b.cores; });
  if (health.busiest.size() > top) health.busiest.resize(top);
  health.busy = health.other_cores >= busy_cores;
  health.judged = {before.at_s, after.at_s};
  return health;
}

double HealthSamplePeriodS(bool on_gpu) { return on_gpu ? 1.0 : 0.25; }

TrialHealth::TrialHealth(std::vector<std::string> gpu_uuids, MachineHealth at_start)
    : gpus_(std::move(gpu_uuids)), start_(std::move(at_start)) {
  Judge(start_);
}

void TrialHealth::Judge(const MachineHealth& sample) {
  const HostWindow& w = sample.judged;
  if (!sample.BusyOn(gpus_) || !(w.begin_s < w.end_s)) return;
  // Samples come in time order, each judging the stretch since the one before: a busy spell
  // of several samples is one window. (A judgment returned again is the same stretch.)
  if (!busy_windows_.empty() && w.begin_s <= busy_windows_.back().end_s &&
      w.end_s >= busy_windows_.back().begin_s) {
    HostWindow& last = busy_windows_.back();
    last.begin_s = std::min(last.begin_s, w.begin_s);
    last.end_s = std::max(last.end_s, w.end_s);
    return;
  }
  busy_windows_.push_back(w);
}

void TrialHealth::Add(const MachineHealth& during) {
  Judge(during);
  ++samples_during_;
  // The worst: a busy sample over an idle one, then the one where others used more cores.
  const auto rank = [&](const MachineHealth& h) {
    return std::make_pair(h.BusyOn(gpus_), h.other_cores);
  };
  if (!worst_during_ || rank(during) > rank(*worst_during_)) worst_during_ = during;
}

void TrialHealth::Finish(MachineHealth at_end) {
  Judge(at_end);
  end_ = std::move(at_end);
}

bool TrialHealth::Busy() const { return !Note().empty(); }

std::string TrialHealth::Note() const {
  for (const std::optional<MachineHealth>& h :
       {std::optional<MachineHealth>(start_), worst_during_, end_})
    if (h && h->BusyOn(gpus_)) return h->Describe(gpus_);
  return "";
}

nlohmann::json TrialHealth::ToJson() const {
  const std::string note = Note();
  nlohmann::json json = {{"start", start_.ToJson()},
                         {"busy", !note.empty()},
                         {"samples_during", samples_during_}};
  if (end_) json["end"] = end_->ToJson();
  if (worst_during_) json["during"] = worst_during_->ToJson();
  if (!gpus_.empty()) json["gpus"] = gpus_;
  if (!note.empty()) json["note"] = note;
  if (!busy_windows_.empty()) {
    nlohmann::json windows = nlohmann::json::array();
    for (std::size_t i = 0; i < busy_windows_.size() && i < kMaxStoredBusyWindows; ++i)
      windows.push_back({busy_windows_[i].begin_s, busy_windows_[i].end_s});
    json["busy_windows"] = windows;
    if (busy_windows_.size() > kMaxStoredBusyWindows)
      json["busy_windows_left_out"] = busy_windows_.size() - kMaxStoredBusyWindows;
  }
  return json;
}

ProcSnapshot ReadProcSnapshot() {
  ProcSnapshot snapshot;
  snapshot.at_s = MonotonicSeconds();
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    ProcessTimes times;
    const long pid = std::stol(name);
    if (ReadStat(pid, &times)) snapshot.processes.emplace(pid, std::move(times));
  }
  return snapshot;
}

void ProcHealthProbe::Prime() const {
  if (history_.empty()) history_.push_back(ReadProcSnapshot());
}

MachineHealth ProcHealthProbe::Sample() const {
  const double window_s = std::chrono::duration<double>(window_).count();
  if (last_done_s_ >= 0 && MonotonicSeconds() - last_done_s_ < kReuseS) return last_;
  ProcSnapshot after = ReadProcSnapshot();
  if (history_.empty()) {
    history_.push_back(std::move(after));
    std::this_thread::sleep_for(window_);
    after = ReadProcSnapshot();
  } else if (after.at_s - history_.front().at_s < window_s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(
        window_s - (after.at_s - history_.front().at_s)));
    after = ReadProcSnapshot();
  }
  // The newest snapshot at least a window old: the start of the stretch judged.
  std::size_t base = 0;
  for (std::size_t i = 0; i < history_.size(); ++i)
    if (after.at_s - history_[i].at_s >= window_s) base = i;
  history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(base));
  const ProcSnapshot& before = history_.front();
  const int cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  MachineHealth health = JudgeHealth(before, after, ProcessTree(after, ::getpid()),
                                     LoadAverage(), cores, busy_cores_, top_);
  history_.push_back(std::move(after));
  last_ = health;
  last_done_s_ = MonotonicSeconds();
  return health;
}

}  // namespace ditbench

namespace ditbench {

MachineHealth ProcHealthProbe::SampleWithGpus() const {
  MachineHealth health = Sample();
  const std::vector<long> ours = ProcessTree(ReadProcSnapshot(), ::getpid());
  for (const auto& line : CommandOutputLines(
           {"nvidia-smi", "--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
            "--format=csv,noheader,nounits"})) {
    std::optional<GpuProcess> p = ParseComputeAppLine(line);
    if (p && std::find(ours.begin(), ours.end(), p->pid) == ours.end())
      health.gpu_others.push_back(std::move(*p));
  }
  return health;
}

}  // namespace ditbench
