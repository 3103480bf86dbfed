#!/usr/bin/env python3
"""Writes the seed corpora of the untrusted readers' fuzzers (tests/fuzz/untrusted/<reader>/):
for each reader a valid input and the hostile shapes the readers were attacked with, each cut
to at most 64 KiB (the fuzzers' -max_len). Run from the checkout's root; standard library only.
Re-running rewrites the same files."""
import gzip, json, os, struct, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "untrusted")


def write(reader, name, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    assert len(data) <= 65536, (reader, name, len(data))
    os.makedirs(os.path.join(ROOT, reader), exist_ok=True)
    with open(os.path.join(ROOT, reader, name), "wb") as f:
        f.write(data)


def rank_file(**extra):
    r = {"format": "ditbench-rank-result", "version": 1, "rank": 0, "world_size": 1,
         "status": "ok", "error": "", "device": "cpu", "backend": "none",
         "stop_reason": "max", "environment": {"build": "abc"}, "clocks": None,
         "peak_mem_mb": 10.5, "peak_reserved_mb": None, "comm_bytes_per_step": None,
         "output_file": "", "samples": [
             {"iteration": 0, "stage": "iteration", "ms": 12.5, "warmup": True},
             {"iteration": 1, "stage": "iteration", "ms": 11.0, "warmup": False},
             {"iteration": 1, "stage": "step:0", "ms": 5.5, "warmup": False}]}
    r.update(extra)
    return r


def rank_files():
    write("rank_file", "valid.json", json.dumps(rank_file()))
    padding = "[" + ",".join(["{}"] * 20000) + "]"
    write("rank_file", "unknown-field-empty-objects.json",
          json.dumps(rank_file())[:-1] + ', "padding": ' + padding + "}")
    write("rank_file", "deep-environment.json",
          json.dumps(rank_file())[:-1] + ', "environment": ' + "[" * 30000 + "]" * 30000 + "}")
    write("rank_file", "invalid-utf8-error.json",
          json.dumps(rank_file(status="failed", error="XX"))
          .replace('"XX"', '"\udcff\udcfe\x1b]0;title\x07"'))
    write("rank_file", "tiny-and-huge-latency.json",
          json.dumps(rank_file()).replace("11.0", "4.9e-324").replace("5.5", "1e400"))
    write("rank_file", "long-error.json", json.dumps(rank_file(status="failed", error="e" * 60000)))
    write("rank_file", "duplicate-keys.json", '{"rank": 0, "rank": 5, "format": 3, "format": "ditbench-rank-result"}')
    write("rank_file", "truncated.json", json.dumps(rank_file())[:200])
    write("rank_file", "not-an-object.json", "[1, 2, 3]")
    write("rank_file", "empty.json", "")


def event(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def traces():
    valid = {"schemaVersion": 1, "traceEvents": [
        event("user_annotation", "ditbench.step 0", 0, 100),
        event("cpu_op", "aten::mm", 5, 40, **{"Input Dims": [[64, 64], [64, 64]]}),
        event("cpu_op", "gloo:all_to_all", 50, 30),
        {"ph": "M", "name": "process_name", "pid": 0}]}
    write("trace", "valid.json", json.dumps(valid))
    write("trace", "numbers-where-events-belong.json",
          '{"traceEvents": [' + ",".join(str(i) for i in range(10000)) + "]}")
    write("trace", "deep-args.json", '{"traceEvents": [{"ph": "X", "args": ' + "[" * 20000 +
          "]" * 20000 + "}]}")
    write("trace", "events-twice.json", '{"traceEvents": [], "traceEvents": []}')
    write("trace", "top-level-array.json", json.dumps(valid["traceEvents"]))
    write("trace", "bad-step-name.json", json.dumps({"traceEvents": [
        event("user_annotation", "ditbench.step 99999999999", 0, 1)]}))
    write("trace", "negative-and-huge-times.json", json.dumps({"traceEvents": [
        event("user_annotation", "ditbench.step 0", -5, 1e300)]}))
    write("trace", "many-events.json", json.dumps({"traceEvents": [
        event("cpu_op", "aten::add", i, 1) for i in range(500)] + [
        event("user_annotation", "ditbench.step 0", 0, 600)]}))
    write("trace", "gzip-bytes-not-text.json", gzip.compress(json.dumps(valid).encode(), mtime=0))


def header(entries):
    return json.dumps(entries)


def safetensors_headers():
    write("safetensors_header", "valid.json", header({
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
        "b": {"dtype": "BF16", "shape": [4], "data_offsets": [16, 24]}}))
    write("safetensors_header", "overlap.json", header({
        "a": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]},
        "b": {"dtype": "U8", "shape": [8], "data_offsets": [4, 12]}}))
    write("safetensors_header", "shape-wraps-64-bits.json", header({
        "a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}}))
    write("safetensors_header", "many-entries.json", header({
        f"t{i}": {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]} for i in range(900)}))
    write("safetensors_header", "deep.json", '{"a": ' + "[" * 30000 + "]" * 30000 + "}")
    write("safetensors_header", "wrong-types.json", header({
        "a": {"dtype": 3, "shape": "x", "data_offsets": [0]}, "b": [], "c": None}))
    write("safetensors_header", "offsets-beyond-data.json", header({
        "a": {"dtype": "U8", "shape": [1], "data_offsets": [18446744073709551615, 0]}}))


def weights_indexes():
    write("weights_index", "valid.json", json.dumps({"metadata": {"total_size": 8}, "weight_map": {
        "a.weight": "diffusion_pytorch_model-00001-of-00001.safetensors"}}))
    write("weights_index", "deep-value.json",
          '{"weight_map": {"a": ' + "[" * 30000 + "]" * 30000 + "}}")
    write("weights_index", "path-out-of-folder.json",
          json.dumps({"weight_map": {"a": "../../etc/passwd.safetensors"}}))
    write("weights_index", "not-a-string.json", json.dumps({"weight_map": {"a": {"b": [1] * 5000}}}))
    write("weights_index", "huge-metadata.json", json.dumps({"metadata": [{}] * 15000,
                                                             "weight_map": {}}))
    write("weights_index", "not-json.json", "weight_map: a")


def npy(shape, dtype="<f4", order="False", data=b"", version=1, header_pad=0):
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        dtype, order, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    text += " " * header_pad
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text.encode("latin1") + data


def npys():
    write("npy", "valid.npy", npy([2, 2], data=struct.pack("<4f", 1, 2, 3, 4)))
    write("npy", "shape-claims-more-than-held.npy", npy([1 << 40]))
    write("npy", "shape-wraps.npy", npy([4294967296, 4294967296, 4]))
    write("npy", "float64.npy", npy([1], dtype="<f8", data=b"\0" * 8))
    write("npy", "fortran-order.npy", npy([1], order="True", data=b"\0" * 4))
    write("npy", "header-length-past-end.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{")
    write("npy", "truncated.npy", npy([4], data=b"\0" * 7))
    write("npy", "not-npy.npy", b"PK\x03\x04")


def configs():
    write("config_json", "valid-pixart.json", json.dumps({
        "_class_name": "PixArtTransformer2DModel", "num_attention_heads": 2,
        "attention_head_dim": 8, "in_channels": 4, "out_channels": 8, "num_layers": 2,
        "patch_size": 2, "sample_size": 32, "caption_channels": 16, "cross_attention_dim": 16,
        "norm_type": "ada_norm_single"}))
    write("config_json", "deep.json", '{"_class_name": ' + "[" * 30000 + "]" * 30000 + "}")
    write("config_json", "huge-numbers.json", json.dumps({
        "_class_name": "FluxTransformer2DModel", "num_layers": 1e300, "num_attention_heads": -1,
        "attention_head_dim": 18446744073709551615}))
    write("config_json", "wrong-types.json", json.dumps({
        "_class_name": ["x"], "num_layers": "two", "patch_size": None}))
    write("config_json", "unknown-class.json", json.dumps({"_class_name": "\x1b[31mEvil"}))
    write("config_json", "not-json.json", "\xff\xfe{")


def served(requests, samples=None):
    """A serving rank file of the fuzz target's load (3 requests, the first warm-up)."""
    if samples is None:
        samples = [{"iteration": q["index"], "stage": "iteration",
                    "ms": q["end_ms"] - q["arrival_ms"], "warmup": q["index"] == 0}
                   for q in requests]
    return json.dumps(rank_file(samples=samples, requests=requests))


def request(index, arrival_ms, start_ms, end_ms, isolated_ms=50.0):
    return {"index": index, "shape": 0, "replica": 0, "arrival_ms": arrival_ms,
            "start_ms": start_ms, "end_ms": end_ms, "isolated_ms": isolated_ms}


def serving_rank_files():
    ok = [request(0, 0, 0, 60), request(1, 100, 100, 160), request(2, 300, 300, 360)]
    write("serving_rank_file", "arrivals-not-the-loads.json", served(ok))
    write("serving_rank_file", "samples-contradict-requests.json",
          served(ok, [{"iteration": i, "stage": "iteration", "ms": 1.0, "warmup": i == 0}
                      for i in range(3)]))
    write("serving_rank_file", "all-warm-up.json", served([request(0, 0, 0, 60)]))
    write("serving_rank_file", "isolated-zero.json",
          served([request(0, 0, 0, 60, isolated_ms=0)] + ok[1:]))
    write("serving_rank_file", "ends-at-1e9-ms.json", served(ok[:2] + [request(2, 300, 300, 1e9)]))
    write("serving_rank_file", "served-twice.json", served(ok + [ok[1]]))
    write("serving_rank_file", "served-before-arrival.json",
          served([request(0, 0, 0, 60), request(1, 100, 50, 160), request(2, 300, 300, 360)]))
    write("serving_rank_file", "negative-and-nan-times.json",
          served(ok).replace('"end_ms": 160', '"end_ms": -1').replace('"start_ms": 300', '"start_ms": NaN'))
    write("serving_rank_file", "requests-not-a-list.json", json.dumps(rank_file(requests={"a": 1})))


def arrival_traces():
    header = "arrival_s,width,height,frames,steps\n"
    write("arrival_trace", "valid.csv", header + "0,256,256,0,2\n0.5,384,384,0,4\n1.25,256,256,0,2\n")
    write("arrival_trace", "byte-order-mark.csv", "\ufeff" + header + "0,256,256,0,2\n")
    write("arrival_trace", "crlf-and-blank-lines.csv",
          header.replace("\n", "\r\n") + "\r\n0,256,256,0,2\r\n\r\n")
    write("arrival_trace", "out-of-order-and-huge.csv",
          header + "5,256,256,0,2\n1,256,256,0,2\n1e308,99999,1,-1,0\n")
    write("arrival_trace", "subnormal-and-nan.csv",
          header + "4.9e-324,256,256,0,2\nnan,256,256,0,2\ninf,256,256,0,2\n")
    write("arrival_trace", "seventeen-shapes.csv",
          header + "".join(f"{i},{16 * (i + 1)},256,0,2\n" for i in range(17)))
    write("arrival_trace", "secret-first-line.csv", "root:x:0:0:root:/root:/bin/bash\n")
    write("arrival_trace", "control-characters.csv", header + "0,\x1b[31m256,256,0,2\n")
    write("arrival_trace", "many-columns.csv", header + ",".join(["1"] * 20000) + "\n")
    write("arrival_trace", "empty.csv", "")


def selfcheck(**extra):
    m = {"format": "ditbench-selfcheck", "version": 1, "device": "cpu", "device_name": "cpu",
         "torch": "2.11.0", "threads": 2,
         "timing": {"gemm_ms": 10, "gemm_reference_ms": 10.1, "forward_ms": 4,
                    "forward_reference_ms": 4.4, "gemm_aa_pct": 0.5, "forward_aa_pct": 12},
         "numerics": {"bf16_rel_error": 0.006, "bound": 0.0088},
         "calibration": {"model": "pixart-alpha-tiny", "setup_s": 0.02, "measure_s": 3,
                         "build_ms": 40, "forward": [
                             {"precision": "fp32", "image": 256, "threads": 2, "ranks": 1,
                              "ulysses": 1, "rank_elements": 2e5, "gflop": 1.5, "ms": 30}]},
         "skipped": {"cuda_graph": "no CUDA device"}, "errors": []}
    m.update(extra)
    return m


def selfchecks():
    write("selfcheck_measurements", "valid.json", json.dumps(selfcheck()))
    tiny = selfcheck()
    tiny["calibration"]["forward"][0]["ms"] = 1e-300
    write("selfcheck_measurements", "forward-1e-300-ms.json", json.dumps(tiny))
    huge = selfcheck()
    huge["calibration"]["forward"][0]["ms"] = 1e300
    huge["timing"]["forward_ms"] = 1e300
    write("selfcheck_measurements", "forward-1e300-ms.json", json.dumps(huge))
    many = selfcheck()
    many["calibration"]["forward"] = many["calibration"]["forward"] * 100
    write("selfcheck_measurements", "too-many-forwards.json", json.dumps(many))
    write("selfcheck_measurements", "wrong-types.json", json.dumps(selfcheck(
        timing={"gemm_ms": "fast"}, threads=-3, skipped=[1, 2])))
    write("selfcheck_measurements", "deep.json", '{"errors": ' + "[" * 30000 + "]" * 30000 + "}")
    write("selfcheck_measurements", "newer-version.json", json.dumps(selfcheck(version=99)))
    write("selfcheck_measurements", "not-json.json", "selfcheck: ok")


def trial_file(**requests):
    config = {"batch": 1, "cfg": 1, "dp": 2, "model": "pixart-alpha-tiny", "pipefusion": 1,
              "pipefusion_patches": 1, "pipefusion_warmup_steps": 1, "precision": "fp32",
              "profile_blocks": False,
              "repeats": {"max": 2, "max_seconds": 0.0, "min": 2, "target_rel_ci": 0.0},
              "resolution": 256, "ring": 1, "scope": "denoise", "seed": 0,
              "serve": {"arrivals": "constant", "rate": 50.0, "requests": 3, "slo_scale": 5.0,
                        "warmup_requests": 1},
              "steps": 2, "timeout_s": 180.0, "ulysses": 1, "warmup": 1, "workload": "dit"}
    listed = {"shapes": [{"width": 256, "height": 256, "frames": 0, "steps": 2}],
              "arrival_s": [0, 0.02, 0.04, 0.06], "shape": [0, 0, 0, 0]}
    listed.update(requests)
    return {"format": "ditbench-trial", "version": 1, "trial_key": "k", "sweep": "serve",
            "config": config, "device": "cpu", "requests": listed}


def trial_files():
    write("trial_file", "served.json", json.dumps(trial_file()))
    write("trial_file", "shape-past-the-shapes.json", json.dumps(trial_file(shape=[0, 0, 0, 1])))
    write("trial_file", "arrivals-out-of-order.json",
          json.dumps(trial_file(arrival_s=[0, 0.04, 0.02, 1e300])))
    write("trial_file", "lengths-differ.json", json.dumps(trial_file(shape=[0])))
    write("trial_file", "shape-out-of-range.json", json.dumps(trial_file(
        shapes=[{"width": 1 << 40, "height": -1, "frames": 0.5, "steps": "2"}])))
    write("trial_file", "no-shapes.json", json.dumps(trial_file(shapes=[])))
    write("trial_file", "requests-not-an-object.json", json.dumps(trial_file()).replace(
        '"requests": {', '"requests": [{', 1)[:-1] + "]}")


if __name__ == "__main__":
    for make in (rank_files, traces, safetensors_headers, weights_indexes, npys, configs,
                 serving_rank_files, arrival_traces, selfchecks, trial_files):
        make()
    sys.exit(0)
