#!/usr/bin/env bash
# Sourced by quickstart.sh and test.sh: makes sure a Vulkan driver is installed on Linux.
# Where no Vulkan ICD is registered (a machine without a GPU driver), installs lavapipe, Mesa's
# software Vulkan driver, with install-lavapipe.sh (as root, or through sudo). Elsewhere
# (macOS: Metal; Windows: DX12/Vulkan) it does nothing.
ensure_vulkan_driver() {
  [ "$(uname -s)" = Linux ] || return 0
  if [ -n "${WGDEM_SKIP_GPU_TESTS:-}" ]; then return 0; fi
  local icd
  for icd in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json /usr/local/share/vulkan/icd.d/*.json; do
    if [ -e "$icd" ]; then return 0; fi
  done
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  echo "No Vulkan driver found: installing lavapipe (software Vulkan) with scripts/install-lavapipe.sh"
  if [ "$(id -u)" = 0 ]; then
    bash "$here/install-lavapipe.sh"
  elif command -v sudo >/dev/null 2>&1; then
    sudo bash "$here/install-lavapipe.sh"
  else
    echo "error: no Vulkan driver, and not root: run 'bash scripts/install-lavapipe.sh' as root," >&2
    echo "       or install your GPU's Vulkan driver (or set WGDEM_SKIP_GPU_TESTS=1 for the CPU tests only)" >&2
    return 1
  fi
}

# Mesa warns on stderr when XDG_RUNTIME_DIR is unset; give it a private directory.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/wgdem-xdg-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi
