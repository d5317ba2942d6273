"""Parameter sweeps on Dask: many shear tests, runs or contact cases, spread over the cores and
GPUs of this machine or of a cluster, one task per member, nothing run twice.

``wgdem.sweep(job, config, grid=..., sets=..., repeats=...)`` takes a base configuration and the
overrides (dotted key → value, as ``--set`` gives them) of each member, runs every member as
one ``dask.distributed`` task that writes the files of the command line to its own directory
under ``out`` (named by a stable hash of its overrides), and returns a pandas DataFrame with one
row per member: its parameters, every value of its ``summary.json``, its status and wall time.
docs/sweeps.md is the guide; ``pip install "./python[sweep]"`` brings Dask and pandas.

Each member's directory holds, besides the job's files, ``sweep-member.json``: the member's
overrides, the hash of its input (the configuration text after the overrides, the job, the
engine and wgdem's version) and its status. A sweep run again takes the results of a member
whose directory says ``done`` for the same input hash, continues one that holds a checkpoint
of the same input (``resume=True``), and runs the others; ``index.json`` maps every member's
directory to its parameters, ``results.csv`` is the table returned.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _wgdem
from .errors import ConfigError, EngineError, FileError

JOBS = ("shear", "run", "contact")
BACKENDS = ("gpu", "cpu", "auto")
SEED_KEY = "simulation.seed"
# The job's own arguments a sweep passes to every member (`options=`), as the command line's
# flags: `particles` scales a shear test, `specimen` starts it from a saved packing.
OPTIONS = {
    "shear": ("particles", "specimen", "gpu_path", "pairs"),
    "run": ("gpu_path", "pairs"),
    "contact": (),
}
MEMBER_FILE = "sweep-member.json"
INDEX_FILE = "index.json"
RESULTS_FILE = "results.csv"
# Columns of a row besides the parameters and the summary's values.
STATUS_COLUMNS = ["member", "repeat", "status", "error", "wall_s", "reused", "resumed", "dir"]


def _refuse(field: str, message: str) -> ConfigError:
    return ConfigError(f"wgdem.sweep: `{field}`: {message}")


def _needs(what: str):
    """Imports `what` (dask.distributed, pandas), or says how to install the sweep extra."""
    try:
        return __import__(what, fromlist=["_"])
    except ImportError as e:
        raise ImportError(
            f"wgdem.sweep needs {what} ({e}); install the sweep extra: "
            'pip install "./python[sweep]" (dask[distributed] and pandas)'
        ) from e


def _plain(value: Any, field: str) -> Any:
    """A parameter value as JSON and TOML take it: NumPy scalars as Python numbers; lists and
    dicts of them; anything else refused naming the key."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (list, dict)):
        value = value.item()
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(field, f"{value} is not a finite number; TOML and the inputs take finite ones")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, field) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, field) for k, v in value.items()}
    raise _refuse(field, f"{value!r} ({type(value).__name__}) is not a number, bool, str, list or dict")


def _key(key: Any, where: str) -> str:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise _refuse(where, f"the key {key!r} is not a dotted key such as materials.quartz.friction")
    return key


def _grid_points(grid: Optional[dict]) -> List[Dict[str, Any]]:
    """Every combination of a grid's values (the first key varying slowest)."""
    if grid is None:
        return [{}]
    if not isinstance(grid, dict):
        raise _refuse("grid", "give a dict of dotted key → list of values, e.g. {\"materials.quartz.friction\": [0.2, 0.3]}")
    axes = []
    for key, values in grid.items():
        key = _key(key, "grid")
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
            raise _refuse(f"grid.{key}", f"{values!r} is not a list of values; give [{values!r}] for one value")
        values = [_plain(v, f"grid.{key}") for v in values]
        if not values:
            raise _refuse(f"grid.{key}", "is empty; give at least one value")
        if len({json.dumps(v, sort_keys=True) for v in values}) < len(values):
            raise _refuse(f"grid.{key}", f"{values} repeats a value; each value is one member")
        axes.append([(key, v) for v in values])
    return [dict(point) for point in itertools.product(*axes)]


def _override_sets(sets: Any) -> List[Dict[str, Any]]:
    """A list of dicts, or a pandas DataFrame (one column per dotted key; an empty cell leaves
    the key out of that member), as override sets."""
    if sets is None:
        return [{}]
    if hasattr(sets, "to_dict") and hasattr(sets, "columns"):
        rows = sets.to_dict(orient="records")
        sets = [{k: v for k, v in row.items() if not _is_missing(v)} for row in rows]
    if isinstance(sets, dict) or not isinstance(sets, (list, tuple)):
        raise _refuse("sets", "give a list of dicts (dotted key → value) or a pandas DataFrame with one column per key")
    out = []
    for k, entry in enumerate(sets):
        if not isinstance(entry, dict):
            raise _refuse(f"sets[{k}]", f"{entry!r} is not a dict of dotted key → value")
        out.append({_key(key, f"sets[{k}]"): _plain(v, f"sets[{k}].{key}") for key, v in entry.items()})
    if not out:
        raise _refuse("sets", "is empty; give at least one override set (or leave sets out)")
    return out


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _config_argument(config: Any) -> str:
    """The configuration as the members get it: an absolute path for a file (so that its packing
    files are found next to it, on every worker that shares the file system), else its text."""
    if isinstance(config, os.PathLike) or (isinstance(config, str) and "\n" not in config and "=" not in config):
        path = Path(config).expanduser().resolve()
        if not path.is_file():
            raise FileError(f"wgdem.sweep: `config`: {path} is not a file; give a configuration file or its TOML text")
        return str(path)
    if not isinstance(config, str):
        raise _refuse("config", f"{config!r} is neither a path nor TOML text")
    return config


