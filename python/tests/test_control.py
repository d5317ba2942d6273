"""The GIL is released while the engine steps, and Ctrl-C stops a long step cleanly."""

import signal
import subprocess
import sys
import textwrap
import threading
import time

import wgdem
from conftest import ASSETS


def ticks_while(call):
    """Runs ``call()`` while another thread counts milliseconds: (its result, the ticks
    counted, the seconds it took)."""
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    start = time.perf_counter()
    result = call()
    took = time.perf_counter() - start
    stop.set()
    counter.join()
    return result, ticks, took


def test_other_threads_run_while_the_engine_steps():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(ASSETS / "scenes" / "pour.toml"), backend="cpu")
    _, ticks, stepping = ticks_while(lambda: sim.step(400))
    # Holding the GIL would leave the counter at a handful of ticks (a switch every 5 ms at
    # best, and none inside the native call); released, it ticks about every millisecond.
    assert ticks > 0.3 * stepping / 0.001, (ticks, stepping)


def test_other_threads_run_while_a_shear_test_runs():
    """The jobs release the GIL too: wgdem.shear steps its rows without it (scale_check.toml,
    11 200 steps of 300 spheres on the CPU reference, a few seconds), and a thread counting
    milliseconds meanwhile counts most of them, as for ``step`` above."""
    preset = ASSETS / "shear" / "scale_check.toml"
    (summary, _), ticks, running = ticks_while(
        lambda: wgdem.shear(preset, backend="cpu", progress=False)
    )
    assert summary["steps"] > 2000
    assert ticks > 0.3 * running / 0.001, (ticks, running)


# The child installs Python's own Ctrl-C handler, as an interactive session has it: a process
# started in the background by a non-interactive shell (some CI runners) inherits SIGINT
# ignored, and Python then leaves it ignored, so the signal would never arrive.
SCRIPT = textwrap.dedent(
    """
    import signal, sys, wgdem
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sim = wgdem.Simulation(wgdem.Scene.from_toml(sys.argv[1]), backend="cpu")
    print("ready", flush=True)
    try:
        sim.step(10**9)
    except KeyboardInterrupt:
        reached = sim.steps
        sim.step(10)
        assert sim.steps == reached + 10
        print("interrupted at", reached, "and usable", flush=True)
    """
)


def test_ctrl_c_stops_a_step_with_keyboard_interrupt_leaving_the_simulation_usable():
    scene = ASSETS / "scenes" / "pour.toml"
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(scene)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    sent = time.perf_counter()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    waited = time.perf_counter() - sent
    assert child.returncode == 0, err
    assert "usable" in out, out
    reached = int(out.split()[2])
    assert 0 < reached < 10**9
    # A call into the engine takes well under a second (5e6 particle-steps at most).
    assert waited < 10.0, waited
