#include "metrics/trace_profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>
#include <zlib.h>

#include "base/run_folder_file.h"
#include "base/untrusted_input.h"
#include "metrics/time_intervals.h"

namespace ditbench {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kStepPrefix = "ditbench.step ";
constexpr std::string_view kAttention = "ditbench.attention";
// A trace spans at most a day, in microseconds: larger numbers are not a profile.
constexpr double kMaxMicroseconds = 86400e6;
constexpr std::size_t kMaxNameBytes = 4096;

// One complete event, checked.
struct Event {
  std::string_view name;
  std::string_view cat;
  double begin = 0;  // microseconds
  double end = 0;
  std::string_view thread;  // pid and tid: nesting is judged within one thread
};

std::string Shown(const Json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

[[noreturn]] void Refuse(const std::string& where, std::size_t index, std::string_view key,
                         std::string_view expected, const Json& got) {
  throw std::runtime_error(fmt::format("{}: traceEvents[{}]: '{}': expected {}, got {}", where,
                                       index, key, expected, Shown(got)));
}

double Microseconds(const Json& event, std::string_view key, const std::string& where,
                    std::size_t index) {
  const auto it = event.find(key);
  if (it == event.end()) Refuse(where, index, key, "a number of microseconds", Json());
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 ||
      it->get<double>() > (key == "dur" ? kMaxMicroseconds : 1e18))
    Refuse(where, index, key, "a non-negative number of microseconds", *it);
  return it->get<double>();
}

std::string_view Text(const Json& event, std::string_view key, bool required,
                      const std::string& where, std::size_t index) {
  const auto it = event.find(key);
  if (it == event.end()) {
    if (required) Refuse(where, index, key, "a string", Json());
    return {};
  }
  if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxNameBytes)
    Refuse(where, index, key, fmt::format("a string of at most {} bytes", kMaxNameBytes), *it);
  return it->get_ref<const std::string&>();
}

std::string ThreadOf(const Json& event) {
  const auto id = [&](const char* key) {
    const auto it = event.find(key);
    return it == event.end() || !it->is_primitive() ? std::string() : it->dump();
  };
  return id("pid") + "/" + id("tid");
}

// The complete events of a trace, and the names, categories and threads they view.
struct TraceEvents {
  std::unordered_set<std::string> strings;  // moved whole: its nodes, and the views, stay put
  std::vector<Event> events;
};

// A Chrome trace's complete events, read in one pass through nlohmann's SAX interface: only
// the fields an event is judged by (ph, name, cat, ts, dur, pid, tid) are kept while it is
// read, names are stored once each, and nothing else is built, so a trace costs memory in
// proportion to its events, not its text. An element of traceEvents that is not an object is
// refused as soon as it is read; the nesting, the count of values and of events are capped as
// they are read. Work is linear in the text (no step recurses or rescans).
class TraceEventReader {
 public:
  TraceEventReader(const std::string& where, const std::function<bool()>& cancelled)
      : where_(where), cancelled_(cancelled) {}

  // The complete events, once the whole text was read.
  TraceEvents Take() {
    if (!found_events_)
      throw std::runtime_error(
          fmt::format("{}: expected a Chrome trace: an object with a 'traceEvents' array", where_));
    return {std::move(strings_), std::move(events_)};
  }

