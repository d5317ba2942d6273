# Sourced by scripts/test.sh: installs the Python package (python/) into .venv-python/ with
# `pip install ./python[test,pandas,plot,sweep]` (maturin builds it) and runs its pytest suite
# (python/tests) against the release `wgdem` binary of the same tree, one pytest worker per core
# (pytest-xdist's `-n auto`: each test starts its own engines and writes only under its own
# `tmp_path`). A missing python3 or an unreachable package index fails the tests: the package
# is part of what they check.
# $1: the tier, "default" (the tests not marked `long`), "long" (those marked
# `@pytest.mark.long`: the examples run as written) or "all".
run_python_tests() {
  local marker
  case "${1:-default}" in
    default) marker="not long" ;;
    long) marker="long" ;;
    all) marker="long or not long" ;;
  esac
  local venv=.venv-python
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian's python3 needs python3-venv for `python3 -m venv`.
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
      apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$venv"
  fi
  local start=$SECONDS
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "./python[test,pandas,plot,sweep]"
  echo "python package installed in $((SECONDS - start)) s"
  cargo build --release -q -p wgdem
  WGDEM_BIN="$PWD/target/release/wgdem" "$venv/bin/python" -m pytest -q -rs -n auto -m "$marker" python/tests
}
