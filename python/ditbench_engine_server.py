#!/usr/bin/env python3
"""ditbench's reference engine: an OpenAI-style image and video server over a real diffusers
pipeline.

The engine workload drives servers over HTTP; this one runs anywhere torch does (a CPU in CI
included), so that every part of that workload is tested against a real server. It serves a
diffusers pipeline folder (`--model DIR`, e.g. one that python/make_tiny_pipeline.py wrote),
listening on 127.0.0.1 only:

  GET  /health                   200 {"status": "ok"} once the pipeline is loaded, 503 before
  GET  /v1/models                the one model, OpenAI's list shape
  GET  /version                  this server's, diffusers', transformers' and torch's versions
  POST /v1/images/generations    {"prompt", "size": "WxH", "n", "num_inference_steps",
                                  "guidance_scale", "seed", "negative_prompt", "model",
                                  "response_format": "b64_json"} ->
                                 {"created": T, "data": [{"b64_json": "<PNG>"}, ...]}
  POST /v1/videos                a video pipeline's job (multipart/form-data: "prompt", "size",
                                 "num_frames", "fps", "num_inference_steps", "guidance_scale",
                                 "seed", "negative_prompt", "model") -> {"id", "status"}
  GET  /v1/videos/ID             the job: {"id", "object": "video", "status": "queued" |
                                 "in_progress" | "completed" | "failed", "error"}
  GET  /v1/videos/ID/content     a completed job's MP4 (video/mp4)

A pipeline that takes `num_frames` (a video pipeline such as Wan) serves the videos API, any
other the images API; the other API answers 400. A video job runs on a thread of its own once
a replica is free; the server keeps the last --max-jobs jobs.

A request is checked before it runs: a body without Content-Length (411) or over
--max-request-bytes (413), text that is not a JSON object, an unknown field or a value out of
range is answered 400 with {"error": {"message", "type"}}. Each replica (`--replicas N`, a
copy of the pipeline loaded on its own: data parallelism, as an engine runs one copy a GPU)
serves one image request at a time (a pipeline is not thread-safe); a request takes the replica
that is free, or waits for the first that frees, first come first served.

    python ditbench_engine_server.py --model DIR [--port 0] [--threads N] [--replicas N]
                                     [--config FILE]

`--config FILE` reads a JSON object of the same options (`{"replicas": 2}`) from a file, as
engines that take their layout from a config file do.

`--port 0` takes a free port; either way the first line on stdout is
`listening on 127.0.0.1:PORT`, printed once the socket listens and before the pipeline loads
(a port already taken ends the server with exit status 2 and one line on stderr). Request logs
go to stderr.

Misbehaviour, for the tests of the client that drives it (each counts image requests, or
video jobs, that passed the checks, from 1; a video job's failure is its status "failed"):
  --fail-every N   answer 500 to every Nth image request
  --delay-s X      sleep X seconds before answering an image request
  --huge-body      answer image requests 200 with a declared 1 GiB body, then stream it
  --endless-body   answer image requests 200 without a length, streaming until the client
                   hangs up (at most 16 GiB)
  --malformed      answer image requests 200 with a body that is not JSON
  --never-ready    /health answers 503 forever
  --die-after N    after N image requests, the next one ends the process (exit status 3)
                   without an answer
  --process-noise K  add to every pixel a value from -K to K drawn from a generator seeded by
                   the process (its pid and start time): the same request's image is the same
                   within one server process and differs after a restart, as on GPUs whose
                   kernels a restart may choose differently
"""
import argparse
import base64
import collections
import email.parser
import email.policy
import importlib.metadata
import inspect
import io
import json
import math
import os
import queue
import re
import secrets
import sys
import tempfile
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"
ENGINE = "ditbench-reference"
ENGINE_VERSION = "1"
FIELDS = {"prompt", "negative_prompt", "size", "n", "num_inference_steps", "guidance_scale",
          "seed", "response_format", "model"}
VIDEO_FIELDS = {"prompt", "negative_prompt", "size", "num_frames", "fps", "num_inference_steps",
                "guidance_scale", "seed", "model"}