  bool null() { return Scalar(Json(nullptr)); }
  bool boolean(bool value) { return Scalar(Json(value)); }
  bool number_integer(Json::number_integer_t value) { return Scalar(Json(value)); }
  bool number_unsigned(Json::number_unsigned_t value) { return Scalar(Json(value)); }
  bool number_float(Json::number_float_t value, const std::string&) { return Scalar(Json(value)); }
  bool string(std::string& value) { return Scalar(Json(std::move(value))); }
  bool binary(Json::binary_t&) { return Scalar(Json()); }
  bool start_object(std::size_t) { return Open(Json::object()); }
  bool start_array(std::size_t) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& name) {
    if (depth_ == 1 && top_is_object_) next_is_events_ = name == "traceEvents";
    if (InEvent() && depth_ == events_depth_ + 1) field_ = IsKept(name) ? name : "";
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw e;
  }

 private:
  static bool IsKept(std::string_view key) {
    return key == "ph" || key == "name" || key == "cat" || key == "ts" || key == "dur" ||
           key == "pid" || key == "tid";
  }
  bool InEvent() const { return in_events_ && depth_ > events_depth_; }

  void Count() {
    if (++values_ > kMaxTraceValues)
      throw std::runtime_error(
          fmt::format("{}: holds more than {} JSON values; expected at most {}", where_,
                      kMaxTraceValues, kMaxTraceValues));
    if (cancelled_ && values_ % kJsonValuesBetweenChecks == 0 && cancelled_())
      throw JsonReadCancelled(fmt::format("{}: reading was interrupted", where_));
  }

  // An element of traceEvents begins: the event's index.
  void NextElement() {
    if (++elements_ > kMaxTraceEvents)
      throw std::runtime_error(fmt::format("{}: more than {} trace events; expected at most {}",
                                           where_, kMaxTraceEvents, kMaxTraceEvents));
  }

  bool Scalar(Json&& value) {
    Count();
    if (depth_ == 0 || (depth_ == 1 && top_is_object_ && next_is_events_)) return true;
    if (in_events_ && depth_ == events_depth_) {  // an element that is no object
      NextElement();
      throw std::runtime_error(fmt::format("{}: traceEvents[{}]: expected an object, got {}",
                                           where_, elements_ - 1, Shown(value)));
    }
    if (InEvent() && depth_ == events_depth_ + 1 && !field_.empty())
      event_[field_] = std::move(value);
    return true;
  }

  bool Open(Json&& container) {
    Count();
    if (depth_ == 0 && container.is_object()) top_is_object_ = true;
    const bool events = (depth_ == 0 && container.is_array()) ||
                        (depth_ == 1 && top_is_object_ && next_is_events_ && !in_events_);
    if (depth_ == 1 && top_is_object_) next_is_events_ = false;
    if (in_events_ && depth_ == events_depth_) {  // an element
      NextElement();
      if (!container.is_object())
        throw std::runtime_error(fmt::format("{}: traceEvents[{}]: expected an object, got [...]",
                                             where_, elements_ - 1));
      event_ = Json::object();
    } else if (InEvent() && depth_ == events_depth_ + 1 && !field_.empty()) {
      event_[field_] = std::move(container);  // judged as the wrong type when the event ends
    }
    ++depth_;
    if (depth_ > kMaxTraceDepth)
      throw std::runtime_error(
          fmt::format("{}: JSON nested more than {} levels deep", where_, kMaxTraceDepth));
    if (events) {
      if (found_events_)
        throw std::runtime_error(fmt::format("{}: 'traceEvents' appears twice", where_));
      found_events_ = in_events_ = true;
      events_depth_ = depth_;
    }
    return true;
  }

  bool Close() {
    --depth_;
    if (in_events_ && depth_ == events_depth_) FinishEvent();
    if (in_events_ && depth_ == events_depth_ - 1) in_events_ = false;
    return true;
  }

  std::string_view Interned(std::string_view text) {
    return *strings_.emplace(text).first;  // nodes never move: the view stays valid
  }

  void FinishEvent() {
    const std::size_t i = elements_ - 1;
    const Json& e = event_;
    if (Text(e, "ph", false, where_, i) != "X") return;
    Event event;
    event.name = Interned(Text(e, "name", true, where_, i));
    event.cat = Interned(Text(e, "cat", false, where_, i));
    event.begin = Microseconds(e, "ts", where_, i);
    event.end = event.begin + Microseconds(e, "dur", where_, i);
    event.thread = Interned(ThreadOf(e));
    events_.push_back(event);
  }

  const std::string& where_;
  const std::function<bool()>& cancelled_;
  std::unordered_set<std::string> strings_;  // every name, category and thread, once
  std::vector<Event> events_;
  Json event_;         // the kept fields of the event being read
  std::string field_;  // the kept field whose value comes next, or ""
  std::uint64_t values_ = 0;
  std::size_t elements_ = 0;
  int depth_ = 0;
  int events_depth_ = 0;  // the depth inside the traceEvents array
  bool top_is_object_ = false;
  bool next_is_events_ = false;
  bool in_events_ = false;
  bool found_events_ = false;
};

TraceEvents CompleteEvents(std::string_view json_text, const std::string& where,
                           const std::function<bool()>& cancelled) {
  TraceEventReader reader(where, cancelled);
  try {
    Json::sax_parse(json_text.begin(), json_text.end(), &reader);
  } catch (const Json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
  return reader.Take();
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ContainsNccl(std::string_view name) {
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    const auto lower = [&](std::size_t k) { return static_cast<char>(name[i + k] | 0x20); };
    if (lower(0) == 'n' && lower(1) == 'c' && lower(2) == 'c' && lower(3) == 'l') return true;
  }
  return false;
}

bool IsCollectiveRange(std::string_view name) {
  return StartsWith(name, "ditbench.collective") || StartsWith(name, "gloo:") ||
         StartsWith(name, "nccl:") || StartsWith(name, "c10d::") ||
         name == "record_param_comms" || ContainsNccl(name);
}

bool IsDeviceWork(std::string_view cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
}

// The step index of a "ditbench.step N" name.
std::optional<int> StepOf(const Event& event, const std::string& where) {
  if (!StartsWith(event.name, kStepPrefix)) return std::nullopt;
  const std::string_view digits = event.name.substr(kStepPrefix.size());
  int step = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || end != digits.data() + digits.size() || step < 0 ||
      step > kMaxProfiledStep)
    throw std::runtime_error(fmt::format(
        "{}: range '{}': expected 'ditbench.step N' with N a step from 0 to {}", where,
        event.name, kMaxProfiledStep));
  return step;
}

// A step's occurrence: its index and window.
struct StepWindow {
  int step = 0;
  TimeInterval window;
};

// The steps' windows: the device copies of the step ranges when there are any, else the host's.
std::vector<StepWindow> StepWindows(const std::vector<Event>& events, const std::string& where) {
  std::vector<StepWindow> device, host;
  for (const Event& e : events) {
    const auto step = StepOf(e, where);
    if (!step) continue;
    (e.cat == "gpu_user_annotation" ? device : host).push_back({*step, {e.begin, e.end}});
  }
  if (device.empty() && host.empty())
    throw std::runtime_error(fmt::format(
        "{}: no 'ditbench.step N' ranges; expected one per profiled denoising step", where));
  return device.empty() ? host : device;
}

IntervalSet RangesNamed(const std::vector<Event>& events, std::string_view name) {
  std::vector<TimeInterval> device, host;
  for (const Event& e : events)
    if (e.name == name) (e.cat == "gpu_user_annotation" ? device : host).push_back({e.begin, e.end});
  return IntervalSet(device.empty() ? host : device);
}

// Classified work: which events are compute and which communication.
struct DeviceWork {
  std::vector<const Event*> compute;
  std::vector<const Event*> comm;
};

DeviceWork Classify(const std::vector<Event>& events, bool device) {
  DeviceWork work;
  if (device) {
    for (const Event& e : events)
      if (IsDeviceWork(e.cat)) (ContainsNccl(e.name) ? work.comm : work.compute).push_back(&e);
    return work;
  }
  std::map<std::string_view, std::vector<TimeInterval>> comm_by_thread;
  for (const Event& e : events)
    if ((e.cat == "cpu_op" || e.cat == "user_annotation") && IsCollectiveRange(e.name)) {
      work.comm.push_back(&e);
      comm_by_thread[e.thread].push_back({e.begin, e.end});
    }
  std::map<std::string_view, IntervalSet> comm_sets;
  for (auto& [thread, intervals] : comm_by_thread) comm_sets[thread] = IntervalSet(intervals);
  for (const Event& e : events) {
    if (e.cat != "cpu_op" || IsCollectiveRange(e.name)) continue;
    const auto it = comm_sets.find(e.thread);
    // An op inside a collective on its own thread is the collective's own work (its copies).
    const bool inside = it != comm_sets.end() && it->second.Contains(e.begin, e.end);
    (inside ? work.comm : work.compute).push_back(&e);
  }
  return work;
}

IntervalSet SetOf(const std::vector<const Event*>& events) {
  std::vector<TimeInterval> intervals;
  intervals.reserve(events.size());
  for (const Event* e : events) intervals.push_back({e->begin, e->end});
  return IntervalSet(std::move(intervals));
}

