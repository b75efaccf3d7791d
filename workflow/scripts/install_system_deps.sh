#!/usr/bin/env bash
# Installs the Debian packages the pipeline and its tests need, only when missing:
#   gnugo            - GNU Go 3.8, the outside referee and opponent (/usr/games/gnugo)
#   slurm-wlm munge  - a real single-node Slurm for the Slurm-profile tests
#   clang-format     - the C++ style check of `make lint` (.clang-format)
set -euo pipefail
need=()
command -v gnugo >/dev/null 2>&1 || [ -x /usr/games/gnugo ] || need+=(gnugo)
command -v slurmctld >/dev/null 2>&1 || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || need+=(munge)
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "installing Debian packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
