"""Make any Python benchmark a ditbench `command` workload in three lines.

    import ditbench_result

    def step():
        pipe(prompt, num_inference_steps=ditbench_result.trial()["steps"])

    ditbench_result.run(step)

`ditbench run` starts the sweep's command once per rank with the torchrun environment (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, CUDA_VISIBLE_DEVICES) plus DITBENCH_TRIAL (the
trial.json path) and DITBENCH_RESULT (the trial's run folder). `run(fn)` times `fn()` the way the
built-in worker does (docs/measurement.md, metrics/measurement.h):

  * per iteration: a barrier across ranks (when torch.distributed is initialised), then the
    start mark, fn(), the end mark; on CUDA the marks are CUDA events on the current stream,
    elsewhere a torch.cuda.synchronize() (when CUDA is in use) and time.perf_counter();
  * `warmup` untimed iterations first, kept and flagged;
  * then timed iterations: never fewer than repeats.min, never more than repeats.max, stopping
    early once the 95% CI of the median (of the slowest rank's times) is within
    repeats.target_rel_ci of it, or once repeats.max_seconds of timed work are spent. The ranks
    share each iteration's slowest time (an all-reduce of the max), so they stop together;
    without torch.distributed each rank of a multi-rank trial decides on its own times;
  * writes rank<RANK>.json (worker contract version 1, contract/worker_contract.h) into
    DITBENCH_RESULT atomically (a temp file, fsync, rename), then returns.

Stage marks: `with ditbench_result.stage("decode"): ...` inside fn records a sample of that
stage per iteration (nested stages are named "outer/inner"). Extra metrics:
`ditbench_result.metric("images_per_s", 3.2)` (numbers; the last value per name is kept) are
stored with the trial (the `metrics` column of `results`).

Profiles (`profile: trace` in the sweep): after the timed iterations, PROFILED_ITERATIONS more
untimed calls of fn run under torch.profiler (CPU, and CUDA when in use), and the Chrome trace
goes to rank<RANK>.trace.json.gz in the run folder, named in the result file (`trace_file`).
Mark denoising steps with `with ditbench_result.step(i): ...` inside fn (a stage "step:<i>"
when timed, a range "ditbench.step <i>" when profiled); without step marks each profiled call is
the range "ditbench.step 0". `ditbench_result.collective("all_to_all")` marks communication the
same way. Without torch there is no trace, and ditbench records why.

Exit codes (ditbench's worker contract): an exception in fn writes status "failed" with the
message and exits 1; a CUDA out-of-memory error writes "oom" and exits 3. Standard library
only; torch is used when it is importable and in use, never required.

Run it outside ditbench (no DITBENCH_TRIAL) and it times fn with 1 warm-up and 5 repeats and
prints the median: handy while writing the script.
"""

import contextlib
import json
import math
import os
import sys
import time

FORMAT = "ditbench-rank-result"
CONTRACT_VERSION = 1  # contract/worker_contract.h kContractVersion
EXIT_FAILED = 1
EXIT_OUT_OF_MEMORY = 3

_trial_cache = None
_current_marks = None  # the stage marks of the iteration being timed
_metrics = {}
_profiling = False  # inside the profiled pass: ranges go to torch.profiler
_steps_marked = False  # fn marks its own steps (step(i))
PROFILED_ITERATIONS = 2


