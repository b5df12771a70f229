#!/usr/bin/env bash
# Installs what kgen needs, from deps/debian-packages.txt and deps/requirements.txt.
# Idempotent and quick when everything is there: `make` runs it before every build.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=$(grep -v '^\s*#' deps/debian-packages.txt | grep -v '^\s*$')
missing=()
for package in $packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "deps: installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A virtual environment is rebuilt only when its requirements file changes. One install at a
# time per environment (a lock beside it): `make test` installs .venv-torch in the background
# while its tests may ask for it.
install_venv() {  # folder requirements
  local stamp=$1/requirements.installed lock
  exec {lock}>"$1.lock"
  flock "$lock"
  if [ ! -x "$1/bin/python" ] || ! cmp -s "$2" "$stamp"; then
    echo "deps: installing PyPI packages of $2 into $1"
    python3 -m venv "$1"
    "$1/bin/python" -m pip install -q --disable-pip-version-check -r "$2"
    cp "$2" "$stamp"
  fi
  exec {lock}>&-
}
install_venv .venv deps/requirements.txt
# kgen's own Python package (python/, docs/python.md), editable, so that .venv imports this
# checkout's front doors (pip builds it in an isolated environment: setuptools from PyPI).
if ! .venv/bin/python -c "import kgen, pathlib, sys
sys.exit(pathlib.Path(kgen.__file__).resolve().parents[1] != pathlib.Path('python').resolve())" 2>/dev/null; then
  echo "deps: installing python/ (the kgen package) into .venv, editable"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e python
fi
# `deps/install.sh libtpu` (make verify) adds libtpu's own environment.
if [ "${1:-}" = libtpu ]; then
  install_venv .venv-libtpu deps/requirements-libtpu.txt
fi
# `deps/install.sh torch` (make test) adds PyTorch's, with kgen's Python package (python/,
# editable: setuptools comes with torch, so nothing more is downloaded).
if [ "${1:-}" = torch ]; then
  install_venv .venv-torch deps/requirements-torch.txt
  [ -f .venv-torch/kgen.installed ] ||
    { .venv-torch/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e python &&
      touch .venv-torch/kgen.installed; }
fi
