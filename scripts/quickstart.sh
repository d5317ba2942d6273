#!/usr/bin/env bash
# Sets up and runs the quick direct shear preset (`--backend auto`: the CPU reference on a software
# adapter at this size, the GPU engine on a GPU): installs lavapipe where no Vulkan driver exists,
# builds wgdem in release mode and runs
# assets/shear/fleischmann_quick_true.toml (300 quartz spheres) into out/quickstart.
# Extra arguments go to `wgdem shear` (e.g. `--backend gpu` to force the GPU engine).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: no Rust toolchain: install one (1.89 or newer) from https://rustup.rs, then run this again" >&2
  exit 1
fi
. scripts/vulkan-driver.sh
ensure_vulkan_driver
cargo build --release -p wgdem
exec target/release/wgdem shear assets/shear/fleischmann_quick_true.toml --out out/quickstart --overwrite "$@"
