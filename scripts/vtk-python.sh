# Sourced by scripts/test.sh: a Python with VTK's own readers (the `vtk` package, which
# ParaView's XML readers come from), meshio and pyvista in .venv-test/, so that the tests can
# open wgdem's ParaView files with each. Sets WGDEM_VTK_PYTHON; where no Python or no package index is reachable it
# says so and leaves it unset (the tests then read the files with vtkio only).
ensure_vtk_python() {
  local venv=.venv-test
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import vtk, meshio, pyvista" 2>/dev/null; then
    export WGDEM_VTK_PYTHON="$PWD/$venv/bin/python"
    return
  fi
  if ! command -v python3 >/dev/null; then
    echo "warning: no python3; the VTK files are checked with vtkio only" >&2
    return
  fi
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian's python3 needs python3-venv for `python3 -m venv`.
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      apt-get install -y -qq python3-venv >/dev/null 2>&1 || true
    fi
    python3 -m venv "$venv" >/dev/null 2>&1 || {
      echo "warning: python3 -m venv failed; the VTK files are checked with vtkio only" >&2
      return
    }
  fi
  if "$venv/bin/pip" install -q vtk meshio pyvista; then
    export WGDEM_VTK_PYTHON="$PWD/$venv/bin/python"
  else
    echo "warning: pip could not install vtk, meshio and pyvista; the VTK files are checked with vtkio only" >&2
  fi
}
