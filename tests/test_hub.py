"""Many users on a real JupyterHub: binder/jupyterhub/jupyterhub_config.py, loopback only.

The hub (PyPI jupyterhub) with its proxy (npm configurable-http-proxy, `npm ci --prefix binder/jupyterhub`), a
shared-password authenticator and a local-process spawner; several users log in through the browser, each
gets a server of their own and the planner at /user/NAME/voila/render/notebooks/planner.ipynb, and
jupyterhub-idle-culler stops the servers of users who left while keeping the one still working.
"""
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, free_port
from test_load import kernel_pids, rss_mb

CONFIG = ROOT / "binder" / "jupyterhub" / "jupyterhub_config.py"
PROXY = ROOT / "binder" / "jupyterhub" / "node_modules" / ".bin" / "configurable-http-proxy"
JUPYTERHUB = Path(sys.executable).with_name("jupyterhub")
PASSWORD = "planning-password"
USERS = ("alice", "bob", "chen")
CULL_TIMEOUT_SECONDS = 30
TIMEOUT = 180_000


def _requirements():
    missing = [str(p) for p in (JUPYTERHUB, PROXY) if not p.exists()]
    if missing and os.environ.get("CI") == "true":
        pytest.fail(f"missing {missing}: `make install` installs jupyterhub (test extra) and the proxy (npm)")
    if missing:
        pytest.skip(f"missing {missing}: install the test extra and run `npm ci --prefix binder/jupyterhub`")


def user_servers():
    """{user name: pid} of the single-user servers running on this machine."""
    servers = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"jupyterhub-singleuser" not in (proc / "cmdline").read_bytes():
                continue
            env = dict(item.split(b"=", 1) for item in (proc / "environ").read_bytes().split(b"\0") if b"=" in item)
        except OSError:
            continue
        if b"JUPYTERHUB_USER" in env:
            servers[env[b"JUPYTERHUB_USER"].decode()] = int(proc.name)
    return servers


