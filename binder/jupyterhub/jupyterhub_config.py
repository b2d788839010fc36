"""JupyterHub serving the planner to a team from one machine: a tested recipe (tests/test_hub.py).

Each user logs in, gets a Jupyter server of their own (a local process) and lands on the planner, served by
Voilà as a server extension at /user/NAME/voila/render/notebooks/planner.ipynb (a planning link's query string
works there as on the standalone app). Idle servers are stopped by jupyterhub-idle-culler.

    pip install jupyterhub jupyterhub-idle-culler <this package>
    npm ci --prefix binder/jupyterhub          # the hub's proxy, configurable-http-proxy
    WORKBENCH_HUB_PASSWORD=... jupyterhub -f binder/jupyterhub/jupyterhub_config.py

Settings come from the environment, so that the test and a real deployment read the same file:
WORKBENCH_HUB_PASSWORD (required, 8 characters or more: everyone's shared password; use your identity provider's
authenticator instead for anything beyond a trusted team), WORKBENCH_HUB_IP / _PORT (where users connect,
default 127.0.0.1:8000), WORKBENCH_HUB_CULL_TIMEOUT / _CULL_EVERY [s] (idle time before a server is stopped,
default 3600, checked every 300), WORKBENCH_HUB_ACTIVITY_INTERVAL [s] (how often activity reaches the hub,
default 300), WORKBENCH_HUB_STATE (folder for the hub's database, cookie secret, user homes and the shared
chart bundle cache, unless WORKBENCH_CACHE is set).

The spawner is SimpleLocalProcessSpawner: every user's server runs as the hub's own system user. That is fine
for a trusted team on one machine, not for isolation; for larger teams see the Zero to JupyterHub values in
binder/jupyterhub/z2jh-values.yaml.
"""
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (provided by JupyterHub when it loads this file)

ROOT = Path(__file__).resolve().parents[2]


def _fail(message):
    # a clear line on stderr instead of a traceback from inside JupyterHub's config loader
    print(f"jupyterhub_config.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def _seconds(name, default, low, high):
    """An integer setting from the environment [s], checked against its allowed range."""
    raw = os.environ.get(name, "").strip() or str(default)
    try:
        value = int(raw)
    except ValueError:
        _fail(f"{name}={raw!r} is not a whole number of seconds (allowed {low} to {high})")
    if not low <= value <= high:
        _fail(f"{name}={value} is out of range (allowed {low} to {high} s)")
    return value


def _port(name, default=None):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        _fail(f"{name}={raw!r} is not a TCP port (allowed 1 to 65535)")
    return int(raw)


PASSWORD = os.environ.get("WORKBENCH_HUB_PASSWORD", "")
if len(PASSWORD) < 8 or PASSWORD.strip() != PASSWORD:
    _fail("WORKBENCH_HUB_PASSWORD must be set to the shared password: 8 characters or more, "
          "no leading or trailing spaces")
IP = os.environ.get("WORKBENCH_HUB_IP", "").strip() or "127.0.0.1"
if any(ch.isspace() or ch in "/?#@" for ch in IP):
    _fail(f"WORKBENCH_HUB_IP={IP!r} is not an address or host name (for example 127.0.0.1 or 0.0.0.0)")
PORT = _port("WORKBENCH_HUB_PORT", 8000)
INTERNAL_PORT = _port("WORKBENCH_HUB_INTERNAL_PORT")  # JupyterHub's default: 8081
PROXY_API_PORT = _port("WORKBENCH_HUB_PROXY_API_PORT")  # JupyterHub's default: 8001
ACTIVITY_SECONDS = _seconds("WORKBENCH_HUB_ACTIVITY_INTERVAL", 300, 1, 86_400)
CULL_TIMEOUT_SECONDS = _seconds("WORKBENCH_HUB_CULL_TIMEOUT", 3600, 1, 30 * 86_400)
CULL_EVERY_SECONDS = _seconds("WORKBENCH_HUB_CULL_EVERY", 300, 1, 86_400)
STATE = Path(os.environ.get("WORKBENCH_HUB_STATE", "").strip() or Path.cwd()).resolve()
try:
    STATE.mkdir(parents=True, exist_ok=True)  # a fresh machine has no state folder yet
except OSError as error:
    _fail(f"WORKBENCH_HUB_STATE={str(STATE)!r} cannot be created: {error.strerror}")

c.JupyterHub.bind_url = f"http://{IP}:{PORT}"
c.JupyterHub.hub_ip = "127.0.0.1"
if INTERNAL_PORT:
    c.JupyterHub.hub_port = INTERNAL_PORT
if PROXY_API_PORT:
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PROXY_API_PORT}"
proxy = ROOT / "binder" / "jupyterhub" / "node_modules" / ".bin" / "configurable-http-proxy"
if proxy.exists():
    c.ConfigurableHTTPProxy.command = [str(proxy)]
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.last_activity_interval = ACTIVITY_SECONDS

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = PASSWORD
c.Authenticator.allow_all = True

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.cmd = [str(Path(sys.executable).with_name("jupyterhub-singleuser"))]
c.Spawner.notebook_dir = str(ROOT)
c.Spawner.default_url = "/voila/render/notebooks/planner.ipynb"
if os.geteuid() == 0:  # a container or CI machine running everything as root: Jupyter refuses to start without it
    c.Spawner.args = ["--allow-root"]
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    # the same Jupyter settings as on Binder: no tracebacks, kernels culled, 600 s for widget output
    "JUPYTER_CONFIG_PATH": str(ROOT / "binder"),
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(ACTIVITY_SECONDS),
}
# one offline chart bundle for everyone (built by the first kernel, or by `python -m workbench.offline` with the
# same WORKBENCH_CACHE), not one per user's home
c.Spawner.environment["WORKBENCH_CACHE"] = os.environ.get("WORKBENCH_CACHE", str(STATE / "cache"))

c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                f"--timeout={CULL_TIMEOUT_SECONDS}", f"--cull-every={CULL_EVERY_SECONDS}"],
}]