std::vector<KernelTime> TopKernels(const DeviceWork& work, const IntervalSet& windows) {
  std::map<std::string_view, KernelTime> by_name;
  const auto add = [&](const std::vector<const Event*>& events, bool communication) {
    for (const Event* e : events) {
      const double us = windows.LengthWithin(e->begin, e->end);
      if (us <= 0) continue;
      KernelTime& k = by_name[e->name];
      k.name = e->name;
      k.ms += us / 1000;
      ++k.count;
      k.communication = communication;
    }
  };
  add(work.compute, false);
  add(work.comm, true);
  std::vector<KernelTime> top;
  for (auto& [name, kernel] : by_name) top.push_back(std::move(kernel));
  std::sort(top.begin(), top.end(), [](const KernelTime& a, const KernelTime& b) {
    return a.ms != b.ms ? a.ms > b.ms : a.name < b.name;
  });
  if (top.size() > kTopKernels) top.resize(kTopKernels);
  return top;
}

void Add(StepProfile& into, const StepProfile& step) {
  into.step_ms += step.step_ms;
  into.compute_ms += step.compute_ms;
  into.comm_ms += step.comm_ms;
  into.exposed_comm_ms += step.exposed_comm_ms;
  into.overlap_ms += step.overlap_ms;
  into.idle_ms += step.idle_ms;
  into.attention_ms += step.attention_ms;
}

double Number(const Json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number())
    throw std::invalid_argument(fmt::format("profile: '{}': expected a number", key));
  return it->get<double>();
}

StepProfile StepFromJson(const Json& json) {
  if (!json.is_object()) throw std::invalid_argument("profile: a step must be an object");
  StepProfile s;
  s.step = static_cast<int>(Number(json, "step"));
  s.occurrences = static_cast<int>(Number(json, "occurrences"));
  s.step_ms = Number(json, "step_ms");
  s.compute_ms = Number(json, "compute_ms");
  s.comm_ms = Number(json, "comm_ms");
  s.exposed_comm_ms = Number(json, "exposed_comm_ms");
  s.overlap_ms = Number(json, "overlap_ms");
  s.idle_ms = Number(json, "idle_ms");
  s.attention_ms = Number(json, "attention_ms");
  return s;
}

Json StepJson(const StepProfile& s) {
  return {{"step", s.step},
          {"occurrences", s.occurrences},
          {"step_ms", s.step_ms},
          {"compute_ms", s.compute_ms},
          {"comm_ms", s.comm_ms},
          {"exposed_comm_ms", s.exposed_comm_ms},
          {"overlap_ms", s.overlap_ms},
          {"idle_ms", s.idle_ms},
          {"attention_ms", s.attention_ms}};
}

}  // namespace

TraceProfile AnalyzeTrace(std::string_view json_text, const std::string& where,
                          const std::function<bool()>& cancelled) {
  if (json_text.size() > kMaxTraceBytes)
    throw std::runtime_error(fmt::format("{}: is {} bytes of trace; expected at most {}", where,
                                         json_text.size(), kMaxTraceBytes));
  const TraceEvents read = CompleteEvents(json_text, where, cancelled);
  const std::vector<Event>& events = read.events;
  const std::vector<StepWindow> windows = StepWindows(events, where);
  const bool device = std::any_of(events.begin(), events.end(),
                                  [](const Event& e) { return e.cat == "kernel"; });
  const DeviceWork work = Classify(events, device);
  const IntervalSet compute = SetOf(work.compute);
  const IntervalSet comm = SetOf(work.comm);
  const IntervalSet overlap = compute.Intersection(comm);
  const IntervalSet busy = compute.Union(comm);
  const IntervalSet attention = RangesNamed(events, kAttention);

  std::map<int, StepProfile> by_step;
  std::vector<TimeInterval> all_windows;
  for (const auto& [step, w] : windows) {
    StepProfile& s = by_step[step];
    s.step = step;
    ++s.occurrences;
    const double us = w.end - w.begin;
    s.step_ms += us / 1000;
    s.compute_ms += compute.LengthWithin(w.begin, w.end) / 1000;
    s.comm_ms += comm.LengthWithin(w.begin, w.end) / 1000;
    s.overlap_ms += overlap.LengthWithin(w.begin, w.end) / 1000;
    s.idle_ms += (us - busy.LengthWithin(w.begin, w.end)) / 1000;
    s.attention_ms += attention.LengthWithin(w.begin, w.end) / 1000;
    all_windows.push_back(w);
  }
  TraceProfile profile;
  profile.timeline = device ? "device" : "host";
  profile.total.step = -1;
  profile.total.occurrences = static_cast<int>(windows.size());
  for (auto& [step, s] : by_step) {
    const double n = s.occurrences;
    for (double* ms : {&s.step_ms, &s.compute_ms, &s.comm_ms, &s.overlap_ms, &s.idle_ms,
                       &s.attention_ms})
      *ms /= n;
    s.exposed_comm_ms = s.comm_ms - s.overlap_ms;
    profile.total.occurrences = std::min(profile.total.occurrences, s.occurrences);
    Add(profile.total, s);
    profile.steps.push_back(s);
  }
  profile.top_kernels = TopKernels(work, IntervalSet(std::move(all_windows)));
  return profile;
}

