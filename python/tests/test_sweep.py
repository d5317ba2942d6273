"""wgdem.sweep and `wgdem sweep` on Dask: a grid on a LocalCluster gives the rows of the command
line's runs; failures are rows; a stopped sweep runs only what is left; a real scheduler and
workers over TCP; bad grids refused naming the key."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import wgdem
from conftest import gpu_skipped, lattice_scene, wgdem_binary

try:
    import distributed
    import pandas
except ImportError as e:  # the sweep extra is part of the tests (scripts/python-tests.sh)
    why = f"the sweep extra is not installed ({e}): pip install './python[sweep]'"
    if os.environ.get("WGDEM_STRICT_TESTS") == "1":
        raise
    pytest.skip(why, allow_module_level=True)

# The lattice settling in its box under gravity for 0.05 s (100 spheres, 4 750 steps: a tenth
# of a second on the CPU reference), a row every 0.01 s.
SETTLING = lattice_scene(gravity=(0.0, 0.0, -9.81)).replace("duration = 0.1", "duration = 0.05")
GRID = {"materials.grain.friction": [0.2, 0.4], "materials.grain.restitution": [0.3, 0.6]}
# Written by the process, not by the physics: its pid, command line and timing.
PROCESS_FILES = {".wgdem.lock", "manifest.json", "summary.json", "checkpoint.bin", "sweep-member.json"}
PROCESS_KEYS = {"command_line", "wall_clock_s", "particle_steps_per_s", "input_file"}


def files(out):
    """The files of a run under `out` by relative path, with their bytes."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in PROCESS_FILES
    }


def physics(summary):
    return {k: v for k, v in summary.items() if k not in PROCESS_KEYS}


def cli_run(scene, overrides, out, backend="cpu"):
    """`wgdem run SCENE --backend BACKEND --set K=V …` into `out`."""
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]
    cli = subprocess.run(
        [wgdem_binary(), "run", scene, "--backend", backend, "--out", out, *sets],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr


def record(directory):
    return json.loads((Path(directory) / "sweep-member.json").read_text())


def test_a_grid_on_two_local_workers_gives_the_rows_of_four_command_line_runs(tmp_path):
    """A 2 × 2 grid on a LocalCluster of two worker processes: four rows, each member's files
    byte for byte those of ``wgdem run --set …`` with the same overrides, its summary the same
    but for the process's own figures (timing, command line), its directory named by the
    documented hash of its overrides, and index.json mapping the names to the parameters."""
    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING)
    table = wgdem.sweep("run", scene, grid=GRID, backend="cpu", out=tmp_path / "sweep", workers=2, progress=False)
    assert len(table) == 4 and list(table["status"]) == ["done"] * 4, table[["status", "error"]]
    assert not table["reused"].any() and not table["resumed"].any()
    index = json.loads((tmp_path / "sweep" / "index.json").read_text())
    pids = set()
    for _, row in table.iterrows():
        overrides = {k: row[k] for k in GRID}
        # The name: sha256 of the compact, key-sorted JSON of the job and its overrides.
        text = json.dumps({"job": "run", "overrides": overrides}, sort_keys=True, separators=(",", ":"))
        assert row["member"] == "run-" + hashlib.sha256(text.encode()).hexdigest()[:12]
        assert index[row["member"]]["overrides"] == overrides
        member = Path(row["dir"])
        cli_run(scene, overrides, tmp_path / "cli" / row["member"])
        mine, theirs = files(member), files(tmp_path / "cli" / row["member"])
        assert sorted(mine) == sorted(theirs) and "timeseries.csv" in mine and "input.toml" in mine
        for name in mine:
            assert mine[name] == theirs[name], (row["member"], name)
        summary = json.loads((member / "summary.json").read_text())
        cli_summary = json.loads((tmp_path / "cli" / row["member"] / "summary.json").read_text())
        assert physics(summary) == physics(cli_summary)
        # The row carries every summary value.
        assert row["steps"] == summary["steps"] == 4750 and row["n_particles"] == 100
        assert row["final_kinetic_energy_J"] == summary["final_kinetic_energy_J"]
        pids.add(record(member)["pid"])
    # The members do differ: friction and restitution change the settled lattice's rows.
    series = {(tmp_path / "sweep" / m / "timeseries.csv").read_bytes() for m in table["member"]}
    assert len(series) == 4
    assert len(pids) == 2, "the four members ran on the two worker processes"
    written = pandas.read_csv(tmp_path / "sweep" / "results.csv")
    assert list(written["member"]) == list(table["member"])


