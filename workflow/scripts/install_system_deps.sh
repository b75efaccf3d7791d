#!/usr/bin/env bash
# Installs the Debian packages one purpose needs, only when missing:
#   install_system_deps.sh PURPOSE...      PURPOSE: run | test | cluster | lint
#   run      gnugo            GNU Go 3.8: the opponent and ladder rungs of the evaluation (/usr/games/gnugo)
#   test     gnugo chromium   the same, for the tests that play it; Chromium renders the run's HTML report
#                             headless (tests/e2e/test_workflow.py draws its graph of rules)
#   cluster  slurm-wlm munge  a private Slurm for the Slurm-profile tests (tests/cluster)
#   lint     clang-format     the C++ style check of `make lint` (.clang-format)
# As root it installs with apt-get, else with `sudo -n` (never a password prompt). Where neither works (no
# root, no sudo or sudo refuses, apt-get fails) it names what is missing with the command that installs it,
# and exits 0: the run and the tests go on where they can (see README.md, "Set-up without root").
# MINIGO_DEPS_PATH, when set, is the only PATH searched for the commands (the tests' way to make some missing).
set -uo pipefail
# slurmctld and munged live in /usr/sbin, GNU Go in /usr/games: an ordinary user's PATH often lacks them
PATH="${MINIGO_DEPS_PATH:-$PATH:/usr/sbin:/sbin:/usr/games}"

have() { command -v "$1" >/dev/null 2>&1; }

need=()
add() { # add PACKAGE unless already listed
  local p
  for p in "${need[@]}"; do [ "$p" = "$1" ] && return 0; done
  need+=("$1")
}

if [ $# -eq 0 ]; then
  echo "usage: $0 run|test|cluster|lint ..." >&2
  exit 2
fi
for purpose in "$@"; do
  case "$purpose" in
    run) have gnugo || add gnugo ;;
    test)
      have gnugo || add gnugo
      have chromium || add chromium
      ;;
    cluster)
      have slurmctld || add slurm-wlm
      have munged || add munge
      ;;
    lint) have clang-format || add clang-format ;;
    *)
      echo "$0: unknown purpose '$purpose' (run, test, cluster or lint)" >&2
      exit 2
      ;;
  esac
done
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

SUDO=none
if [ "$EUID" -eq 0 ]; then
  SUDO=
elif have sudo && sudo -n true >/dev/null 2>&1; then
  SUDO="sudo -n"
fi
if [ "$SUDO" != none ]; then
  echo "installing Debian packages for '$*': ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
  if $SUDO apt-get update -qq; then
    if apt_install "${need[@]}"; then
      exit 0
    fi
    # one at a time: a package the release lacks (Ubuntu has no chromium deb) leaves the others installed
    left=()
    for p in "${need[@]}"; do
      apt_install "$p" || left+=("$p")
    done
    if [ ${#left[@]} -eq 0 ]; then
      exit 0
    fi
    need=("${left[@]}")
  fi
  echo "install_system_deps: apt-get could not install ${need[*]} (see its output above)"
  if [ -n "${CI:-}" ]; then
    exit 1 # CI runs every test: a package it cannot install is a failure there
  fi
  why_not="apt-get failed"
else
  why_not="not root, and sudo is missing or asks for a password"
fi
echo "install_system_deps: not installed ($why_not): ${need[*]}"
for p in "${need[@]}"; do
  case "$p" in
    gnugo) why="evaluations and ladder rungs against GNU Go are skipped; its tests skip" ;;
    chromium) why="the test that renders the run's HTML report skips" ;;
    slurm-wlm | munge) why="the Slurm tests, tests/cluster, are skipped, not run" ;;
    clang-format) why="make lint skips the C++ style check" ;;
    *) why="" ;;
  esac
  echo "  missing $p ($why): sudo apt-get install -y $p"
done
if [ ${#need[@]} -gt 1 ]; then
  echo "  all at once: sudo apt-get install -y ${need[*]}"
fi
exit 0