JOB_ID = re.compile(r"^/v1/videos/(video_[0-9a-f]{24})(/content)?$")
SIZE = re.compile(r"^([0-9]{1,5})x([0-9]{1,5})$")
STREAM_CHUNK = b"\0" * (1 << 16)
PROCESS_SEED = (os.getpid() << 32) ^ time.monotonic_ns()  # --process-noise: one per process


class BadRequest(Exception):
    """A request refused with 400 and this message."""


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a diffusers pipeline folder")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--served-model-name", default=None,
                        help="the model's id in /v1/models (default: the folder's name)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's own)")
    parser.add_argument("--replicas", type=int, default=1,
                        help="copies of the pipeline serving requests at once (1 to 64)")
    parser.add_argument("--max-request-bytes", type=int, default=1 << 20)
    parser.add_argument("--max-side", type=int, default=1024, help="largest width or height")
    parser.add_argument("--max-n", type=int, default=4, help="most images per request")
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--max-frames", type=int, default=257, help="most frames per video")
    parser.add_argument("--max-jobs", type=int, default=256, help="video jobs kept")
    parser.add_argument("--fail-every", type=int, default=0, metavar="N")
    parser.add_argument("--delay-s", type=float, default=0.0, metavar="X")
    parser.add_argument("--huge-body", action="store_true")
    parser.add_argument("--endless-body", action="store_true")
    parser.add_argument("--malformed", action="store_true")
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--die-after", type=int, default=0, metavar="N")
    parser.add_argument("--process-noise", type=int, default=0, metavar="K")
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="a JSON object of options read from a file, as engines take "
                             "their parallel layout: {\"replicas\": N, \"threads\": N}")
    args = parser.parse_args(argv)
    if args.config:
        apply_config(parser, args)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: expected 0 to 65535")
    if not 1 <= args.replicas <= 64:
        parser.error(f"--replicas {args.replicas}: expected 1 to 64")
    if not 0 <= args.process_noise <= 255:
        parser.error(f"--process-noise {args.process_noise}: expected 0 to 255")
    if args.fail_every < 0 or args.die_after < 0 or args.delay_s < 0:
        parser.error("--fail-every, --die-after and --delay-s take values of 0 or more")
    return args


CONFIG_KEYS = ("replicas", "threads")


def apply_config(parser, args):
    """Sets the options --config's JSON object names; a bad file ends the server (status 2)."""
    try:
        with open(args.config, encoding="utf-8") as file:
            config = json.load(file)
    except (OSError, ValueError) as error:
        parser.error(f"--config {args.config}: {error}")
    if not isinstance(config, dict):
        parser.error(f"--config {args.config}: expected a JSON object")
    for key, value in config.items():
        if key not in CONFIG_KEYS or isinstance(value, bool) or not isinstance(value, int):
            parser.error(f"--config {args.config}: '{key}': expected one of "
                         f"{', '.join(CONFIG_KEYS)} with an integer")
        setattr(args, key, value)


def package_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def pipeline_arguments(request, torch, **more):
    """The pipeline call's arguments for `request` (checked), `more` added."""
    kwargs = dict(prompt=request["prompt"], width=request["width"], height=request["height"],
                  num_inference_steps=request["steps"], guidance_scale=request["guidance_scale"],
                  generator=torch.Generator("cpu").manual_seed(request["seed"]), **more)
    if request.get("negative_prompt") is not None:
        kwargs["negative_prompt"] = request["negative_prompt"]
    return kwargs


