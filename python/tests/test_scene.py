"""Scenes from files and text, and the errors bad input raises."""

import subprocess

import pytest

import wgdem
from conftest import ASSETS, lattice_scene, wgdem_binary


def test_a_scene_loads_from_a_path_a_pathlib_path_or_text():
    path = ASSETS / "scenes" / "potyondy_27_balls.toml"
    a = wgdem.Scene.from_toml(str(path))
    b = wgdem.Scene.from_toml(path)
    c = wgdem.Scene.from_toml(path.read_text())
    assert a.n_particles == b.n_particles == c.n_particles == 27
    assert a.dt == b.dt == c.dt > 0
    assert a.walls == ["bottom", "top", "xmin", "xmax", "ymin", "ymax"]
    assert a.materials == ["granite", "facet"]
    assert a.source == str(path)
    assert c.source == "<scene text>"
    # The scene as run, every default written out, loads to the same scene.
    again = wgdem.Scene.from_toml(a.to_toml())
    assert again.dt == a.dt and again.n_particles == 27


def test_an_invalid_value_is_a_config_error_naming_field_and_line():
    text = lattice_scene().replace("young_modulus = 5e7", "young_modulus = -5e7")
    with pytest.raises(wgdem.ConfigError) as e:
        wgdem.Scene.from_toml(text)
    message = str(e.value)
    assert "materials[0].young_modulus" in message, message
    assert "line" in message, message
    # A ConfigError is a ValueError and a WgdemError.
    assert isinstance(e.value, ValueError) and isinstance(e.value, wgdem.WgdemError)


def test_a_missing_file_is_a_file_error():
    with pytest.raises(wgdem.FileError) as e:
        wgdem.Scene.from_toml("no/such/scene.toml")
    assert "no/such/scene.toml" in str(e.value)
    assert isinstance(e.value, OSError) and isinstance(e.value, RuntimeError)


def test_an_unknown_backend_is_refused():
    scene = wgdem.Scene.from_toml(lattice_scene())
    with pytest.raises(wgdem.ConfigError, match="`backend`: \"cuda\" is not an engine"):
        wgdem.Simulation(scene, backend="cuda")


def test_the_message_is_the_one_the_command_line_prints(tmp_path):
    text = lattice_scene().replace("friction = 0.3", "friction = -0.3")
    scene = tmp_path / "bad.toml"
    scene.write_text(text)
    with pytest.raises(wgdem.ConfigError) as e:
        wgdem.Scene.from_toml(scene)
    cli = subprocess.run(
        [wgdem_binary(), "check", scene], capture_output=True, text=True, check=False
    )
    assert cli.returncode == 1
    assert cli.stderr.strip() == f"error: {e.value}"


def test_overrides_change_the_file_by_dotted_key(tmp_path):
    """Scene.from_toml(overrides=…) and the jobs' overrides set values by dotted key (array
    entries by name or index), checked as the file is and recorded in input.toml."""
    text = lattice_scene()
    scene = wgdem.Scene.from_toml(text, overrides={"materials.grain.friction": 0.1, "particles.0.counts": [2, 2, 2]})
    assert scene.n_particles == 8
    sim = wgdem.Simulation(scene, backend="cpu")
    assert sim.friction("grain", "grain") == 0.1
    assert "friction = 0.1" in scene.to_toml()
    summary, _ = wgdem.run(
        text.replace("duration = 0.1", "duration = 0.01"),
        backend="cpu",
        out=tmp_path / "run",
        progress=False,
        overrides={"simulation.seed": 7, "walls.lid.material": "grain"},
    )
    assert summary["seed"] == 7
    assert "seed = 7" in (tmp_path / "run" / "input.toml").read_text()
    with pytest.raises(wgdem.ConfigError, match='`materials.sand.friction`: `materials` has no entry "sand"; its entries are "grain"'):
        wgdem.Scene.from_toml(text, overrides={"materials.sand.friction": 0.1})
    with pytest.raises(wgdem.ConfigError, match="frition"):
        wgdem.Scene.from_toml(text, overrides={"materials.grain.frition": 0.1})
    with pytest.raises(wgdem.ConfigError, match="`overrides`"):
        wgdem.Scene.from_toml(text, overrides={"simulation.seed": object()})
    with pytest.raises(wgdem.ConfigError, match="a Scene is built already"):
        wgdem.run(scene, overrides={"simulation.seed": 7})