def _torch():
    """torch when it was imported by the script (or can be), else None."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    return None


def _cuda_in_use(torch):
    return torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized()


def _dist(torch):
    if torch is None:
        return None
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def trial():
    """The trial's configuration (trial.json's "config"): steps, resolution, model, precision,
    warmup, repeats, the parallel degrees, and `custom` (the sweep's custom axes). Custom axes
    are also reachable directly: trial()["myaxis"]. Outside ditbench: a default configuration."""
    global _trial_cache
    if _trial_cache is None:
        path = os.environ.get("DITBENCH_TRIAL")
        if path:
            with open(path) as f:
                config = json.load(f)["config"]
        else:
            config = {"warmup": 1, "repeats": {"min": 5, "max": 5, "target_rel_ci": 0.0,
                                               "max_seconds": 0.0}, "custom": {}}
        merged = dict(config.get("custom") or {})
        merged.update(config)
        _trial_cache = merged
    return _trial_cache


def metric(name, value, unit=None, better=None):
    """Records an extra number stored with the trial (e.g. images_per_s); last value wins.

    `unit` ("images/s", "ms", "MB", "count", ...) decides how reports print it; `better`
    ("lower" or "higher") lets `compare` say which way a change is good. Names are letters,
    digits and '_' (at most 64, at most 64 metrics a trial); others are dropped with a note."""
    value = float(value)
    if unit is None and better is None:
        _metrics[str(name)] = value
        return
    declared = {"value": value}
    if unit is not None:
        declared["unit"] = str(unit)
    if better is not None:
        declared["better"] = str(better)
    _metrics[str(name)] = declared


class _Marks:
    """Time points of one iteration: CUDA events on GPU, perf_counter after a sync elsewhere."""

    def __init__(self, torch):
        self.torch = torch
        self.events = _cuda_in_use(torch)
        self.points = []
        self.open = []
        self.stages = []  # (name, begin index, end index)

    def mark(self):
        if self.events:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            self.points.append(event)
        else:
            if _cuda_in_use(self.torch):
                self.torch.cuda.synchronize()
            self.points.append(time.perf_counter())
        return len(self.points) - 1

    def finish(self):
        if self.events:
            self.torch.cuda.synchronize()

    def elapsed_ms(self, begin, end):
        a, b = self.points[begin], self.points[end]
        if self.events:
            return float(a.elapsed_time(b))
        return (b - a) * 1000.0


@contextlib.contextmanager
def stage(name):
    """Marks a stage inside the timed function; a no-op outside run()."""
    marks = _current_marks
    if marks is None:
        yield
        return
    full = name if not marks.open else marks.open[-1][0] + "/" + name
    marks.open.append((full, marks.mark()))
    try:
        yield
    finally:
        full, begin = marks.open.pop()
        marks.stages.append((full, begin, marks.mark()))


@contextlib.contextmanager
def _profiler_range(name):
    torch = _torch()
    if not _profiling or torch is None:
        yield
        return
    with torch.profiler.record_function(name):
        yield


@contextlib.contextmanager
def step(index):
    """Marks denoising step `index` inside fn: a stage "step:<index>" when timed, the range
    "ditbench.step <index>" when profiled."""
    global _steps_marked
    _steps_marked = True
    with stage("step:%d" % int(index)), _profiler_range("ditbench.step %d" % int(index)):
        yield


@contextlib.contextmanager
def collective(kind):
    """Marks a collective (e.g. "all_to_all") inside fn for the profile."""
    with _profiler_range("ditbench.collective %s" % kind):
        yield


def _profile(fn, torch, result_dir, rank):
    """`profile: trace`: PROFILED_ITERATIONS untimed calls of fn under torch.profiler, written
    gzip-compressed to the run folder. Returns the trace's file name, or "" without torch."""
    global _profiling
    if torch is None or not result_dir:
        return ""
    import torch.profiler as profiler
    activities = [profiler.ProfilerActivity.CPU]
    if _cuda_in_use(torch):
        activities.append(profiler.ProfilerActivity.CUDA)
    name = "rank%d.trace.json.gz" % rank
    _profiling = True
    try:
        with profiler.profile(activities=activities) as prof:
            for _ in range(PROFILED_ITERATIONS):
                if _steps_marked:
                    fn()
                else:
                    with profiler.record_function("ditbench.step 0"):
                        fn()
                if _cuda_in_use(torch):
                    torch.cuda.synchronize()
    finally:
        _profiling = False
    prof.export_chrome_trace(os.path.join(result_dir, name))
    return name


def _median_ci_relative_half_width(values):
    """(ci_high - ci_low) / (2 median), as stats/stats.cc computes it; inf below 2 samples."""
    n = len(values)
    if n < 2:
        return math.inf
    s = sorted(values)
    h = (n - 1) * 0.5
    low = int(math.floor(h))
    median = s[low] if low + 1 >= n else s[low] + (h - low) * (s[low + 1] - s[low])
    if median == 0:
        return math.inf
    half = 1.96 * math.sqrt(n) / 2
    j = min(max(math.floor(n / 2 - half), 1), n)
    k = min(max(math.ceil(1 + n / 2 + half), 1), n)
    return (s[int(k) - 1] - s[int(j) - 1]) / (2 * median)


def _stop_reason(repeats, slowest, spent_ms):
    n = len(slowest)
    if n < repeats.get("min", 5):
        return None
    if n >= repeats.get("max", 5):
        return "max"
    max_seconds = repeats.get("max_seconds", 0.0) or 0.0
    if max_seconds > 0 and spent_ms >= max_seconds * 1000.0:
        return "max_seconds"
    target = repeats.get("target_rel_ci", 0.0) or 0.0
    if target > 0 and n >= 2 and _median_ci_relative_half_width(slowest) <= target:
        return "target_rel_ci"
    return None


def _peak_memory(torch):
    """(allocated MB, reserved MB) from the CUDA allocator, else (peak RSS MB, None)."""
    if _cuda_in_use(torch):
        return (torch.cuda.max_memory_allocated() / 2**20, torch.cuda.max_memory_reserved() / 2**20)
    try:
        import resource
        return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, None)
    except (ImportError, OSError):
        return (None, None)