class Engine:
    """The pipeline and what the server knows of its state. Thread-safe."""

    def __init__(self, args):
        self.args = args
        self.model_name = args.served_model_name or os.path.basename(
            os.path.normpath(args.model))
        self.pipeline = None  # the first replica's, once every replica is loaded
        self.granularity = 16  # pixels a side must be a multiple of, known once loaded
        self.load_error = None
        self.free = queue.Queue()  # the replicas' pipelines not serving a request
        self.count_lock = threading.Lock()
        self.requests = 0
        self.video = False  # the pipeline makes videos (takes num_frames), known once loaded
        self.frame_step = 1  # a video's frames must be 1 + a multiple of this
        self.jobs = collections.OrderedDict()  # video job id -> its state, the oldest first
        self.jobs_lock = threading.Lock()

    def load(self):
        """Loads the pipeline; on failure the process exits 1 with the traceback on stderr."""
        try:
            import torch
            from diffusers import DiffusionPipeline
            from diffusers.utils import logging as diffusers_logging
            diffusers_logging.disable_progress_bar()
            if self.args.threads > 0:
                torch.set_num_threads(self.args.threads)
            started = time.monotonic()
            pipelines = []
            for _ in range(self.args.replicas):
                pipeline = DiffusionPipeline.from_pretrained(self.args.model,
                                                             local_files_only=True)
                pipeline.set_progress_bar_config(disable=True)
                pipelines.append(pipeline)
            pipeline = pipelines[0]
            patch = getattr(getattr(pipeline, "transformer", None), "config", None)
            patch = getattr(patch, "patch_size", 1) or 1
            if isinstance(patch, (list, tuple)):  # a video transformer's (frames, h, w)
                patch = patch[-1]
            self.video = "num_frames" in inspect.signature(pipeline.__call__).parameters
            self.granularity = getattr(pipeline, "vae_scale_factor",
                                       getattr(pipeline, "vae_scale_factor_spatial", 8)) * patch
            self.frame_step = getattr(pipeline, "vae_scale_factor_temporal", 1)
            for each in pipelines:
                self.free.put(each)
            self.pipeline = pipeline
            log(f"loaded {self.args.replicas} x {type(pipeline).__name__} from "
                f"{self.args.model} in {time.monotonic() - started:.2f} s")
        except Exception:  # noqa: BLE001  (any failure to load ends the server)
            traceback.print_exc()
            log(f"cannot load the pipeline from {self.args.model}; exiting")
            sys.stderr.flush()
            os._exit(1)

    def next_request(self):
        with self.count_lock:
            self.requests += 1
            return self.requests

    def generate(self, request):
        """PNG bytes of each image `request` (checked) asks for."""
        import torch
        pipeline = self.free.get()  # blocks until a replica is free (FIFO among the waiters)
        try:
            return self.generate_on(pipeline, request, torch)
        finally:
            self.free.put(pipeline)

    def generate_on(self, pipeline, request, torch):
        call = pipeline.__call__
        accepted = inspect.signature(call).parameters
        kwargs = pipeline_arguments(request, torch, num_images_per_prompt=request["n"],
                                    output_type="pil")
        # PixArt's own defaults that would change the request: its sizes snapped to trained
        # aspect ratios, and captions cleaned with packages this server does not need.
        for name, value in (("use_resolution_binning", False), ("clean_caption", False)):
            if name in accepted:
                kwargs[name] = value
        with torch.inference_mode():
            images = pipeline(**kwargs).images
        if self.args.process_noise:
            images = [self.noisy(image) for image in images]
        encoded = []
        for image in images:
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            encoded.append(buffer.getvalue())
        return encoded


    def generate_video(self, request):
        """MP4 bytes of the video `request` (checked) asks for."""
        import torch
        pipeline = self.free.get()
        try:
            kwargs = pipeline_arguments(request, torch, num_frames=request["num_frames"],
                                        output_type="np")
            with torch.inference_mode():
                frames = pipeline(**kwargs).frames[0]
        finally:
            self.free.put(pipeline)
        if self.args.process_noise:
            import numpy
            noise = numpy.random.default_rng(PROCESS_SEED).integers(
                -self.args.process_noise, self.args.process_noise + 1, size=frames.shape)
            frames = numpy.clip(frames + noise / 255.0, 0.0, 1.0)
        from diffusers.utils import export_to_video
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "video.mp4")
            export_to_video(list(frames), path, fps=request["fps"])
            with open(path, "rb") as file:
                return file.read()

    def add_job(self, job):
        """Keeps `job` (a dict with "id"), forgetting the oldest past --max-jobs."""
        with self.jobs_lock:
            self.jobs[job["id"]] = job
            while len(self.jobs) > self.args.max_jobs:
                self.jobs.popitem(last=False)

    def job(self, job_id):
        with self.jobs_lock:
            job = self.jobs.get(job_id)
            return dict(job) if job else None

    def update_job(self, job_id, **fields):
        with self.jobs_lock:
            if job_id in self.jobs:
                self.jobs[job_id].update(fields)

    def run_job(self, job_id, request, number):
        """A video job's thread: the video made, or the job failed with the reason."""
        args = self.args
        self.update_job(job_id, status="in_progress")
        try:
            if args.delay_s:
                time.sleep(args.delay_s)
            if args.fail_every and number % args.fail_every == 0:
                raise RuntimeError(f"injected failure of video job {number} "
                                   f"(--fail-every {args.fail_every})")
            started = time.monotonic()
            content = self.generate_video(request)
            log(f"video job {number}: {request['num_frames']} frames of {request['width']}x"
                f"{request['height']} in {request['steps']} steps, "
                f"{time.monotonic() - started:.3f} s")
            self.update_job(job_id, status="completed", content=content,
                            completed_at=int(time.time()))
        except Exception as error:  # noqa: BLE001  (the job's failure is its answer)
            log(f"video job {number}: failed: {error!r}")
            self.update_job(job_id, status="failed",
                            error={"code": "generation_failed", "message": str(error)})

    def noisy(self, image):
        """`image` with --process-noise's per-process noise added (the same in this process)."""
        import numpy
        from PIL import Image
        pixels = numpy.asarray(image.convert("RGB"), dtype=numpy.int16)
        noise = numpy.random.default_rng(PROCESS_SEED).integers(
            -self.args.process_noise, self.args.process_noise + 1, size=pixels.shape)
        return Image.fromarray(numpy.clip(pixels + noise, 0, 255).astype(numpy.uint8))