def load_config(monkeypatch, tmp_path, settings):
    """Run the hub's config file as JupyterHub does (its `get_config` provided) under these settings."""
    from traitlets.config import Config
    for key in [key for key in os.environ if key.startswith("WORKBENCH_HUB_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("WORKBENCH_HUB_STATE", str(tmp_path / "state"))
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    config = Config()
    exec(compile(CONFIG.read_text(), str(CONFIG), "exec"), {"get_config": lambda: config, "__file__": str(CONFIG)})
    return config


@pytest.mark.parametrize("settings, message", [
    ({"WORKBENCH_HUB_PASSWORD": "short"}, "WORKBENCH_HUB_PASSWORD must be set to the shared password: 8 characters"),
    ({"WORKBENCH_HUB_PASSWORD": " padded-password "}, "no leading or trailing spaces"),
    ({"WORKBENCH_HUB_CULL_TIMEOUT": "abc"}, "WORKBENCH_HUB_CULL_TIMEOUT='abc' is not a whole number of seconds"),
    ({"WORKBENCH_HUB_ACTIVITY_INTERVAL": "5s"}, "WORKBENCH_HUB_ACTIVITY_INTERVAL='5s' is not a whole number"),
    ({"WORKBENCH_HUB_CULL_EVERY": "0"}, "WORKBENCH_HUB_CULL_EVERY=0 is out of range (allowed 1 to 86400 s)"),
    ({"WORKBENCH_HUB_PORT": "99999"}, "WORKBENCH_HUB_PORT='99999' is not a TCP port (allowed 1 to 65535)"),
    ({"WORKBENCH_HUB_PROXY_API_PORT": "-1"}, "WORKBENCH_HUB_PROXY_API_PORT='-1' is not a TCP port"),
    ({"WORKBENCH_HUB_IP": "0.0.0.0/8"}, "WORKBENCH_HUB_IP='0.0.0.0/8' is not an IP address or host name"),
    ({"WORKBENCH_HUB_PORT": "²"}, "WORKBENCH_HUB_PORT='²' is not a TCP port"),
    ({"WORKBENCH_HUB_INTERNAL_PORT": "٨٠٨٢"}, "WORKBENCH_HUB_INTERNAL_PORT='٨٠٨٢' is not a TCP port"),
    ({"WORKBENCH_HUB_PORT": "9" * 5000}, "WORKBENCH_HUB_PORT='" + "9" * 40 + "…' is not a TCP port"),
    ({"WORKBENCH_HUB_CULL_TIMEOUT": "1_000"}, "WORKBENCH_HUB_CULL_TIMEOUT='1_000' is not a whole number"),
    ({"WORKBENCH_HUB_IP": "host:9000"}, "WORKBENCH_HUB_IP='host:9000' is not an IP address or host name"),
    ({"WORKBENCH_HUB_IP": "999.999.999.999"}, "WORKBENCH_HUB_IP='999.999.999.999' is not an IP address"),
    ({"WORKBENCH_HUB_IP": "[::1"}, "WORKBENCH_HUB_IP='[::1' is not an IP address"),
    ({"WORKBENCH_HUB_IP": "%41"}, "WORKBENCH_HUB_IP='%41' is not an IP address"),
    ({"WORKBENCH_HUB_IP": "-"}, "WORKBENCH_HUB_IP='-' is not an IP address"),
    ({"WORKBENCH_HUB_PASSWORD": "planning\npassword"}, "holds a control or invisible character"),
    ({"WORKBENCH_HUB_PASSWORD": "planning\u200bpassword"}, "holds a control or invisible character"),
    ({"WORKBENCH_HUB_INTERNAL_PORT": "8000"}, "WORKBENCH_HUB_PORT=8000 is also the port of WORKBENCH_HUB_INTERNAL_PORT"),
    ({"WORKBENCH_HUB_PROXY_API_PORT": "8081"}, "is also the port of WORKBENCH_HUB_PROXY_API_PORT"),
])
def test_a_bad_hub_setting_is_refused_with_a_message_naming_it(monkeypatch, tmp_path, capsys, settings, message):
    with pytest.raises(SystemExit) as stop:
        load_config(monkeypatch, tmp_path, {"WORKBENCH_HUB_PASSWORD": PASSWORD, **settings})
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_good_hub_settings_reach_the_hub_and_the_culler(monkeypatch, tmp_path):
    config = load_config(monkeypatch, tmp_path, {
        "WORKBENCH_HUB_PASSWORD": PASSWORD, "WORKBENCH_HUB_IP": "0.0.0.0", "WORKBENCH_HUB_PORT": "8123",
        "WORKBENCH_HUB_CULL_TIMEOUT": " 900 ", "WORKBENCH_HUB_PROXY_API_PORT": "8124"})
    assert config.JupyterHub.bind_url == "http://0.0.0.0:8123"
    assert config.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:8124"
    assert config.SharedPasswordAuthenticator.user_password == PASSWORD
    assert "--timeout=900" in config.JupyterHub.services[0]["command"]
    assert "--cull-every=300" in config.JupyterHub.services[0]["command"]
    assert (tmp_path / "state").is_dir()


@pytest.mark.parametrize("given, bound", [("::1", "[::1]"), ("[::1]", "[::1]"), ("planner.example.org", "planner.example.org"),
                                          ("localhost", "localhost"), (" 10.0.0.5 ", "10.0.0.5")])
def test_hub_addresses_are_written_as_a_url_takes_them(monkeypatch, tmp_path, given, bound):
    config = load_config(monkeypatch, tmp_path, {"WORKBENCH_HUB_PASSWORD": PASSWORD, "WORKBENCH_HUB_IP": given})
    assert config.JupyterHub.bind_url == f"http://{bound}:8000"


def test_the_hub_without_a_password_stops_at_once_with_a_message(tmp_path):
    _requirements()
    env = {key: value for key, value in os.environ.items() if not key.startswith("WORKBENCH_HUB_")}
    env["WORKBENCH_HUB_STATE"] = str(tmp_path)
    result = subprocess.run([str(JUPYTERHUB), "-f", str(CONFIG)], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip() == ("jupyterhub_config.py: WORKBENCH_HUB_PASSWORD must be set to the shared "
                                     "password: 8 characters or more, no leading or trailing spaces")
    assert not (tmp_path / "jupyterhub.sqlite").exists()  # stopped before the hub made anything


@pytest.fixture
def hub(tmp_path):
    _requirements()
    port = free_port()
    env = {**os.environ, "WORKBENCH_HUB_PASSWORD": PASSWORD, "WORKBENCH_HUB_PORT": str(port),
           "WORKBENCH_HUB_INTERNAL_PORT": str(free_port()), "WORKBENCH_HUB_PROXY_API_PORT": str(free_port()),
           "WORKBENCH_HUB_STATE": str(tmp_path), "WORKBENCH_HUB_CULL_TIMEOUT": str(CULL_TIMEOUT_SECONDS),
           "WORKBENCH_HUB_CULL_EVERY": "5", "WORKBENCH_HUB_ACTIVITY_INTERVAL": "5"}
    log_path = tmp_path / "jupyterhub.log"
    with open(log_path, "w") as log:
        # a process group of its own: the hub's proxy, culler and users' servers are stopped with it
        process = subprocess.Popen([str(JUPYTERHUB), "-f", str(CONFIG)], cwd=tmp_path, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 90
    while True:
        if process.poll() is not None:
            pytest.fail(f"jupyterhub exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(url + "hub/health", timeout=2)
            break
        except OSError:
            if time.time() > deadline:
                stop_group(process)
                pytest.fail(f"jupyterhub did not answer in 90 s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
    yield url, log_path
    stop_group(process)


def stop_group(process, grace_seconds=45):
    """Stop the hub (it takes ~30 s: its culler service), then whatever of its group is left."""
    process.terminate()
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # the group is gone already
        pass
    process.wait()


def test_users_log_in_through_the_hub_get_the_planner_and_idle_servers_are_culled(browser, hub):
    url, log_path = hub
    pages = {}
    for name in USERS:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1") else r.abort())
        page.goto(url + "hub/login")
        page.fill("#username_input", name)
        page.fill("#password_input", PASSWORD)
        page.click("#login_submit", no_wait_after=True)  # spawns the user's server; all three start together
        pages[name] = page
    for name, page in pages.items():
        # the spawner's default URL is the planner: logging in lands on it
        page.wait_for_url(f"**/user/{name}/voila/render/notebooks/planner.ipynb*", timeout=TIMEOUT)
        page.wait_for_selector(".wb-total .wb-card-value", timeout=TIMEOUT)
    # a planning link's query string works through the hub as on the standalone app
    for i, (name, page) in enumerate(pages.items()):
        page.goto(f"{url}user/{name}/voila/render/notebooks/planner.ipynb?params={13 + i}B&gpu=H100-SXM5-80GB",
                  wait_until="commit")
    for i, (name, page) in enumerate(pages.items()):
        page.wait_for_selector(".wb-total .wb-card-value", timeout=TIMEOUT)
        page.wait_for_selector(".wb-charts svg text", timeout=TIMEOUT)
        assert page.locator(".wb-field-params input[type=text]").input_value() == f"{13 + i}B"
        assert "USD" in page.inner_text(".wb-total .wb-card-value")
    # each user has a server of their own, and nobody sees another's page
    servers = user_servers()
    assert set(USERS) <= set(servers), servers
    assert len({servers[name] for name in USERS}) == len(USERS)
    refused = pages["alice"].goto(f"{url}user/bob/voila/render/notebooks/planner.ipynb")
    assert refused.status == 403 and ".wb-total" not in pages["alice"].content()
    # a link shared from a hub goes through the hub's user-redirect: each reader opens it on their own server
    opened = pages["alice"].goto(f"{url}user/alice/voila/render/notebooks/planner.ipynb?params=13B", wait_until="commit")
    # the same-origin content security policy reaches hub users too (binder/jupyter_config.json)
    assert opened.headers["content-security-policy"].startswith("default-src 'self'")
    assert "connect-src 'self' ws: wss:" in opened.headers["content-security-policy"]
    pages["alice"].wait_for_selector(".wb-share-link", timeout=TIMEOUT)
    shared = pages["alice"].get_attribute(".wb-share-link", "href")
    assert shared.startswith(f"{url}hub/user-redirect/voila/render/notebooks/planner.ipynb?") and "params=13B" in shared
    pages["bob"].goto(shared, wait_until="commit")
    pages["bob"].wait_for_url("**/user/bob/voila/render/notebooks/planner.ipynb*", timeout=TIMEOUT)
    pages["bob"].wait_for_selector(".wb-total .wb-card-value", timeout=TIMEOUT)
    assert pages["bob"].locator(".wb-field-params input[type=text]").input_value() == "13B"

    # bob and chen leave; alice keeps working, so the culler must stop their servers and not hers
    pages["alice"].wait_for_selector(".wb-total .wb-card-value", timeout=TIMEOUT)
    # alice opened the planner four times in one tab: each page left freed its kernel (Voila's shutdown beacon,
    # accepted by the hub's XSRF check)
    deadline = time.time() + 30
    while len(kernel_pids(servers["alice"])) > 1 and time.time() < deadline:
        time.sleep(1)
    assert len(kernel_pids(servers["alice"])) == 1
    server_mb = [rss_mb(pid) for pid in servers.values()]
    kernel_mb = [rss_mb(pid) for name in USERS for pid in kernel_pids(servers[name])]
    print(f"RSS per user's server {min(server_mb):.0f}-{max(server_mb):.0f} MB, "
          f"per planner kernel {min(kernel_mb):.0f}-{max(kernel_mb):.0f} MB")
    for name in ("bob", "chen"):
        pages[name].goto("about:blank")
        pages[name].context.close()
    handle = pages["alice"].locator(".wb-field-params .noUi-handle")
    left = time.time()
    deadline = left + CULL_TIMEOUT_SECONDS + 90
    while time.time() < deadline and {"bob", "chen"} & set(user_servers()):
        handle.focus()
        before = pages["alice"].inner_text(".wb-total .wb-card-value")
        handle.press("ArrowRight")
        pages["alice"].wait_for_function(
            f"document.querySelector('.wb-total .wb-card-value').textContent !== {before!r}", timeout=TIMEOUT)
        time.sleep(3)
    culled_after = time.time() - left
    servers = user_servers()
    log = log_path.read_text(errors="replace")
    assert not {"bob", "chen"} & set(servers), f"idle servers still running after {culled_after:.0f} s:\n{log[-3000:]}"
    assert culled_after >= CULL_TIMEOUT_SECONDS - 5, "servers stopped before they had been idle for the timeout"
    assert "alice" in servers, "the culler stopped the server of a user who was still working"
    assert "Culling server bob" in log and "Culling server chen" in log and "Culling server alice" not in log
    print(f"{len(USERS)} users served through JupyterHub; idle servers culled {culled_after:.0f} s after leaving")
    pages["alice"].context.close()
