"""The app's links: the address bar kept on the current plan (:class:`LinkBar`, inline JavaScript, offline),
links through a JupyterHub, and the reading of a link's query into scenario values, app options (language,
currency, the programme view) and the messages of values left out.
"""

import logging
import os
import re
from urllib.parse import parse_qsl

import anywidget
import traitlets

from ..reference.i18n import problem_zh, t
from ..plan.scenario import Scenario, ScenarioError, excerpt, fields, query_fields


log = logging.getLogger(__name__)

#: URL parameters that belong to the app, not to the scenario.
APP_PARAMS = ("lang", "currency")
CURRENCIES = ("USD", "CNY")
#: the programme view's link keys (``programme_presets.QUERY_KEYS``, imported only when a link has one: the first
#: page does not load the programme modules), left out of the scenario
PROGRAMME_KEYS = ("view", "programme", "plan", "horizon", "every", "cycles", "versions", "growth")


def hub_links(environ=None) -> dict:
    """LinkBar settings for a kernel started by a JupyterHub single-user server, else none."""
    environ = os.environ if environ is None else environ
    prefix = environ.get("JUPYTERHUB_SERVICE_PREFIX", "")
    if not prefix.startswith("/") or not environ.get("JUPYTERHUB_USER"):
        return {}
    base = environ.get("JUPYTERHUB_BASE_URL", "/") or "/"
    return {"hub_service_prefix": prefix.rstrip("/") + "/", "hub_user_redirect": base.rstrip("/") + "/hub/user-redirect/"}


class LinkBar(anywidget.AnyWidget):
    """Keeps the address bar on the current scenario's URL and copies it on request (inline JS, offline)."""

    _esm = """
    // Voila shuts a closed page's kernel down with a POST that must carry the _xsrf cookie (tornado's
    // double-submit check). A page served by a standalone Voila never receives that cookie, so every
    // shutdown was refused (403) and kernels stayed alive until the culler. Any random token is valid in
    // a double-submit scheme: another site can neither read nor set this origin's cookies.
    // Under JupyterHub the server signs its own token and refuses any other: an invented cookie there made
    // every later page's API calls unauthenticated (403), so it is left to the hub.
    function ensureXsrfCookie() {
      if (model_hub || /\b_xsrf=/.test(document.cookie)) { return; }
      const bytes = new Uint8Array(16);
      crypto.getRandomValues(bytes);
      const token = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      let path = "/";
      try { path = JSON.parse(document.getElementById("jupyter-config-data").textContent).baseUrl || "/"; }
      catch (e) { /* not in Voila: the site root */ }
      document.cookie = "_xsrf=" + token + "; path=" + path + "; SameSite=Strict";
    }
    let model_hub = false;
    function render({ model, el }) {
      model_hub = Boolean(model.get("hub_service_prefix"));
      ensureXsrfCookie();
      const button = document.createElement("button");
      button.className = "jupyter-button wb-copy-link";
      const status = document.createElement("span");
      status.className = "wb-copy-status";
      const link = document.createElement("a");
      link.className = "wb-share-link";
      link.target = "_blank";
      function update() {
        const q = model.get("query");
        const url = location.origin + location.pathname + (q ? "?" + q : "");
        if (model.get("update_address_bar")) { history.replaceState(null, "", url); }
        // On a hub the page lives under /user/NAME/: a colleague opening that would be refused, so the link
        // shared goes through the hub's user-redirect, which opens the same path on the reader's own server.
        let shared = url;
        const prefix = model.get("hub_service_prefix");
        if (prefix && location.pathname.startsWith(prefix)) {
          shared = location.origin + model.get("hub_user_redirect") + location.pathname.slice(prefix.length)
                   + (q ? "?" + q : "");
        }
        link.href = shared;
        link.textContent = shared;
        button.textContent = model.get("button_text");
      }
      button.onclick = async () => {
        try { await navigator.clipboard.writeText(link.href); status.textContent = " " + model.get("copied_text"); }
        catch (e) { const r = document.createRange(); r.selectNodeContents(link);
                    const s = getSelection(); s.removeAllRanges(); s.addRange(r); status.textContent = ""; }
      };
      model.on("change:query", update);
      model.on("change:button_text", update);
      update();
      el.append(button, status, document.createElement("br"), link);
    }
    export default { render };
    """
    _css = """
    .wb-share-link { font-size: 11px; color: #555; display: block; max-width: 1100px; white-space: nowrap;
                     overflow: hidden; text-overflow: ellipsis; }  /* a whole plan's link is long: Copy link copies it */
    .wb-copy-status { color: #2a7d2a; font-size: 12px; }
    """
    query = traitlets.Unicode("").tag(sync=True)
    button_text = traitlets.Unicode("Copy link").tag(sync=True)
    copied_text = traitlets.Unicode("Link copied").tag(sync=True)
    update_address_bar = traitlets.Bool(False).tag(sync=True)
    # set when the kernel runs under JupyterHub (from its JUPYTERHUB_* environment): /user/NAME/, /hub/user-redirect/
    hub_service_prefix = traitlets.Unicode("").tag(sync=True)
    hub_user_redirect = traitlets.Unicode("").tag(sync=True)