def _base_seed(text: str) -> int:
    """The `simulation.seed` of an input's text (0, the default, where it gives none)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    seed = tomllib.loads(text).get("simulation", {}).get("seed", 0)
    return int(seed) if isinstance(seed, int) else 0


def job_options(job: str, options: Optional[dict]) -> Dict[str, Any]:
    """`options` checked against the job's arguments, a specimen by its absolute path."""
    options = dict(options or {})
    for name in options:
        if name not in OPTIONS.get(job, ()):
            allowed = ", ".join(OPTIONS.get(job, ())) or "none"
            raise _refuse(f"options.{name}", f"is not an argument of every {job} member; {job} takes {allowed}")
    if "specimen" in options:
        path = Path(options["specimen"]).expanduser().resolve()
        if not path.is_file():
            raise FileError(f"wgdem.sweep: `options.specimen`: {path} is not a file; give a saved packing")
        options["specimen"] = str(path)
    if "particles" in options:
        n = options["particles"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise _refuse("options.particles", f"{n!r} is not a count of spheres ≥ 1")
    return options


def members(job: str, config: Any, grid=None, sets=None, repeats: int = 1, backend: str = "gpu", options: Optional[dict] = None) -> List[dict]:
    """The members of a sweep, each a dict: `member` (its directory's name), `overrides`,
    `repeat`, `input_sha256`. Refuses a bad grid, set, key or option (naming it) before
    anything runs; a key the job's format does not know is refused here, a bad value is the
    member's failure. The options (a specimen by the hash of its bytes) are part of every
    member's input hash, not of its name."""
    if job not in JOBS:
        raise _refuse("job", f"{job!r} is not a job; give one of {', '.join(JOBS)}")
    if backend not in BACKENDS:
        raise _refuse("backend", f"{backend!r} is not an engine; give one of {', '.join(BACKENDS)}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise _refuse("repeats", f"{repeats!r} is not a whole number ≥ 1")
    config = _config_argument(config)
    points, override_sets = _grid_points(grid), _override_sets(sets)
    both = sorted(set(points[0]) & set().union(*override_sets))
    if both:
        raise _refuse("grid", f"{both[0]} is also in `sets`; give each key in one of them")
    if repeats > 1:
        if job == "contact":
            raise _refuse("repeats", "a contact case has no random specimen: its repeats would be the same run; leave repeats at 1")
        if SEED_KEY in points[0] or any(SEED_KEY in s for s in override_sets):
            raise _refuse("repeats", f"draws its own seeds ({SEED_KEY} + 0, 1, …); leave {SEED_KEY} out of grid and sets, or repeats at 1")
    options = job_options(job, options)
    given = dict(options)
    if "specimen" in given:
        given["specimen"] = hashlib.sha256(Path(given["specimen"]).read_bytes()).hexdigest()
    version = _wgdem.__version__
    out, seen = [], {}
    for k, (s, p) in enumerate(itertools.product(override_sets, points)):
        base = {**s, **p}
        text = _wgdem.member_input(job, config, base)
        for r in range(repeats):
            overrides = dict(base)
            if repeats > 1:
                overrides[SEED_KEY] = _base_seed(text) + r
                resolved = _wgdem.member_input(job, config, overrides)
            else:
                resolved = text
            name = f"{job}-{_hash({'job': job, 'overrides': overrides})[:12]}"
            if name in seen:
                raise _refuse("sets", f"member {k} repeats the overrides of member {seen[name]} ({overrides}); give each set once")
            seen[name] = k
            out.append(
                {
                    "member": name,
                    "overrides": overrides,
                    "repeat": r,
                    "input_sha256": _hash({"job": job, "backend": backend, "version": version, "input": resolved, "options": given}),
                }
            )
    return out


def _read_json(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: dict) -> None:
    """Writes `data` to `path` whole (a temporary file renamed), so that a sweep killed at any
    moment leaves the old record or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _finished(directory: Path, member: dict) -> Optional[dict]:
    """The record of a member whose directory holds its finished results for the same input."""
    record = _read_json(directory / MEMBER_FILE)
    if (
        record
        and record.get("status") == "done"
        and record.get("input_sha256") == member["input_sha256"]
        and (directory / "summary.json").is_file()
    ):
        return record
    return None


def _done_row(directory: Path, member: dict, reused: bool) -> Optional[dict]:
    """The row of a member whose directory holds its finished results for the same input."""
    record = _finished(directory, member)
    if record is None:
        return None
    summary = _read_json(directory / "summary.json")
    return {"status": "done", "error": None, "wall_s": record.get("wall_s"), "reused": reused, "resumed": bool(record.get("resumed")), "summary": summary}


def run_member(spec: dict) -> dict:
    """Runs one member (a task on a Dask worker): the job into its directory, continued from its
    checkpoint where an interrupted run of the same input left one. Returns its row's status
    and summary; a failure (a blow-up, a bad value, an engine error) is returned, not raised."""
    from . import contact, run, shear

    directory = Path(spec["dir"])
    directory.mkdir(parents=True, exist_ok=True)
    record_path = directory / MEMBER_FILE
    prior = _read_json(record_path) or {}
    same_input = prior.get("input_sha256") == spec["input_sha256"]
    resume = spec["job"] != "contact" and same_input and prior.get("status") == "running" and (directory / "checkpoint.bin").is_file()
    record = {k: spec[k] for k in ("job", "member", "overrides", "repeat", "input_sha256", "backend")}
    _write_json(record_path, {**record, "status": "running"})
    job = {"shear": shear, "run": run, "contact": contact}[spec["job"]]
    kwargs = dict(backend=spec["backend"], out=directory, overrides=spec["overrides"], **spec["options"])
    if spec["job"] != "contact":
        kwargs["progress"] = False
    # A resumed test continues from its checkpoint, not from the specimen it started with.
    resumed_kwargs = {k: v for k, v in kwargs.items() if k != "specimen"}
    adapter = _worker_adapter(spec.get("adapters"))
    if adapter is not None:
        kwargs["adapter"] = adapter
    start = time.monotonic()
    summary, error = None, None
    try:
        if resume:
            try:
                summary = job(spec["config"], resume=True, **resumed_kwargs).summary
            except (ConfigError, FileError):
                # A checkpoint this build cannot continue: the member runs again from the start.
                resume = False
        if summary is None:
            summary = job(spec["config"], overwrite=True, **kwargs).summary
    except Exception as e:  # noqa: BLE001 — a member's failure is its row, whatever it is
        error = f"{type(e).__name__}: {e}"
    wall = time.monotonic() - start
    status = "failed" if error else "done"
    ran_on = {"host": socket.gethostname(), "pid": os.getpid()}
    _write_json(record_path, {**record, **ran_on, "status": status, "error": error, "wall_s": wall, "resumed": resume})
    return {"member": spec["member"], "status": status, "error": error, "wall_s": wall, "resumed": resume, "summary": summary}


def _worker_adapter(adapters: Optional[Sequence[str]]) -> Optional[str]:
    """The adapter of this worker where the sweep's own cluster has one worker per adapter."""
    if not adapters:
        return None
    try:
        from distributed import get_worker

        return adapters[int(get_worker().name) % len(adapters)]
    except (ImportError, ValueError, TypeError):
        return None


def local_workers(backend: str) -> tuple:
    """The worker count of this machine's cluster for `backend`, and the adapters the workers
    take one each (None: each its default): one worker per GPU adapter for the GPU engine (a
    software one, lavapipe, counts once: it runs on every core), one per core for the CPU
    reference (single-threaded); "auto" as the GPU engine where there is a hardware GPU."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if backend == "cpu":
        return cores, None
    adapters = _wgdem.adapters()
    # Each worker's adapter by its PCI bus id where it has one (identical GPUs share a name).
    hardware = [a["pci_bus_id"] or a["name"] for a in adapters if not a["software"]]
    if hardware:
        return len(hardware), hardware if len(hardware) > 1 else None
    if backend == "auto":
        return cores, None
    if not adapters:
        raise EngineError("wgdem.sweep: no GPU adapter (not even lavapipe); pass backend=\"cpu\" for the CPU reference")
    return 1, None


def _flatten(summary: Optional[dict], prefix: str = "") -> dict:
    out = {}
    for key, value in (summary or {}).items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


class _Progress:
    """The sweep's one progress line on stderr: done / running / failed / ETA; rewritten in
    place on a terminal, a line per change elsewhere (a log)."""

    def __init__(self, total: int, reused: int, workers: int, show: bool):
        self.total, self.reused, self.workers, self.show = total, reused, workers, show
        self.tty = sys.stderr.isatty()
        self.start, self.last = time.monotonic(), None

    def update(self, done: int, failed: int, running: int, walls: List[float]) -> None:
        if not self.show:
            return
        left = self.total - done - failed
        eta = ""
        if walls and left:
            seconds = sum(walls) / len(walls) * math.ceil(left / max(self.workers, 1))
            eta = f", ETA {_duration(seconds)}"
        reused = f" ({self.reused} from an earlier sweep)" if self.reused else ""
        line = f"sweep: {done}/{self.total} done{reused}, {running} running, {failed} failed{eta}"
        if line == self.last:
            return
        self.last = line
        if self.tty:
            sys.stderr.write("\r" + line + "\033[K")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.show and self.tty and self.last:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def sweep(
    job: str,
    config: Union[str, "os.PathLike[str]"],
    grid: Optional[dict] = None,
    sets: Any = None,
    repeats: int = 1,
    backend: str = "gpu",
    out: Union[str, "os.PathLike[str]"] = "out/sweep",
    client: Any = None,
    workers: Optional[int] = None,
    progress: bool = True,
    options: Optional[dict] = None,
):
    """Runs many members of one job on Dask and returns a pandas DataFrame, one row per member
    (needs the sweep extra: ``pip install "./python[sweep]"``; docs/sweeps.md is the guide).

    job: ``"shear"``, ``"run"`` or ``"contact"``; config: the base configuration (a file, or
        its TOML text; a file is given to the workers by its absolute path, so that its packing
        files are found: on a cluster, a path every worker can read).
    grid: dotted key → list of values; every combination is a member
        (``{"materials.quartz.friction": [0.2, 0.3], "consolidation.normal_stress": [1e5, 2e5]}``
        is four).
    sets: override sets, a list of dicts or a pandas DataFrame with one column per dotted key
        (an empty cell leaves the key out); with ``grid`` too, every set with every grid point.
    repeats: members per parameter set with seeds ``simulation.seed`` + 0, 1, …
        (the base file's seed first): repeats over random specimens.
    backend: the engine of every member, ``"gpu"`` (the default), ``"cpu"`` or ``"auto"``.
    out: the sweep's directory: a directory per member (its name ``JOB-HASH``, a stable hash of
        its overrides) holding the files of the command line, ``index.json`` (member →
        parameters) and ``results.csv`` (the table returned). On a cluster, a shared directory.
    client: a ``dask.distributed.Client`` or a scheduler's address (``"tcp://host:8786"``);
        None starts a ``LocalCluster`` of worker processes on this machine: one per GPU adapter
        for the GPU engine (lavapipe counts once: it uses every core), one per core for the
        CPU reference; ``workers`` sets the number instead.
    progress: one line on stderr, done / running / failed / ETA.
    options: the job's own arguments for every member, as its flags: for ``"shear"``
        ``particles`` (scale the test), ``specimen`` (start from a saved packing: one
        preparation for every member), ``gpu_path`` and ``pairs``; for ``"run"`` ``gpu_path``
        and ``pairs``.

    A key that the job's format does not know, a grid value that is not a list, a key both in
    ``grid`` and ``sets`` or a seed with ``repeats`` are refused (``ConfigError`` naming it)
    before anything runs. A member that fails (a blow-up, a bad value, a lost worker) is a row
    with ``status`` "failed" and its ``error``; the others go on. A sweep run again into the
    same ``out`` takes the results of finished members of the same input (``reused``),
    continues interrupted ones from their checkpoint (``resumed``) and runs the rest. Ctrl-C
    stops the sweep: the cluster it started is closed, ``results.csv`` holds the rows so far.

    Each row: ``member``, one column per overridden key, ``repeat``, ``status``, ``error``,
    ``wall_s`` (of the member's last run: for a resumed one, from its checkpoint on),
    ``reused``, ``resumed``, every value of the member's ``summary.json`` (nested
    keys joined by dots), and ``dir``.
    """
    distributed = _needs("distributed")
    pandas = _needs("pandas")
    options = job_options(job, options)
    plan = members(job, config, grid, sets, repeats, backend, options)
    config = _config_argument(config)
    out = Path(out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    index = _read_json(out / INDEX_FILE) or {}
    for m in plan:
        index[m["member"]] = {"job": job, "overrides": m["overrides"], "repeat": m["repeat"], "backend": backend}
    _write_json(out / INDEX_FILE, index)

    rows: Dict[str, dict] = {}
    todo = []
    for m in plan:
        row = _done_row(out / m["member"], m, reused=True)
        if row is not None:
            rows[m["member"]] = row
        else:
            todo.append(m)

    if todo:
        own = client is None or isinstance(client, str)
        adapters, cluster, local_pids = None, None, []
        if client is None:
            n, adapters = local_workers(backend)
            n = max(1, min(workers or n, len(todo)))
            # No memory limit: Dask's would pause or restart a worker whose member holds more
            # than its share of the host's memory, which the engine itself sized and checked.
            cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, memory_limit=0, dashboard_address=":0"
            )
            client = distributed.Client(cluster)
            local_pids = list(client.run(os.getpid).values())
        elif isinstance(client, str):
            client = distributed.Client(client)
        try:
            _run_on(client, distributed, todo, rows, dict(config=config, job=job, backend=backend, options=options, adapters=adapters), out, progress, len(plan) - len(todo))
        except KeyboardInterrupt:
            _stop(local_pids, todo, rows, out)
            _write_results(pandas, plan, rows, out)
            raise
        finally:
            if own:
                client.close()
                if cluster is not None:
                    cluster.close()
    return _write_results(pandas, plan, rows, out)


def _stop(local_pids: List[int], todo: List[dict], rows: Dict[str, dict], out: Path) -> None:
    """Ctrl-C: the members running on this machine's cluster (its worker processes
    `local_pids`) stop now, keeping their last checkpoint (a worker asked to close would first
    finish its member, however long); a cluster that a `client` points to is not ours to stop,
    its running members end. A member that finished while the sweep was stopping gets its row."""
    for pid in local_pids:
        try:
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        except OSError:
            pass
    for m in todo:
        if m["member"] not in rows:
            row = _done_row(out / m["member"], m, reused=False)
            if row is not None:
                rows[m["member"]] = row


def _run_on(client, distributed, todo, rows, common: dict, out: Path, show: bool, reused: int) -> None:
    """Submits `todo` to `client` (each member's spec: the member, its directory and `common`:
    config, job, backend, options, adapters) and collects each row into `rows` as it ends."""
    specs = [{**m, **common, "dir": str(out / m["member"])} for m in todo]
    futures = client.map(run_member, specs, key=[f"wgdem-sweep-{m['member']}" for m in todo], pure=False)
    by_key = {f.key: m for f, m in zip(futures, todo)}
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    line = _Progress(len(todo) + reused, reused, workers, show)
    done, failed, walls = reused, 0, []
    waiting = distributed.as_completed(futures)
    try:
        while not waiting.is_empty():
            finished = waiting.next_batch(block=False)
            for future in finished:
                member = by_key[future.key]
                try:
                    result = future.result()
                except Exception as e:  # noqa: BLE001 — a worker lost with its task
                    result = {"status": "failed", "error": f"{type(e).__name__}: {e}", "wall_s": None, "resumed": False, "summary": None}
                rows[member["member"]] = {**result, "reused": False}
                if result["status"] == "done":
                    done += 1
                    if result["wall_s"] is not None:
                        walls.append(result["wall_s"])
                else:
                    failed += 1
            running = min(waiting.count(), workers, _processing(client, by_key))
            line.update(done, failed, running, walls)
            if not finished:
                time.sleep(0.2)
    except KeyboardInterrupt:
        client.cancel(futures)
        raise
    finally:
        line.finish()


def _processing(client, by_key) -> int:
    """How many of the sweep's tasks a worker is running now."""
    try:
        return sum(1 for keys in client.processing().values() for k in keys if k in by_key)
    except Exception:  # noqa: BLE001 — only a progress figure
        return 0


def _write_results(pandas, plan, rows, out: Path):
    """The table of the members that have a row, as returned and as ``results.csv``."""
    params = list(dict.fromkeys(k for m in plan for k in m["overrides"]))
    records = []
    for m in plan:
        row = rows.get(m["member"])
        if row is None:
            continue
        record = {"member": m["member"], **{k: m["overrides"].get(k) for k in params}, "repeat": m["repeat"]}
        record.update({k: row.get(k) for k in ("status", "error", "wall_s", "reused", "resumed")})
        record.update(_flatten(row.get("summary")))
        record["dir"] = str(out / m["member"])
        records.append(record)
    columns = ["member", *params, *[c for c in STATUS_COLUMNS if c not in ("member", "dir")]]
    frame = pandas.DataFrame.from_records(records, columns=None if records else columns + ["dir"])
    if records:
        rest = [c for c in frame.columns if c not in columns and c != "dir"]
        frame = frame[columns + rest + ["dir"]]
    frame.to_csv(out / RESULTS_FILE, index=False)
    return frame
