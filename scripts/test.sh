#!/usr/bin/env bash
# Runs wgdem's tests on this machine: installs lavapipe where no Vulkan driver exists, then
#   bash scripts/test.sh          the default tier: `cargo test --workspace --release`
#   bash scripts/test.sh --long   the long tier only: the tests marked `#[ignore = "long tier: …"]`
#                                 (100 000-step holds, full shear presets, kill and resume)
#   bash scripts/test.sh --all    both tiers, one after the other (what CI runs)
# The default tier also checks wgdem-core's module floors (scripts/module-floors.py), installs
# the Python package into .venv-python/ and runs its pytest suite (scripts/python-tests.sh). WGDEM_SKIP_GPU_TESTS=1 skips the GPU tests (and the driver
# install). A Python venv with VTK (.venv-test/) lets the tests open the ParaView files with
# VTK's own readers.
set -euo pipefail
cd "$(dirname "$0")/.."
tier="${1:-default}"
case "$tier" in
  default | --long | --all) ;;
  *) echo "usage: bash scripts/test.sh [--long | --all]" >&2; exit 2 ;;
esac
. scripts/vulkan-driver.sh
ensure_vulkan_driver
. scripts/vtk-python.sh
ensure_vtk_python
. scripts/python-tests.sh
if [ "$tier" != --long ]; then
  # wgdem-core's modules on their floors, without import loops (docs/architecture.md).
  python3 scripts/module-floors.py
  cargo test --workspace --release
  run_python_tests
fi
if [ "$tier" != default ]; then
  cargo test --workspace --release -- --ignored
fi