def log(message):
    print(f"ditbench_engine_server: {message}", file=sys.stderr, flush=True)


def check_int(request, name, default, low, high):
    value = request.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"'{name}' must be an integer from {low} to {high}")
    return value


def check_request(body, engine):
    """The generation request `body` (bytes) asks for, checked; raises BadRequest."""
    try:
        request = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None
    if not isinstance(request, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(request) - FIELDS)
    if unknown:
        raise BadRequest(f"unknown field '{unknown[0]}'; known: {', '.join(sorted(FIELDS))}")
    prompt = request.get("prompt")
    if not isinstance(prompt, str) or not prompt or len(prompt) > 4096:
        raise BadRequest("'prompt' must be a string of 1 to 4096 characters")
    negative = request.get("negative_prompt")
    if negative is not None and (not isinstance(negative, str) or len(negative) > 4096):
        raise BadRequest("'negative_prompt' must be a string of at most 4096 characters")
    if request.get("response_format", "b64_json") != "b64_json":
        raise BadRequest("'response_format' must be 'b64_json' (this server returns no URLs)")
    if not isinstance(request.get("model", ""), str):
        raise BadRequest("'model' must be a string")
    args, step = engine.args, engine.granularity
    size = SIZE.match(str(request.get("size", "")))
    if not size:
        raise BadRequest("'size' must be a string 'WIDTHxHEIGHT', e.g. '64x64'")
    width, height = int(size.group(1)), int(size.group(2))
    for side in (width, height):
        if not step <= side <= args.max_side or side % step:
            raise BadRequest(f"'size' {width}x{height}: each side must be a multiple of {step} "
                             f"from {step} to {args.max_side}")
    guidance = request.get("guidance_scale", 4.5)
    if isinstance(guidance, bool) or not isinstance(guidance, (int, float)) \
            or not math.isfinite(guidance) or not 0 <= guidance <= 100:
        raise BadRequest("'guidance_scale' must be a number from 0 to 100")
    seed = request.get("seed")
    return dict(prompt=prompt, negative_prompt=negative, width=width, height=height,
                n=check_int(request, "n", 1, 1, args.max_n),
                steps=check_int(request, "num_inference_steps", 20, 1, args.max_steps),
                guidance_scale=float(guidance),
                seed=secrets.randbelow(1 << 63) if seed is None
                else check_int(request, "seed", 0, 0, (1 << 63) - 1))


def parse_form(content_type, body):
    """The fields of a multipart/form-data `body` as {name: text}; raises BadRequest."""
    if not content_type.lower().startswith("multipart/form-data"):
        raise BadRequest("the body must be multipart/form-data")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1", "replace") + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise BadRequest("the body is not a multipart form")
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            raise BadRequest("a form part has no name")
        if name in fields:
            raise BadRequest(f"the field '{name}' is given twice")
        try:
            fields[name] = (part.get_payload(decode=True) or b"").decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(f"the field '{name}' is not UTF-8 text") from None
    return fields