def test_a_member_that_blows_up_is_a_row_and_the_others_finish(tmp_path):
    """Of three members, one blows up (the largest gravity a scene may give, and a speed bound
    of 1 m/s the spheres pass within steps, as in test_simulation.py) and one has a
    bad value (a negative friction, refused naming the key): both are rows with their error,
    the third finishes. Run again, the finished one is taken as it is and the failed ones run
    again (and fail again)."""
    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING)
    sets = [
        {"simulation.max_speed": 100.0},
        {"simulation.gravity": [0.0, 0.0, -1e6], "simulation.max_speed": 1.0},
        {"materials.grain.friction": -1.0},
    ]
    out = tmp_path / "sweep"
    table = wgdem.sweep("run", scene, sets=sets, backend="cpu", out=out, workers=2, progress=False)
    status = list(table["status"])
    assert status == ["done", "failed", "failed"], table[["status", "error"]]
    assert table["error"][1].startswith("BlowUpError") and "blew up by step" in table["error"][1]
    assert table["error"][2].startswith("ConfigError") and "materials[0].friction" in table["error"][2]
    assert pandas.isna(table["steps"][1]) and table["steps"][0] == 4750
    assert record(table["dir"][1])["status"] == "failed"
    again = wgdem.sweep("run", scene, sets=sets, backend="cpu", out=out, workers=2, progress=False)
    assert list(again["reused"]) == [True, False, False]
    assert list(again["status"]) == status and again["wall_s"][0] == table["wall_s"][0]


