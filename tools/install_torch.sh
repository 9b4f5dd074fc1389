#!/usr/bin/env bash
# Instala PyTorch para CPU en el entorno del Python que se le da ($1).
#
# En Linux x86_64, la rueda de PyPI trae las bibliotecas de CUDA (varios GB) que
# un curso para CPU no usa: por defecto torch sale del índice de PyTorch para
# CPU (unos 190 MB de descarga). Antes se sondea ese índice con un límite de
# pocos segundos; si no responde, se instala de donde pip tenga configurado y se
# avisa. TORCH_SOURCE manda sobre todo eso: con valor, son las opciones de pip
# que dicen de dónde sacar torch; vacía, pip usa su configuración sin sondear.
# La versión es la que fija pyproject.toml. Lo usan el Makefile y binder/postBuild.
set -euo pipefail
python=$1
cd "$(dirname "$0")/.."

version=$("$python" - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
print(next(d.split("==")[1] for d in deps if d.startswith("torch==")))
PY
)
# Ya instalado en esa versión: nada que hacer.
if "$python" -c "import importlib.metadata as m, sys
sys.exit(m.version('torch').split('+')[0] != '$version')" 2>/dev/null; then
    exit 0
fi

cpu_index=https://download.pytorch.org/whl/cpu
if [ -n "${TORCH_SOURCE+definida}" ]; then
    source=$TORCH_SOURCE
    spec="torch==$version"
elif [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    # macOS, Windows, Linux ARM: la rueda de PyPI ya es solo para CPU.
    source=""
    spec="torch==$version"
elif timeout 10 "$python" -c "import urllib.request
urllib.request.urlopen('$cpu_index/torch/', timeout=5)" >/dev/null 2>&1; then
    source="--extra-index-url $cpu_index"
    spec="torch==$version+cpu"
else
    echo "Aviso: no se alcanza el índice de PyTorch para CPU ($cpu_index)." >&2
    echo "  Instalo torch==$version de donde pip tenga configurado; en Linux, la" >&2
    echo "  rueda de PyPI trae CUDA (varios GB). Para elegir otra fuente:" >&2
    echo "  TORCH_SOURCE='--find-links carpeta/' make ..." >&2
    source=""
    spec="torch==$version"
fi
echo "Instalando $spec${source:+ ($source)}"
# shellcheck disable=SC2086  # $source son varias opciones de pip
"$python" -m pip install --quiet $source "$spec"