def form_number(fields, name, default, kind):
    """A form field's text as `kind` (int or float), `default` when absent."""
    if name not in fields:
        return default
    try:
        return kind(fields[name])
    except ValueError:
        raise BadRequest(f"'{name}' must be a number, not {fields[name][:40]!r}") from None


def check_video_request(fields, engine):
    """The video job `fields` (a form's) asks for, checked; raises BadRequest."""
    unknown = sorted(set(fields) - VIDEO_FIELDS)
    if unknown:
        raise BadRequest(f"unknown field '{unknown[0]}'; known: {', '.join(sorted(VIDEO_FIELDS))}")
    request = {name: value for name, value in fields.items()
               if name in ("prompt", "negative_prompt", "size", "model")}
    for name, kind in (("num_frames", int), ("fps", int), ("num_inference_steps", int),
                       ("seed", int), ("guidance_scale", float)):
        if name in fields:
            request[name] = form_number(fields, name, None, kind)
    checked = check_request(json.dumps(
        {k: v for k, v in request.items() if k not in ("num_frames", "fps")}).encode(), engine)
    args = engine.args
    frames = request.get("num_frames", 1 + 4 * engine.frame_step)
    if not 1 <= frames <= args.max_frames or (frames - 1) % engine.frame_step:
        raise BadRequest(f"'num_frames' {frames}: expected 1 + a multiple of "
                         f"{engine.frame_step}, at most {args.max_frames}")
    fps = request.get("fps", 16)
    if not 1 <= fps <= 120:
        raise BadRequest(f"'fps' {fps}: expected 1 to 120")
    checked.update(num_frames=frames, fps=fps)
    return checked


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries its Content-Length
    server_version = f"{ENGINE}/{ENGINE_VERSION}"
    engine = None  # set by main()
    # The headers and the body go out as two writes: with Nagle's algorithm the body would
    # wait for the client's delayed ACK of the headers (about 40 ms a request on Linux).
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # noqa: A002  (BaseHTTPRequestHandler's name)
        log(f"{self.address_string()} {format % args}")

    def send_json(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status, message, kind="invalid_request_error"):
        self.send_json(status, {"error": {"message": message, "type": kind, "code": status}})

    def do_GET(self):  # noqa: N802  (BaseHTTPRequestHandler's name)
        engine = self.engine
        if self.path == "/health":
            if engine.args.never_ready or engine.pipeline is None:
                self.send_json(503, {"status": "loading"})
            else:
                self.send_json(200, {"status": "ok"})
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [
                {"id": engine.model_name, "object": "model", "owned_by": "ditbench"}]})
        elif self.path == "/version":
            self.send_json(200, {"engine": ENGINE, "version": ENGINE_VERSION,
                                 "diffusers": package_version("diffusers"),
                                 "transformers": package_version("transformers"),
                                 "torch": package_version("torch"),
                                 "python": sys.version.split()[0]})
        elif JOB_ID.match(self.path):
            self.answer_job(JOB_ID.match(self.path))
        else:
            self.send_error_json(404, f"no such path: {self.path}")

    def answer_job(self, match):
        job = self.engine.job(match.group(1))
        if job is None:
            self.send_error_json(404, f"no video job {match.group(1)}")
        elif match.group(2):
            if job["status"] != "completed":
                self.send_error_json(409, f"video job {job['id']} is {job['status']}")
            else:
                self.send_response(200)
                self.send_header("Content-Type", "video/mp4")
                self.send_header("Content-Length", str(len(job["content"])))
                self.end_headers()
                self.wfile.write(job["content"])
        else:
            answer = {key: job[key] for key in ("id", "object", "status", "created_at",
                                                "model", "size", "seconds") if key in job}
            if "completed_at" in job:
                answer["completed_at"] = job["completed_at"]
            answer["error"] = job.get("error")
            self.send_json(200, answer)

    def read_body(self):
        """The request's body, or None once an error has been answered."""
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True
            self.send_error_json(411, "a Content-Length is required")
            return None
        if int(length) > self.engine.args.max_request_bytes:
            self.close_connection = True  # the body is left unread
            self.send_error_json(413, f"the body is {length} bytes; at most "
                                      f"{self.engine.args.max_request_bytes} are accepted")
            return None
        return self.rfile.read(int(length))

    def do_POST(self):  # noqa: N802  (BaseHTTPRequestHandler's name)
        if self.path not in ("/v1/images/generations", "/v1/videos"):
            self.close_connection = True
            self.send_error_json(404, f"no such path: {self.path}")
            return
        body = self.read_body()
        if body is None:
            return
        engine = self.engine
        if engine.pipeline is None:
            self.send_error_json(503, "the model is still loading", "server_error")
            return
        video = self.path == "/v1/videos"
        try:
            if video != engine.video:
                raise BadRequest(f"this server's model makes {'videos' if engine.video else 'images'}"
                                 f"; {self.path} is not served")
            if video:
                request = check_video_request(
                    parse_form(self.headers.get("Content-Type", ""), body), engine)
            else:
                request = check_request(body, engine)
        except BadRequest as error:
            self.send_error_json(400, str(error))
            return
        if video:
            self.create_job(request, engine.next_request())
        else:
            self.answer_generation(request, engine.next_request())

    def create_job(self, request, number):
        args = self.engine.args
        if args.die_after and number > args.die_after:
            log(f"video job {number}: exiting without an answer (--die-after {args.die_after})")
            os._exit(3)
        job = {"id": "video_" + secrets.token_hex(12), "object": "video", "status": "queued",
               "created_at": int(time.time()), "model": request.get("model") or
               self.engine.model_name, "size": f"{request['width']}x{request['height']}"}
        answer = {key: job[key] for key in ("id", "object", "status", "created_at")}
        self.engine.add_job(job)
        threading.Thread(target=self.engine.run_job, args=(job["id"], request, number),
                         name=f"job {number}", daemon=True).start()
        self.send_json(200, answer)

    def answer_generation(self, request, number):
        args = self.engine.args
        if args.die_after and number > args.die_after:
            log(f"image request {number}: exiting without an answer (--die-after "
                f"{args.die_after})")
            os._exit(3)
        if args.delay_s:
            time.sleep(args.delay_s)
        if args.fail_every and number % args.fail_every == 0:
            self.send_error_json(500, f"injected failure of image request {number} "
                                      f"(--fail-every {args.fail_every})", "server_error")
        elif args.huge_body or args.endless_body:
            self.stream_body(declared=args.huge_body)
        elif args.malformed:
            self.send_raw(200, b"<html>this is not JSON {\"data\": [")
        else:
            started = time.monotonic()
            try:
                images = self.engine.generate(request)
            except Exception as error:  # noqa: BLE001  (the pipeline's failure is the answer)
                log(f"image request {number}: the pipeline failed: {error!r}")
                self.send_error_json(500, f"the pipeline failed: {type(error).__name__}: "
                                          f"{error}", "server_error")
                return
            log(f"image request {number}: {len(images)} image(s) of {request['width']}x"
                f"{request['height']} in {request['steps']} steps, "
                f"{time.monotonic() - started:.3f} s")
            self.send_json(200, {"created": int(time.time()), "data": [
                {"b64_json": base64.b64encode(png).decode("ascii")} for png in images]})

    def send_raw(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream_body(self, declared):
        """A body of zeros: 1 GiB declared, or no length and at most 16 GiB."""
        limit = (1 << 30) if declared else (16 << 30)
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if declared:
            self.send_header("Content-Length", str(limit))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        sent = 0
        try:
            while sent < limit:
                self.wfile.write(STREAM_CHUNK)
                sent += len(STREAM_CHUNK)
        except OSError:
            log(f"the client hung up after {sent} bytes of the streamed body")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never a download
    engine = Engine(args)
    Handler.engine = engine
    try:
        server = ThreadingHTTPServer((HOST, args.port), Handler)
    except OSError as error:
        log(f"cannot listen on {HOST}:{args.port}: {error}")
        return 2
    server.daemon_threads = True
    print(f"listening on {HOST}:{server.server_address[1]}", flush=True)
    threading.Thread(target=engine.load, name="load", daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
