#!/usr/bin/env bash
# Installs lavapipe, Mesa's software Vulkan driver, for machines without a GPU (as root).
#
# On Debian 12 (bookworm) it takes Mesa 25 from bookworm-backports: its lavapipe runs the GPU
# engine about 3 times faster than bookworm's own Mesa 22.3, whose compute shaders load data
# at a per-invocation index one lane and one word at a time (README, "Performance"). Where
# backports cannot be reached, or on another distribution, it installs the distribution's
# mesa-vulkan-drivers.
# Does nothing when a lavapipe of Mesa 24 or newer is already installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

installed() {
  dpkg-query -W -f='${Status} ${Version}\n' mesa-vulkan-drivers 2>/dev/null \
    | awk '$3 == "installed" { print $4 }'
}

version="$(installed || true)"
if [ -n "$version" ] && dpkg --compare-versions "$version" ge 24; then
  echo "lavapipe: mesa-vulkan-drivers $version already installed"
  exit 0
fi

codename="$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")"
if [ "$codename" = bookworm ]; then
  added=""
  if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
    added=/etc/apt/sources.list.d/wgdem-bookworm-backports.sources
    cat > "$added" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  fi
  if apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends -t bookworm-backports \
      mesa-vulkan-drivers >/dev/null; then
    echo "lavapipe: mesa-vulkan-drivers $(installed) from bookworm-backports"
    exit 0
  fi
  echo "lavapipe: bookworm-backports unavailable; installing bookworm's Mesa" >&2
  # Take back the source this script added, so that it cannot fail the install below.
  [ -z "$added" ] || rm -f "$added"
fi
if [ -z "$version" ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null
fi
echo "lavapipe: mesa-vulkan-drivers $(installed)"
