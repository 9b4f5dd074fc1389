# Configuración de JupyterHub para una clase del curso (`make hub`).
#
# Un hub local: cuentas Unix del sistema (PAM), un servidor de JupyterLab por
# usuario lanzado como ese usuario (LocalProcessSpawner) y el intercambio de
# nbgrader en una carpeta del hub. Los ajustes salen de hub/settings.py (y de
# las variables RLHUB_*); hub/README.md y CONTRIBUTING.md explican cada uno.
#   jupyterhub -f hub/jupyterhub_config.py
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hub import settings  # noqa: E402

c = get_config()  # noqa: F821  (lo inyecta JupyterHub al cargar el archivo)

STATE = settings.state_dir() / "hub"
INSTRUCTOR = settings.instructor()
STUDENTS = settings.students()

# Dónde escucha: el proxy en RLHUB_IP:RLHUB_PORT; el hub y la API del proxy,
# solo en 127.0.0.1.
c.JupyterHub.bind_url = f"http://{settings.ip()}:{settings.port()}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{settings.hub_port()}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.proxy_api_port()}"
c.ConfigurableHTTPProxy.command = [str(settings.PROXY)]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
# El estado del hub (usuarios, tokens, secreto de cookies), solo para root.
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
# Al parar el hub se paran los servidores de los usuarios y el proxy.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# Quién entra: cuentas Unix locales con su contraseña (PAM). `make hub` las crea
# (hub/prepare.py). Solo la docente y las estudiantes de la lista.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = {INSTRUCTOR, *STUDENTS}

# Un JupyterLab por usuario, como ese usuario, en su $HOME y con el Python del
# curso (.venv: helpers y autograder ya instalados para todas las cuentas).
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(settings.VENV_BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# En una máquina ocupada el primer arranque de JupyterLab tarda.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
# Los mismos límites que el sandbox de calificación (3 GB por kernel). El
# LocalProcessSpawner no los aplica (solo los anuncia como MEM_LIMIT y
# CPU_LIMIT); en Kubernetes (hub/z2jh-values.yaml) sí se cumplen.
c.Spawner.mem_limit = "3G"
c.Spawner.cpu_limit = 1.0


def _view(spawner) -> str:
    """La vista de JupyterLab de cada cuenta: docente o estudiante."""
    role = "docente" if spawner.user.name == INSTRUCTOR else "estudiante"
    return str(settings.VIEWS / role)


c.Spawner.environment = {
    # La vista: qué extensiones de nbgrader ve cada uno y su nbgrader_config.
    "JUPYTER_CONFIG_PATH": _view,
    "RLHUB_EXCHANGE": str(settings.exchange_dir()),
    "PATH": f"{settings.VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
}

# Automatización (las pruebas, un script de la clase): un servicio con un
# token que puede crear tokens y arrancar y usar los servidores de los
# usuarios. Solo existe si se da RLHUB_SERVICE_TOKEN.
TOKEN = settings.service_token()
if TOKEN:
    c.JupyterHub.services = [{"name": "automatizacion", "api_token": TOKEN}]
    c.JupyterHub.load_roles = [
        {
            "name": "automatizacion",
            "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
            "services": ["automatizacion"],
        }
    ]
