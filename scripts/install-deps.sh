#!/usr/bin/env bash
# Installs what versus and its tests need on Debian/Ubuntu, when it is missing: the distribution's
# MariaDB (used only as a sandboxed server build, never as a system service), sysbench (the peer the
# tests compare against), patchelf (for server builds that bring their own C library), perf (profiles)
# and the Rust toolchain check; with --tests also what the fleet and shared-store tests start for themselves:
# PostgreSQL (a throwaway cluster per test), Slurm and munge (a single-node localhost cluster). No
# service of these packages is started. Safe to run again.
set -euo pipefail

need=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v patchelf >/dev/null 2>&1 || need+=(patchelf)
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
# perf samples the server's stacks for profiled experiments (`profile = true`, docs/profile.md):
# Debian packages it as linux-perf, Ubuntu as linux-tools-common.
if ! command -v perf >/dev/null 2>&1 && command -v apt-cache >/dev/null 2>&1; then
  if apt-cache show linux-perf >/dev/null 2>&1; then need+=(linux-perf); else need+=(linux-tools-common); fi
fi
# Headless Chromium renders the HTML reports in the tests (--tests; VERSUS_NO_CHROMIUM=1 skips it).
if [ "${1:-}" = "--tests" ] && [ -z "${VERSUS_NO_CHROMIUM:-}" ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
if [ "${1:-}" = "--tests" ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  command -v munged >/dev/null 2>&1 || need+=(munge)
  command -v slurmctld >/dev/null 2>&1 || need+=(slurmctld)
  command -v slurmd >/dev/null 2>&1 || need+=(slurmd)
  command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
fi
command -v apt-get >/dev/null 2>&1 || { echo "install-deps: this script needs apt-get (Debian/Ubuntu)" >&2; exit 1; }

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${need[*]}" >&2
  # Keep the packages' own services (MariaDB, PostgreSQL, munge, Slurm) from starting: versus and its
  # tests start their own, with their own configuration, and stop them.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  [ -z "$added_policy" ] || $sudo rm -f /usr/sbin/policy-rc.d
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: cargo is missing; install Rust (rustup, or apt-get install cargo) and run again" >&2
  exit 1
fi