std::string ReadTraceText(const std::filesystem::path& path) {
  const bool gzip = path.extension() == ".gz";
  // A compressed file is at most as large as its text (gzip's worst case adds a few bytes per
  // 64 KiB block, far below this slack).
  std::string bytes = ReadRunFolderFile(path, kMaxTraceBytes + (kMaxTraceBytes >> 8));
  if (!gzip) {
    if (bytes.size() > kMaxTraceBytes)
      throw std::runtime_error(fmt::format("{}: is {} bytes; expected at most {}", path.string(),
                                           bytes.size(), kMaxTraceBytes));
    return bytes;
  }
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK)  // 15 + 16: a gzip header and trailer
    throw std::runtime_error(fmt::format("{}: zlib could not start", path.string()));
  std::string text;
  stream.next_in = reinterpret_cast<Bytef*>(bytes.data());
  stream.avail_in = static_cast<uInt>(bytes.size());
  int status = Z_OK;
  char chunk[1 << 16];
  while (status != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) break;
    text.append(chunk, sizeof chunk - stream.avail_out);
    if (text.size() > kMaxTraceBytes) break;
    if (status == Z_OK && stream.avail_in == 0 && stream.avail_out != 0) break;  // cut short
  }
  inflateEnd(&stream);
  if (text.size() > kMaxTraceBytes)
    throw std::runtime_error(fmt::format("{}: decompresses to more than {} bytes",
                                         path.string(), kMaxTraceBytes));
  if (status != Z_STREAM_END)
    throw std::runtime_error(
        fmt::format("{}: not a complete gzip file ({})", path.string(),
                    stream.msg ? stream.msg : "the data ends before the stream does"));
  return text;
}

TraceProfile ReadTraceProfile(const std::filesystem::path& path,
                              const std::function<bool()>& cancelled) {
  return AnalyzeTrace(ReadTraceText(path), path.string(), cancelled);
}

Json TraceProfileJson(const TraceProfile& profile) {
  Json steps = Json::array();
  for (const StepProfile& s : profile.steps) steps.push_back(StepJson(s));
  Json kernels = Json::array();
  for (const KernelTime& k : profile.top_kernels)
    kernels.push_back({{"name", k.name},
                       {"ms", k.ms},
                       {"count", k.count},
                       {"communication", k.communication}});
  return {{"timeline", profile.timeline},
          {"steps", std::move(steps)},
          {"total", StepJson(profile.total)},
          {"top_kernels", std::move(kernels)}};
}

TraceProfile TraceProfileFromJson(const Json& json) {
  if (!json.is_object()) throw std::invalid_argument("profile: expected an object");
  TraceProfile profile;
  const auto timeline = json.find("timeline");
  if (timeline == json.end() || !timeline->is_string())
    throw std::invalid_argument("profile: 'timeline': expected a string");
  profile.timeline = timeline->get<std::string>();
  const auto steps = json.find("steps");
  if (steps == json.end() || !steps->is_array())
    throw std::invalid_argument("profile: 'steps': expected an array");
  for (const Json& s : *steps) profile.steps.push_back(StepFromJson(s));
  const auto total = json.find("total");
  if (total == json.end()) throw std::invalid_argument("profile: 'total': missing");
  profile.total = StepFromJson(*total);
  const auto kernels = json.find("top_kernels");
  if (kernels == json.end() || !kernels->is_array())
    throw std::invalid_argument("profile: 'top_kernels': expected an array");
  for (const Json& k : *kernels) {
    if (!k.is_object() || !k.contains("name") || !k["name"].is_string() ||
        !k.contains("communication") || !k["communication"].is_boolean())
      throw std::invalid_argument("profile: 'top_kernels': expected {name, ms, count, communication}");
    profile.top_kernels.push_back({k["name"].get<std::string>(), Number(k, "ms"),
                                   static_cast<std::int64_t>(Number(k, "count")),
                                   k["communication"].get<bool>()});
  }
  return profile;
}

}  // namespace ditbench