def test_contact_cases_as_members(tmp_path):
    """A contact sweep (the Hertz slip case at two frictions) writes what ``wgdem contact --set``
    writes, byte for byte."""
    case = Path(__file__).resolve().parents[2] / "assets" / "contact" / "hertz_true_slip.toml"
    table = wgdem.sweep("contact", case, grid={"contact.friction": [0.3, 0.5]}, backend="cpu", out=tmp_path / "c", workers=2, progress=False)
    assert list(table["status"]) == ["done", "done"], table["error"]
    for _, row in table.iterrows():
        cli = subprocess.run(
            [wgdem_binary(), "contact", case, "--out", tmp_path / "cli" / row["member"], "--set", f"contact.friction={row['contact.friction']}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert cli.returncode == 0, cli.stderr
        assert files(Path(row["dir"])) == files(tmp_path / "cli" / row["member"])
    assert (tmp_path / "c" / table["member"][0] / "contact.csv").read_bytes() != (tmp_path / "c" / table["member"][1] / "contact.csv").read_bytes()


@pytest.mark.skipif(gpu_skipped(), reason="WGDEM_SKIP_GPU_TESTS=1")
def test_gpu_members_write_what_the_command_line_writes(tmp_path):
    """A sweep on the GPU engine (the default; one worker where the only adapter is a software
    one, which spreads its dispatches over every core) writes what ``wgdem run --backend gpu
    --set`` writes on the same device, byte for byte."""
    from wgdem.sweeps import local_workers

    adapters = wgdem.adapters()
    assert adapters and all({"name", "pci_bus_id", "software", "description"} <= set(a) for a in adapters)
    if all(a["software"] for a in adapters):
        assert local_workers("gpu") == (1, None)
    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING)
    grid = {"materials.grain.friction": [0.2, 0.4]}
    table = wgdem.sweep("run", scene, grid=grid, out=tmp_path / "g", progress=False)
    assert list(table["status"]) == ["done", "done"], table["error"]
    assert list(table["backend"]) == ["gpu", "gpu"]
    for _, row in table.iterrows():
        cli_run(scene, {k: row[k] for k in grid}, tmp_path / "gcli" / row["member"], backend="gpu")
        assert files(Path(row["dir"])) == files(tmp_path / "gcli" / row["member"]), row["member"]


def sweep_file(tmp_path, scene, grid, **keys):
    lines = [f'job = "run"', f'config = "{scene.name}"', 'backend = "cpu"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    lines.append("[grid]")
    lines += [f'"{k}" = {json.dumps(v)}' for k, v in grid.items()]
    path = tmp_path / "sweep.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_stopped_sweep_runs_only_the_others_again(tmp_path):
    """``python -m wgdem sweep`` on one worker, stopped with Ctrl-C once two members are done
    and the third holds a checkpoint: it exits 130 at once with results.csv holding the two.
    Run again, the two are taken as they are, the third continues from its checkpoint (and
    ends with the files of an uninterrupted command-line run), the fourth runs."""
    # Half a second of settling, a row and a checkpoint every 0.01 s: about a second a member.
    scene = tmp_path / "scene.toml"
    scene.write_text(
        SETTLING.replace("duration = 0.05", "duration = 0.5") + "[output]\ncheckpoint_rows = 1\ncheckpoint_seconds = 0\nvtk_interval = 0.0\n"
    )
    grid = {"materials.grain.friction": [0.1, 0.2, 0.3, 0.4]}
    path = sweep_file(tmp_path, scene, grid, out="out", workers=1)
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "wgdem", "sweep", path, "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def states():
        found = {}
        for member in out.glob("run-*"):
            try:
                found[member.name] = (record(member)["status"], (member / "checkpoint.bin").exists())
            except (OSError, ValueError):
                pass
        return found

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        now = states()
        done = [m for m, (s, _) in now.items() if s == "done"]
        caught = [m for m, (s, cp) in now.items() if s == "running" and cp]
        if len(done) == 2 and caught:
            break
        time.sleep(0.02)
    assert child.poll() is None, "the sweep ended before it could be stopped"
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "run it again to continue" in stderr
    assert time.monotonic() - sent < 15
    before = states()
    finished = sorted(m for m, (s, _) in before.items() if s == "done")
    interrupted = [m for m, (s, cp) in before.items() if s == "running" and cp]
    assert len(finished) == 2 and len(interrupted) == 1, before
    partial = pandas.read_csv(out / "results.csv")
    assert sorted(partial["member"]) == finished

    table = wgdem.sweep("run", scene, grid=grid, backend="cpu", out=out, workers=1, progress=False)
    assert list(table["status"]) == ["done"] * 4
    by_member = table.set_index("member")
    assert sorted(by_member.index[by_member["reused"]]) == finished
    assert list(by_member.index[by_member["resumed"]]) == interrupted
    resumed = by_member.loc[interrupted[0]]
    cli_run(scene, {"materials.grain.friction": resumed["materials.grain.friction"]}, tmp_path / "cli")
    mine, theirs = files(Path(resumed["dir"])), files(tmp_path / "cli")
    assert sorted(mine) == sorted(theirs)
    for name in mine:
        assert mine[name] == theirs[name], name


def test_a_sweep_on_a_dask_scheduler_and_two_workers_over_tcp(tmp_path):
    """`wgdem sweep FILE --scheduler tcp://…` against a `dask scheduler` and two `dask worker`
    processes started on localhost: the distributed path, over TCP. Both workers take members,
    and each member's files are those of the same member run on a LocalCluster."""
    dask = Path(sys.executable).parent / "dask"
    scheduler_file = tmp_path / "scheduler.json"
    common = ["--no-dashboard"]
    processes = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file", scheduler_file, *common],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [dask, "worker", "--scheduler-file", scheduler_file, "--nthreads", "1", "--nworkers", "1", *common],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        with distributed.Client(address) as client:
            client.wait_for_workers(2, timeout=60)
        scene = tmp_path / "scene.toml"
        scene.write_text(SETTLING)
        path = sweep_file(tmp_path, scene, GRID, out="remote")
        env = {**os.environ, "WGDEM_PYTHON": sys.executable}
        cli = subprocess.run(
            [wgdem_binary(), "sweep", path, "--scheduler", address, "--quiet"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=300,
        )
        assert cli.returncode == 0, cli.stderr
        assert "results.csv" in cli.stdout and "done" in cli.stdout
        remote = pandas.read_csv(tmp_path / "remote" / "results.csv")
        assert list(remote["status"]) == ["done"] * 4
        assert len({record(d)["pid"] for d in remote["dir"]}) == 2, "both workers took members"
        local = wgdem.sweep("run", scene, grid=GRID, backend="cpu", out=tmp_path / "local", workers=2, progress=False)
        assert list(local["member"]) == list(remote["member"])
        for member in local["member"]:
            mine, theirs = files(tmp_path / "local" / member), files(tmp_path / "remote" / member)
            assert mine == theirs, member
    finally:
        for p in reversed(processes):
            p.terminate()
        for p in processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def test_bad_grids_are_refused_naming_the_key(tmp_path):
    """Refused before anything runs or is written, naming what is wrong."""
    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING)
    out = tmp_path / "never"

    def refused(match, **kwargs):
        args = {"job": "run", "config": scene, "backend": "cpu", "out": out, **kwargs}
        with pytest.raises(wgdem.ConfigError, match=match):
            wgdem.sweep(**args)

    refused(r"`materials.grain.frictoin`: is not a key.*unknown field", grid={"materials.grain.frictoin": [0.1]})
    refused(r"`materials.sand.friction`.*no entry \"sand\"", grid={"materials.sand.friction": [0.1]})
    refused(r"`grid.materials.grain.friction`: 0.3 is not a list", grid={"materials.grain.friction": 0.3})
    refused(r"`grid.materials.grain.friction`: is empty", grid={"materials.grain.friction": []})
    refused(r"repeats a value", grid={"materials.grain.friction": [0.1, 0.1]})
    refused(r"`grid`: the key 'a..b' is not a dotted key", grid={"a..b": [1]})
    refused(r"`grid`: materials.grain.friction is also in `sets`", grid={"materials.grain.friction": [0.1]}, sets=[{"materials.grain.friction": 0.2}])
    refused(r"`repeats`: draws its own seeds", grid={"simulation.seed": [1, 2]}, repeats=2)
    refused(r"`repeats`: 0 is not a whole number", repeats=0)
    refused(r"`job`: 'triaxial' is not a job", job="triaxial")
    refused(r"`backend`: 'cuda' is not an engine", backend="cuda")
    refused(r"`sets\[1\]`: 3 is not a dict", sets=[{}, 3])
    refused(r"`grid.simulation.dt`: inf is not a finite number", grid={"simulation.dt": [float("inf")]})
    refused(r"`grid.simulation.dt`: .* is not a finite number", grid={"simulation.dt": [float("nan")]})
    case = Path(__file__).resolve().parents[2] / "assets" / "contact"
    refused(r"a contact case has no random specimen", job="contact", config=next(case.glob("*.toml")), repeats=3)
    with pytest.raises(wgdem.FileError, match="is not a file"):
        wgdem.sweep("run", tmp_path / "missing.toml", backend="cpu", out=out)
    assert not out.exists()


def test_repeats_draw_seeds_from_the_file_and_a_data_frame_gives_the_sets(tmp_path):
    """`repeats` makes members with simulation.seed = the file's seed + 0, 1, …; a DataFrame's
    rows are override sets (an empty cell leaves that key out). Only the plan: nothing runs."""
    from wgdem.sweeps import members

    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING.replace("[simulation]\n", "[simulation]\nseed = 40\n"))
    plan = members("run", scene, grid={"materials.grain.friction": [0.2, 0.3]}, repeats=3, backend="cpu")
    assert [(m["overrides"]["materials.grain.friction"], m["overrides"]["simulation.seed"]) for m in plan] == [
        (0.2, 40), (0.2, 41), (0.2, 42), (0.3, 40), (0.3, 41), (0.3, 42)
    ]
    assert len({m["member"] for m in plan}) == 6 and len({m["input_sha256"] for m in plan}) == 6
    frame = pandas.DataFrame({"materials.grain.friction": [0.2, None], "simulation.max_speed": [None, 5.0]})
    plan = members("run", scene, sets=frame, backend="cpu")
    assert [m["overrides"] for m in plan] == [{"materials.grain.friction": 0.2}, {"simulation.max_speed": 5.0}]
    # The engine is part of the input: a CPU result is not taken for a GPU member.
    gpu = members("run", scene, sets=frame, backend="gpu")
    assert [m["member"] for m in gpu] == [m["member"] for m in plan]
    assert all(a["input_sha256"] != b["input_sha256"] for a, b in zip(gpu, plan))


def test_options_reach_every_member_and_its_input_hash(tmp_path):
    """`options` passes the job's own arguments to every member: `particles=60` members write
    what ``wgdem shear --particles 60 --set …`` writes, byte for byte. The options are part of
    the input hash (a specimen by its bytes), not of the name; one a job does not take is
    refused naming it."""
    from wgdem.sweeps import members

    preset = Path(__file__).resolve().parents[2] / "assets" / "shear" / "fleischmann_quick_true.toml"
    grid = {"materials.quartz.friction": [0.3, 0.5]}
    table = wgdem.sweep("shear", preset, grid=grid, backend="cpu", out=tmp_path / "s", workers=2, progress=False, options={"particles": 60})
    assert list(table["status"]) == ["done", "done"], table["error"]
    assert list(table["n_particles"]) == [60, 60]
    for _, row in table.iterrows():
        out = tmp_path / "cli" / row["member"]
        cli = subprocess.run(
            [wgdem_binary(), "shear", preset, "--backend", "cpu", "--particles", "60", "--out", out, "--set", f"materials.quartz.friction={row['materials.quartz.friction']}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert cli.returncode == 0, cli.stderr
        mine, theirs = files(Path(row["dir"])), files(out)
        assert sorted(mine) == sorted(theirs) and "shear.csv" in mine
        for name in mine:
            assert mine[name] == theirs[name], (row["member"], name)

    specimen = tmp_path / "specimen.csv"
    specimen.write_text("x,y,z,radius\n0.01,0.01,0.003,0.0025\n")
    plain = members("shear", preset, grid=grid, backend="cpu")
    scaled = members("shear", preset, grid=grid, backend="cpu", options={"particles": 60})
    saved = members("shear", preset, grid=grid, backend="cpu", options={"specimen": specimen})
    specimen.write_text("x,y,z,radius\n0.01,0.01,0.004,0.0025\n")
    moved = members("shear", preset, grid=grid, backend="cpu", options={"specimen": specimen})
    assert [m["member"] for m in plain] == [m["member"] for m in scaled] == [m["member"] for m in moved]
    hashes = [tuple(m["input_sha256"] for m in plan) for plan in (plain, scaled, saved, moved)]
    assert len(set(hashes)) == 4
    with pytest.raises(wgdem.ConfigError, match=r"`options.specimen`: is not an argument of every run member; run takes gpu_path"):
        members("run", preset, backend="cpu", options={"specimen": specimen})
    with pytest.raises(wgdem.ConfigError, match=r"`options.particles`: 0 is not a count"):
        members("shear", preset, backend="cpu", options={"particles": 0})
    with pytest.raises(wgdem.FileError, match=r"`options.specimen`: .* is not a file"):
        members("shear", preset, backend="cpu", options={"specimen": tmp_path / "none.csv"})


def test_the_bundled_sweep_file_plans_its_members():
    """assets/sweeps/he_quick_mu.toml reads and plans its six members (nothing runs)."""
    from wgdem.__main__ import _load
    from wgdem.sweeps import members

    path = Path(__file__).resolve().parents[2] / "assets" / "sweeps" / "he_quick_mu.toml"
    spec = _load(path)
    plan = members(spec["job"], path.parent / spec["config"], grid=spec["grid"], repeats=spec["repeats"], backend=spec["backend"])
    assert [(m["overrides"]["materials.steel_ball.friction"], m["overrides"]["simulation.seed"]) for m in plan] == [
        (0.1, 2), (0.1, 3), (0.2, 2), (0.2, 3), (0.3, 2), (0.3, 3)
    ]


def test_the_command_line_names_what_is_missing(tmp_path):
    """`wgdem sweep` without the Python package says how to install it; a sweep file with an
    unknown key is refused naming it (exit 2), before anything runs."""
    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING)
    path = sweep_file(tmp_path, scene, GRID)
    missing = subprocess.run(
        [wgdem_binary(), "sweep", path],
        capture_output=True,
        text=True,
        env={**os.environ, "WGDEM_PYTHON": str(tmp_path / "no-python")},
        check=False,
    )
    assert missing.returncode == 1
    assert "cannot be started" in missing.stderr and 'pip install "./python[sweep]"' in missing.stderr
    path.write_text(path.read_text().replace('backend = "cpu"', 'backend = "cpu"\nrepeat = 2'))
    bad = subprocess.run(
        [wgdem_binary(), "sweep", path],
        capture_output=True,
        text=True,
        env={**os.environ, "WGDEM_PYTHON": sys.executable},
        check=False,
    )
    assert bad.returncode == 2 and "`repeat`: unknown key" in bad.stderr, bad.stderr
    assert not (tmp_path / "out").exists()


def test_resume_needs_the_directory_and_does_not_overwrite(tmp_path):
    with pytest.raises(wgdem.ConfigError, match="`resume`: continues the results in `out`"):
        wgdem.run(SETTLING, backend="cpu", resume=True)
    with pytest.raises(wgdem.ConfigError, match="`overwrite`: replaces the results"):
        wgdem.shear(SETTLING, backend="cpu", out=tmp_path, resume=True, overwrite=True)
