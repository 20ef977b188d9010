#!/usr/bin/env bash
# The client's suite in fresh virtualenvs, against a real server (this checkout's .venv, `make setup`): once
# with the lowest runtimes client/pyproject.toml allows (each `name>=X` installed as `name==X`), once with the
# newest the index serves. COMPAT_PINS=lowest or newest runs one of them.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
server="$PWD/.venv/bin/diagnosis"
test -x "$server" || { echo "client-compat: no server in .venv (run make setup)"; exit 2; }
root=var/client-compat
pip_install() { "$1/bin/python" -m pip install -q --disable-pip-version-check "${@:2}"; }

# Python 3.10 is the lowest the client allows: its code is checked against that grammar and typing here (no
# 3.10 interpreter needs to be installed for it).
.venv/bin/ruff check --target-version py310 --select F --quiet client/diagnosis client/compat
.venv/bin/mypy --python-version 3.10 --no-error-summary client/diagnosis

lowest=$("$python" - <<'PY'
import re, tomllib
dependencies = tomllib.load(open("client/pyproject.toml", "rb"))["project"]["dependencies"]
print(" ".join(re.sub(r">=([^,]+).*", r"==\1", d.replace(" ", "")) for d in dependencies))
PY
)
for pins in ${COMPAT_PINS:-lowest newest}; do
  venv="$root/$pins"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  if [ "$pins" = lowest ]; then
    # shellcheck disable=SC2086  # one word a pin
    pip_install "$venv" ./client $lowest pytest
  else
    pip_install "$venv" --upgrade ./client pytest
  fi
  versions=$("$venv/bin/python" -c 'from importlib.metadata import version as v; print("protobuf", v("protobuf"), "grpcio", v("grpcio"))')
  echo "client-compat ($pins): $versions"
  (cd client/compat && DIAGNOSIS_COMPAT_SERVER="$server" "../../$venv/bin/python" -m pytest -c pytest.ini)
done
