# «RL para LLMs: de los bandidos a GRPO»: cada objetivo crea (o refresca) el
# entorno virtual .venv e instala el curso la primera vez, así que funciona
# solo en una máquina recién clonada.

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.instalado
# Los extras del banco (Stable-Baselines3): make test y make bench los instalan.
BENCH_STAMP := $(VENV)/.banco
# El kernel «python3», alembic (de nbgrader) y jupyter: los del entorno.
export PATH := $(BIN):$(PATH)
# Jupyter se niega a arrancar como root (contenedores, CI) sin este permiso.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help lab lab-docente notebooks test test-fast test-browser bench bench-quick \
	lint release grade clean

help:
	@echo "make lab       abre el curso (course/) en JupyterLab, como lo ve un estudiante"
	@echo "make lab-docente   JupyterLab en la raíz, con Formgrader y Create Assignment"
	@echo "make notebooks sincroniza cada solutions/NN_x/NN_x.ipynb con su texto NN_x.md"
	@echo "make test      ejecuta todas las pruebas (salvo las de navegador): lo que corre CI"
	@echo "make test-fast el bucle de quien mantiene (< 3 min): ruff y tests/ sin calificar"
	@echo "               cuadernos de verdad (marca grading), sin lo lento (marca slow),"
	@echo "               sin nbval, navegador ni hub"
	@echo "make test-browser   Binder simulado y JupyterLab en Chromium"
	@echo "make hub       JupyterHub local para una clase (como root; ver CONTRIBUTING.md)"
	@echo "make test-hub  el ciclo de una tarea en un JupyterHub de verdad (como root)"
	@echo "make bench     mide los presupuestos del curso y escribe BENCHMARKS.md"
	@echo "make bench-quick   el banco en miniatura (lo que ejecuta CI)"
	@echo "make gpu-check unos pasos del guion del 11 en una GPU (sin GPU, se salta)"
	@echo "make release   regenera course/ a partir de solutions/"
	@echo "make grade MODULE=01_bandidos SUBMISSIONS=entregas/   califica entregas"

# PyTorch para CPU primero (tools/install_torch.sh: en Linux, del índice de
# PyTorch para CPU y no la rueda de PyPI con CUDA; TORCH_SOURCE lo cambia).
$(STAMP): pyproject.toml tools/install_torch.sh
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Hace falta Python >= 3.11")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	bash tools/install_torch.sh $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

# Dos vistas de JupyterLab. La de estudiante (course/) apaga las herramientas de
# docente de nbgrader solo en esta ejecución, como en Binder; la de docente abre
# la raíz del repositorio con Formgrader sobre la configuración del curso.
# LAB_FLAGS añade opciones de JupyterLab (p. ej. LAB_FLAGS=--no-browser).
JUPYTER_VIEWS := $(CURDIR)/autograder/jupyter
lab: $(STAMP)
	JUPYTER_CONFIG_PATH=$(JUPYTER_VIEWS)/estudiante \
		$(BIN)/jupyter lab --ServerApp.root_dir=course $(ROOT_FLAG) $(LAB_FLAGS)

lab-docente: $(STAMP)
	mkdir -p .grading
	JUPYTER_CONFIG_PATH=$(JUPYTER_VIEWS)/docente \
		$(BIN)/jupyter lab --ServerApp.root_dir=. $(ROOT_FLAG) $(LAB_FLAGS)

# Los cuadernos de solutions/ se editan como texto (MyST Markdown): esto
# escribe los glosarios desde helpers/vocabulary.toml y las bibliografías desde
# helpers/references.toml, el «Tiempo estimado» de cada presentación
# (tools/study_time.py), y regenera el .ipynb del texto (o el texto del .ipynb
# si solo cambió este).
notebooks: $(STAMP)
	$(PY) -m tools.glossary
	$(PY) -m tools.bibliography
	$(PY) -m tools.study_time
	$(PY) -m tools.notebook_text
	$(PY) -m tools.exercise_titles

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check helpers autograder benchmarks tools hub tests

# Con Stable-Baselines3 (BENCH_STAMP): tests/test_benchmarks.py comprueba que
# los dos lados de la comparación de CartPole evalúan tras las mismas
# actualizaciones, y sin SB3 esa mitad se saltaría.
test: $(BENCH_STAMP) lint
	$(PY) -m pytest tests solutions --ignore=tests/browser \
		--nbval-lax --nbval-current-env -n 2 --dist loadfile

