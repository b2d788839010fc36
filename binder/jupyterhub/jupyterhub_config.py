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
import ipaddress
import os
import re
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (provided by JupyterHub when it loads this file)

ROOT = Path(__file__).resolve().parents[2]


def _fail(message):
    # a clear line on stderr instead of a traceback from inside JupyterHub's config loader
    print(f"jupyterhub_config.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def _shown(raw):
    """A setting as it is echoed in a message: quoted, and cut short if it is long."""
    return repr(raw if len(raw) <= 40 else raw[:40] + "…")


def _seconds(name, default, low, high):
    """An integer setting from the environment [s], checked against its allowed range."""
    raw = os.environ.get(name, "").strip() or str(default)
    # ASCII digits only: int() also takes '1_000', '٣٠٠' and '²'-like forms that nobody means as a timeout
    if not re.fullmatch(r"[0-9]{1,9}", raw):
        _fail(f"{name}={_shown(raw)} is not a whole number of seconds (allowed {low} to {high})")
    value = int(raw)
    if not low <= value <= high:
        _fail(f"{name}={value} is out of range (allowed {low} to {high} s)")
    return value


def _port(name, default=None):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"[0-9]{1,5}", raw) or not 1 <= int(raw) <= 65535:
        _fail(f"{name}={_shown(raw)} is not a TCP port (allowed 1 to 65535)")
    return int(raw)


_HOST_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _bind_host(name, default):
    """The address users connect to, as it goes into a URL: an IPv4 or IPv6 address (bracketed) or a host
    name (RFC 1123 labels). Anything else (a port, a path, '999.999.999.999') is refused here rather than
    crashing the hub or its proxy later."""
    raw = os.environ.get(name, "").strip() or default
    bare = raw[1:-1] if raw.startswith("[") and raw.endswith("]") else raw
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        address = None
    if address is not None:
        return f"[{address}]" if address.version == 6 else str(address)
    labels = raw.split(".")
    if (len(raw) <= 253 and not re.fullmatch(r"[0-9.]+", raw)
            and all(_HOST_LABEL.fullmatch(label) for label in labels)):
        return raw
    _fail(f"{name}={_shown(raw)} is not an IP address or host name "
          "(for example 127.0.0.1, 0.0.0.0, ::1 or planner.example.org; no port: set WORKBENCH_HUB_PORT)")


PASSWORD = os.environ.get("WORKBENCH_HUB_PASSWORD", "")
if len(PASSWORD) < 8 or PASSWORD.strip() != PASSWORD:
    _fail("WORKBENCH_HUB_PASSWORD must be set to the shared password: 8 characters or more, "
          "no leading or trailing spaces")
if not PASSWORD.isprintable():  # a new line or an invisible character cannot be typed at the login page
    _fail("WORKBENCH_HUB_PASSWORD holds a control or invisible character (a new line, a zero-width space, ...): "
          "use visible characters only")
IP = _bind_host("WORKBENCH_HUB_IP", "127.0.0.1")
PORT = _port("WORKBENCH_HUB_PORT", 8000)
INTERNAL_PORT = _port("WORKBENCH_HUB_INTERNAL_PORT")  # JupyterHub's default: 8081
PROXY_API_PORT = _port("WORKBENCH_HUB_PROXY_API_PORT")  # JupyterHub's default: 8001
_ports = {"WORKBENCH_HUB_PORT": PORT, "WORKBENCH_HUB_INTERNAL_PORT": INTERNAL_PORT or 8081,
          "WORKBENCH_HUB_PROXY_API_PORT": PROXY_API_PORT or 8001}
for _name, _value in _ports.items():
    _same = [other for other, value in _ports.items() if value == _value and other != _name]
    if _same:
        _fail(f"{_name}={_value} is also the port of {_same[0]} (defaults: 8000, 8081 and 8001): "
              "the hub needs three different ports")
ACTIVITY_SECONDS = _seconds("WORKBENCH_HUB_ACTIVITY_INTERVAL", 300, 1, 86_400)
CULL_TIMEOUT_SECONDS = _seconds("WORKBENCH_HUB_CULL_TIMEOUT", 3600, 1, 30 * 86_400)
CULL_EVERY_SECONDS = _seconds("WORKBENCH_HUB_CULL_EVERY", 300, 1, 86_400)
STATE = Path(os.environ.get("WORKBENCH_HUB_STATE", "").strip() or Path.cwd()).expanduser().resolve()
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
# one offline chart bundle for everyone (built by the first kernel, or by `python -m workbench.app.serve --build` with the
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