def parse_app_query(query: str):
    """(scenario values that are valid on their own, app options, error messages) from a URL query.

    The same reading as :meth:`Scenario.from_query` (:func:`workbench.plan.scenario.query_fields`: unknown keys,
    keys given twice and bad values are errors), except that an error does not discard the rest: it is
    reported, in the link's language, and its field left at its default, so a link with one typo still
    opens the rest of its scenario.
    """
    options, errors = {"lang": "en", "currency": "USD"}, []
    pairs = parse_qsl(str(query or "").lstrip("?"), keep_blank_values=True)
    given = {key: [value for k, value in pairs if k == key] for key in APP_PARAMS}
    if given["lang"]:  # the language first: every message below is in it, wherever `lang` stands
        options["lang"] = "zh" if given["lang"][0].strip().lower().startswith("zh") else "en"
    lang = options["lang"]
    for key in APP_PARAMS:
        if len(given[key]) > 1:  # as for scenario fields: say so rather than let one of them win unseen
            errors.append(ScenarioError(key, given[key][1], "is given twice in the URL", f"one value; the first "
                                        f"({excerpt(given[key][0])}) is used",
                                        f"只给一次；使用第一个值（{excerpt(given[key][0])}）").message(lang, reader=True))
    if given["lang"] and not re.fullmatch(r"(en|zh)([-_].*)?", given["lang"][0].strip().lower()):
        errors.append(ScenarioError("lang", given["lang"][0], "is not a language of the app",
                                    "en or zh (English is used)", "en 或 zh（使用英文）").message(lang, reader=True))
    if given["currency"]:
        value = given["currency"][0]
        if value.strip().upper() in CURRENCIES:
            options["currency"] = value.strip().upper()
        else:
            errors.append(ScenarioError("currency", value, "is not a currency of the app",
                                        f"{', '.join(CURRENCIES)} (USD is used)",
                                        f"{', '.join(CURRENCIES)}（使用 USD）").message(lang, reader=True))
    if any(k in PROGRAMME_KEYS for k, _ in pairs):  # the programme view's own keys: read there, reported here
        errors += _programme_options(pairs, query, options, lang)
    values, problems = query_fields(query, ignore=APP_PARAMS + PROGRAMME_KEYS)
    errors += [problem.message(lang, reader=True) for problem in problems]
    linked_precision, fallback_note = values.get("precision"), None
    while True:  # drop fields that break a rule involving several fields, one at a time
        try:
            Scenario(**values)
            break
        except ScenarioError as error:
            if error.field == "precision" and "gpu" in values and error.allowed and fallback_note is None:
                # the link names a GPU without the (default or given) precision: keep the GPU, at a precision it has
                values["precision"] = error.allowed.split(", ")[0]
                fallback_note = (f"{error.message(lang, reader=True)}（{t('used_instead', lang)}：{values['precision']}）" if lang == "zh"
                                 else f"{error.message(lang, reader=True)} ({t('used_instead', lang)}: {values['precision']})")
                errors.append(fallback_note)
                continue
            # a catalog gap (no price or TDP for the GPU) is reported under a field the link may not hold:
            # drop the link's own key that brought it in, and keep the rest of the scenario
            culprit = error.field if error.field in values else next(
                (k for k in ("gpu", "pricing", "provider", "precision") if k in values), None)
            if culprit == "gpu" and error.field != "gpu":
                # say it of the GPU the link named, and undo what was done only to fit that GPU
                errors.append(t("gpu_left_default", lang).format(
                    gpu=values["gpu"], reason=problem_zh(error.problem) if lang == "zh" else error.problem,
                    default=fields()["gpu"].default))
                if fallback_note is not None:
                    errors.remove(fallback_note)
                    values.pop("precision")
                    if linked_precision is not None:
                        values["precision"] = linked_precision
                    fallback_note = None
            else:
                errors.append(error.message(lang, reader=True))
            if culprit is None:
                values = {}
                break
            values.pop(culprit)
    return values, options, errors


def _programme_options(pairs, query, options, lang) -> list[str]:
    """``view``, ``programme_preset`` and ``programme_knobs`` into ``options``; the messages of bad ones."""
    from ..programmes import programme_presets
    errors = []
    views = [value for key, value in pairs if key == "view"]
    if views and views[0] not in ("programme", "single"):
        errors.append(ScenarioError("view", views[0], "is not a view of the app",
                                    "single or programme (single is used)", "single 或 programme（使用 single）").message(lang, reader=True))
    options["view"] = "programme" if views and views[0] == "programme" else "single"
    preset, knobs, problems = programme_presets.parse_query(query, lang)
    options["programme_preset"], options["programme_knobs"] = preset, knobs
    return errors + problems


def _request():
    """(scenario values, app options, notices, served by Voilà) from the current request's environment."""
    in_voila = os.environ.get("SERVER_SOFTWARE", "").startswith("voila") or "VOILA_PREHEAT" in os.environ
    values, options, errors = parse_app_query(os.environ.get("QUERY_STRING", ""))
    colon, separator = ("：", "；") if options["lang"] == "zh" else (": ", "; ")
    notices = [f"{t('url_error', options['lang'])}{colon}" + separator.join(errors)] if errors else []
    return values, options, notices, in_voila