def _device_name(torch):
    if _cuda_in_use(torch):
        return torch.cuda.get_device_name(torch.cuda.current_device())
    return "cpu"


def _write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _result(rank, world, status, error, samples, stop_reason, torch):
    dist = _dist(torch)
    peak, reserved = _peak_memory(torch)
    environment = {}
    if rank == 0:
        environment = {"python": sys.version.split()[0], "program": sys.argv[0]}
        if torch is not None:
            environment["torch"] = getattr(torch, "__version__", "")
        # The libraries `ditbench history` fingerprints, when the script imported them.
        for library in ("diffusers",):
            if library in sys.modules:
                environment[library] = getattr(sys.modules[library], "__version__", "")
    return {
        "format": FORMAT, "version": CONTRACT_VERSION, "rank": rank, "world_size": world,
        "status": status, "error": error, "device": _device_name(torch),
        "backend": dist.get_backend() if dist is not None else "none",
        "stop_reason": stop_reason, "samples": samples, "environment": environment,
        "clocks": None, "peak_mem_mb": peak, "peak_reserved_mb": reserved,
        "comm_bytes_per_step": None, "output_file": "", "metrics": dict(_metrics),
    }


def _is_oom(error):
    name = type(error).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(error).lower()


def _measure(fn, config, torch):
    global _current_marks
    dist = _dist(torch)
    warmup = int(config.get("warmup", 0))
    repeats = config.get("repeats") or {}
    samples, slowest = [], []
    spent_ms = 0.0
    iteration = 0
    while True:
        is_warmup = iteration < warmup
        if dist is not None:
            dist.barrier()
        marks = _Marks(torch)
        _current_marks = marks
        start = marks.mark()
        try:
            fn()
        finally:
            _current_marks = None
        end = marks.mark()
        marks.finish()
        total = marks.elapsed_ms(start, end)
        samples.append({"iteration": iteration, "stage": "iteration", "ms": total,
                        "warmup": is_warmup})
        for name, begin, finish in marks.stages:
            samples.append({"iteration": iteration, "stage": name,
                            "ms": marks.elapsed_ms(begin, finish), "warmup": is_warmup})
        if dist is not None:
            value = torch.tensor([total], dtype=torch.float64,
                                 device="cuda" if dist.get_backend() == "nccl" else "cpu")
            dist.all_reduce(value, op=dist.ReduceOp.MAX)
            total = float(value.item())
        iteration += 1
        if is_warmup:
            continue
        slowest.append(total)
        spent_ms += total
        reason = _stop_reason(repeats, slowest, spent_ms)
        if reason:
            return samples, reason, slowest


def run(fn):
    """Times fn() for the current trial and writes this rank's result file (see the module
    docstring). Outside ditbench, prints the median instead. Exits the process with the worker
    contract's code when fn raises."""
    torch = _torch()
    config = trial()
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    result_dir = os.environ.get("DITBENCH_RESULT")
    try:
        samples, reason, slowest = _measure(fn, config, torch)
        result = _result(rank, world, "ok", "", samples, reason, torch)
        if config.get("profile") == "trace":  # after the timed iterations: never in them
            result["trace_file"] = _profile(fn, _torch(), result_dir, rank)
    except Exception as error:  # a failing benchmark is data: record it, then exit non-zero
        status = "oom" if _is_oom(error) else "failed"
        message = "%s: %s" % (type(error).__name__, error)
        print("ditbench_result: %s" % message, file=sys.stderr)
        if result_dir:
            _write_atomically(os.path.join(result_dir, "rank%d.json" % rank),
                              json.dumps(_result(rank, world, status, message, [], "", torch)))
        sys.exit(EXIT_OUT_OF_MEMORY if status == "oom" else EXIT_FAILED)
    if result_dir:
        _write_atomically(os.path.join(result_dir, "rank%d.json" % rank), json.dumps(result))
    else:
        ordered = sorted(slowest)
        print("ditbench_result: %d timed iterations, median %.3f ms (not under ditbench: no "
              "result file written)" % (len(ordered), ordered[len(ordered) // 2]))
    return result