# El bucle de quien mantiene el curso: lo mismo que `make test` salvo lo lento.
# Salta las pruebas que califican cuadernos con `python -m autograder grade` en
# otro proceso (marca «grading»: tests/test_roundtrip.py, test_grading_*.py,
# la de Moodle de tests/test_lms.py), nbval sobre solutions/ y las de navegador
# y hub. Sin Stable-Baselines3 (.venv/.banco), la mitad de test_benchmarks.py
# se salta. Antes de dar algo por terminado, `make test`.
test-fast: lint
	$(PY) -m pytest tests --ignore=tests/browser --ignore=tests/hub \
		-m "not grading and not slow" -n 2 --dist worksteal

BROWSER_STAMP := $(VENV)/.navegador
$(BROWSER_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,browser]'
	touch $@

# Necesita Chromium del sistema (apt-get install chromium); .ci/run lo instala.
# Dos a la vez, un JupyterLab por proceso: la instalación simulada de Binder
# (unos 3 min) corre al lado de los cuadernos, que se reparten los dos núcleos.
test-browser: $(BROWSER_STAMP)
	$(PY) -m pytest tests/browser -p no:cacheprovider -n 2 --dist load

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	touch $@

# Cuadernos, CartPole junto a Stable-Baselines3, GRPO y calificación de cada
# módulo (100 entregas de cada uno), métodos del
# 08, puente del 09 y preferencias del 10, en ≤ 3 horas en 2 núcleos (cuánto
# tardó cada parte, al final de BENCHMARKS.md; una parte sola: --only). CI
# solo ejecuta bench-quick (el código, no las cifras).
bench: $(BENCH_STAMP)
	$(PY) -m benchmarks all --output BENCHMARKS.md

bench-quick: $(BENCH_STAMP)
	$(PY) -m benchmarks all --quick --output .grading/BENCHMARKS-quick.md

# El guion del módulo 11 en una GPU (docs/gpu.md): unos pasos de GRPO con un
# modelo de verdad ya descargado y un JSON con las métricas y la memoria. Sin
# GPU dice que se salta y sale con 0. MODEL y STEPS lo cambian.
.PHONY: gpu-check
gpu-check: $(STAMP)
	$(PY) -m helpers.practica.gpu_check $(if $(MODEL),--model $(MODEL)) \
		$(if $(STEPS),--steps $(STEPS))

release: notebooks
	$(PY) -m autograder release

grade: $(STAMP)
	@test -n "$(MODULE)" -a -n "$(SUBMISSIONS)" || { \
		echo "Uso: make grade MODULE=01_bandidos SUBMISSIONS=carpeta_o_zip [OUT=carpeta]"; \
		exit 2; }
	$(PY) -m autograder grade $(MODULE) $(SUBMISSIONS) $(if $(OUT),--out $(OUT))

clean:
	rm -rf .grading .pytest_cache .ruff_cache

# Un JupyterHub local para una clase (hub/, CONTRIBUTING.md). Necesita root
# (crea las cuentas), Node.js y npm. RLHUB_DIR, RLHUB_PORT, RLHUB_INSTRUCTOR,
# RLHUB_STUDENTS y RLHUB_PASSWORD lo ajustan (hub/settings.py).
.PHONY: hub hub-install test-hub
HUB_STAMP := $(VENV)/.hub
hub-install: $(HUB_STAMP)
$(HUB_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,browser,hub]'
	npm install --prefix $(VENV)/hub-proxy --no-audit --no-fund --silent \
		configurable-http-proxy@4.6.3
	touch $@

hub: $(HUB_STAMP)
	$(PY) hub/prepare.py
	$(BIN)/jupyterhub -f hub/jupyterhub_config.py

# El hub de verdad (cuentas rlhub_*, Chromium): el ciclo de una tarea por el
# intercambio de nbgrader y la interfaz. Como root; arranca y para todo.
test-hub: $(HUB_STAMP)
	RLHUB_TESTS=1 $(PY) -m pytest tests/hub -p no:cacheprovider
