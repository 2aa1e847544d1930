"""End to end in a real headless browser (Debian's chromium + chromedriver, driven by selenium).

The page is served by uvicorn on 127.0.0.1; a CSV is uploaded through the file input, a run started,
the live chart watched, the result read. Screenshots go to ``OPTRULES_SCREENSHOTS`` (default: the
test's temporary directory).
"""

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="no browser: Debian's chromium and chromium-driver are not installed (make test installs them where "
           "apt-get can run as root)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """The app, with a log of what reached it: (method, path, status)."""

    def __init__(self, app):
        self.app, self.log = app, []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def recording_send(message):
            if message["type"] == "http.response.start":
                self.log.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, recording_send)


def start_in_thread(app, port):
    uvicorn = pytest.importorskip("uvicorn")
    instance = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not instance.started and time.time() < deadline:
        time.sleep(0.05)
    assert instance.started, "uvicorn did not start"
    return instance, thread


@pytest.fixture(scope="module")
def server():
    """The app as ``optrules serve`` runs it: with an access token, opened through its link."""
    from types import SimpleNamespace

    from optrules.web.app import create_app, new_token
    from optrules.web.runs import RunManager

    port, token = free_port(), new_token()
    manager = RunManager(max_upload_bytes=5 * 2**20)
    app = Recorder(create_app(manager, token=token))
    instance, thread = start_in_thread(app, port)
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}", link=f"http://127.0.0.1:{port}/?token={token}",
                          manager=manager, log=app.log)
    instance.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", "--window-size=1200,1700",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    path = Path(os.environ.get("OPTRULES_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def wait_for(predicate, timeout=60.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_upload_run_watch_and_read_the_model(server, browser, shots, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from optrules.data.datasets import load_compas

    data = load_compas()
    csv = tmp_path / "compas.csv"
    data.X.assign(two_year_recid=np.where(data.y == 1, "yes", "no")).to_csv(csv, index=False)

    browser.get(server.url + "/")  # without the token the page says what to open
    assert "access token" in wait_for(lambda: browser.find_element(By.ID, "message").text, 20, "the token message")
    browser.get(server.link)  # the link 'optrules serve' prints: one click
    assert browser.current_url == server.url + "/"  # the token went into a cookie, out of the address
    assert "optrules" in browser.title
    assert "default 120 s" in wait_for(lambda: browser.find_element(By.ID, "limits").text, 20, "the limits")
    wait_for(lambda: len(Select(browser.find_element(By.ID, "dataset")).options) > 1, 20, "the dataset list")

    # a bad upload gets a message on the page
    bad = tmp_path / "picture.csv"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    browser.find_element(By.ID, "file").send_keys(str(bad))
    # (the page says "uploading ..." first: wait for the answer)
    message = wait_for(lambda: (text := browser.find_element(By.ID, "message").text) and not text.startswith("uploading")
                       and text, 20, "the error message")
    assert "not a CSV" in message

    # the real upload: columns appear; no column is named like a target, so none is taken for granted: Start
    # asks for one, then the user picks it
    browser.find_element(By.ID, "file").send_keys(str(csv))
    wait_for(lambda: "6907 rows" in browser.find_element(By.ID, "table-info").text, 30, "the table summary")
    target = Select(browser.find_element(By.ID, "target"))
    assert target.first_selected_option.text == "choose the target column"
    browser.find_element(By.ID, "start").click()
    assert "choose the target column" in wait_for(lambda: browser.find_element(By.ID, "message").text, 10, "the ask")
    target.select_by_value("two_year_recid")
    assert target.first_selected_option.text == "two_year_recid"

    # a run long enough to watch: lambda 0.002 with a 6 s budget, over pairs of literals at quantile thresholds
    # without negations (the paper's space: the Rashomon set below is counted over it)
    # lambda, left alone, is each family's default (a shared field: rule lists 0.01, falling lists 0.001)
    Select(browser.find_element(By.ID, "model")).select_by_value("frl")
    assert browser.find_element(By.ID, "regularization").get_attribute("value") == "0.001"
    Select(browser.find_element(By.ID, "model")).select_by_value("rulelist")
    assert browser.find_element(By.ID, "regularization").get_attribute("value") == "0.01"
    Select(browser.find_element(By.ID, "thresholds")).select_by_value("quantile")
    Select(browser.find_element(By.ID, "negations")).select_by_value("without")
    card = browser.find_element(By.ID, "max_card")
    card.clear()
    card.send_keys("2")
    lam = browser.find_element(By.ID, "regularization")
    lam.clear()
    lam.send_keys("0.002")
    limit = browser.find_element(By.ID, "time_limit")
    limit.clear()
    limit.send_keys("6")
    browser.find_element(By.ID, "start").click()
    wait_for(lambda: "running" in browser.find_element(By.ID, "run-status").text, 30, "the run to start")
    time.sleep(2.5)
    # read the chart in one script: it is redrawn (new elements) at every progress event
    paths = browser.execute_script("return Array.from(document.querySelectorAll('#chart path')).map(p => p.getAttribute('d'))")
    assert len(paths) == 2 and all(path.count("L") >= 4 for path in paths)  # the live chart is drawing
    assert browser.find_element(By.ID, "s-queue").text not in ("", "-")
    browser.execute_script("document.getElementById('run').scrollIntoView()")
    browser.save_screenshot(str(shots / "web_running.png"))

    wait_for(lambda: "done" in browser.find_element(By.ID, "run-status").text, 60, "the run to end")
    text = browser.find_element(By.ID, "model-text").text
    assert text.startswith("if (") and "else predict" in text
    assert "stopped on time budget" in browser.find_element(By.ID, "certificate-text").text
    assert "time budget: gap" in browser.find_element(By.ID, "run-status").text
    browser.execute_script("document.getElementById('run').scrollIntoView()")
    browser.save_screenshot(str(shots / "web_time_budget.png"))

    # a second run that certifies; the runs table lists both
    lam = browser.find_element(By.ID, "regularization")
    lam.clear()
    lam.send_keys("0.005")
    browser.find_element(By.ID, "start").click()
    try:
        wait_for(lambda: "certified optimal" in browser.find_element(By.ID, "certificate-text").text
                 and browser.find_element(By.ID, "run-title").text == "Run #2", 60, "the certified run")
    finally:
        browser.save_screenshot(str(shots / "web_second_run.png"))
    assert browser.find_element(By.ID, "s-gap").text == "0.000000"
    assert "training accuracy 0.67" in browser.find_element(By.ID, "accuracy").text
    href = browser.find_element(By.ID, "download").get_attribute("href")
    assert href.endswith("/api/runs/2/model.json")
    rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
    assert len(rows) == 2
    assert browser.find_element(By.ID, "s-remaining").text == "nothing left"
    browser.execute_script("document.getElementById('run').scrollIntoView()")
    browser.save_screenshot(str(shots / "web_certified.png"))

    # the form's family fields come from the registry: switching family shows that family's settings
    Select(browser.find_element(By.ID, "model")).select_by_value("frl")
    assert not browser.find_element(By.ID, "max_rules").is_displayed()
    # lambda is one field (one name in every family, the same meaning): the value typed for the rule list stays
    assert browser.find_element(By.ID, "regularization").get_attribute("value") == "0.005"
    assert "price of a rule" in browser.find_element(By.ID, "regularization").find_element(By.XPATH, "..").text
    assert browser.find_element(By.ID, "w").get_attribute("value") == "1"
    assert "falls" in browser.find_element(By.ID, "pos_label").find_element(By.XPATH, "..").text
    Select(browser.find_element(By.ID, "model")).select_by_value("ruleset")
    assert "describes" in browser.find_element(By.ID, "pos_label").find_element(By.XPATH, "..").text
    assert not browser.find_element(By.ID, "w").is_displayed()
    Select(browser.find_element(By.ID, "model")).select_by_value("frl")
    browser.find_element(By.ID, "start").click()
    wait_for(lambda: browser.find_element(By.ID, "run-title").text == "Run #3"
             and "certified optimal" in browser.find_element(By.ID, "certificate-text").text, 60, "the falling list")
    assert "probability" in browser.find_element(By.ID, "model-text").text
    assert not browser.find_element(By.ID, "rashomon-form").is_displayed()  # only rule lists have the set

    # every rule list within 1% of a certified one (lambda 0.01), and the rates by sex over them
    Select(browser.find_element(By.ID, "model")).select_by_value("rulelist")
    lam = browser.find_element(By.ID, "regularization")
    lam.clear()
    lam.send_keys("0.01")
    browser.find_element(By.ID, "start").click()
    wait_for(lambda: browser.find_element(By.ID, "run-title").text == "Run #4"
             and "certified optimal" in browser.find_element(By.ID, "certificate-text").text, 60, "the lambda 0.01 list")
    wait_for(lambda: len(Select(browser.find_element(By.ID, "r-group")).options) > 1, 20, "the group columns")
    Select(browser.find_element(By.ID, "r-group")).select_by_value("sex")
    browser.find_element(By.ID, "r-start").click()
    summary = wait_for(lambda: browser.find_element(By.ID, "r-summary").text, 120, "the Rashomon set")
    assert summary.startswith("174 rule lists") and "certified complete" in summary
    assert browser.find_element(By.ID, "run-title").text == "Run #5: near-optimal lists of run #4"
    assert not browser.find_element(By.ID, "chart").is_displayed()
    bars = browser.execute_script("return document.querySelectorAll('#r-histogram rect title').length")
    assert bars >= 5
    assert browser.find_element(By.ID, "r-members").text.startswith("objective 0.363295208")
    rates = browser.find_elements(By.CSS_SELECTOR, "#r-rates tbody tr")
    assert len(rates) == 6 and "Male" in rates[0].text
    browser.execute_script("document.getElementById('run').scrollIntoView()")
    browser.save_screenshot(str(shots / "web_rashomon.png"))


ATTACK_PAGE = """<!doctype html><html><head><title>a page on another origin</title></head><body>
<iframe name="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="APP/api/runs">
  <input name='{"table": "dataset:compas", "target": "two_year_recid", "params": {"time_limit": 86400}, "x": "' value='"}'>
</form>
<script>
const app = "APP";
const run = JSON.stringify({table: "dataset:compas", target: "two_year_recid", params: {time_limit: 86400}});
const outcomes = {};
async function attempt(name, path, options) {
  try { const r = await fetch(app + path, {credentials: "include", ...options}); outcomes[name] = r.type + " " + r.status; }
  catch (e) { outcomes[name] = "failed: " + e.message; }
}
(async () => {
  await attempt("run as text", "/api/runs", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: run});
  await attempt("run as json", "/api/runs", {method: "POST", headers: {"Content-Type": "application/json"}, body: run});
  await attempt("cancel", "/api/runs/1/cancel", {method: "POST", mode: "no-cors"});
  await attempt("rashomon as text", "/api/runs/2/rashomon", {method: "POST", mode: "no-cors",
                headers: {"Content-Type": "text/plain"}, body: JSON.stringify({params: {epsilon_percent: 100}})});
  const form = new FormData();
  form.append("file", new Blob(["a,b\\n1,2\\n3,4\\n"], {type: "text/csv"}), "x.csv");
  await attempt("upload", "/api/uploads", {method: "POST", mode: "no-cors", body: form});
  await attempt("read runs", "/api/runs", {});
  document.getElementById("form").submit();
  window.outcomes = outcomes;
})();
</script></body></html>"""


def test_a_page_from_another_origin_cannot_drive_the_app(server, browser, tmp_path):
    """The browser holds the app's token cookie (cookies ignore ports, so a page on another port of
    127.0.0.1 is the same *site* and the cookie rides along): only the Origin check stands between
    the page and the app, and every request it makes must be refused."""
    import http.server
    import json

    browser.get(server.link)
    runs_before, uploads_before = len(server.manager.runs), server.manager.uploads.keys()
    page = ATTACK_PAGE.replace("APP", server.url).encode()

    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Attacker)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    logged = len(server.log)
    try:
        browser.get(f"http://127.0.0.1:{attacker.server_address[1]}/")
        outcomes = wait_for(lambda: browser.execute_script("return window.outcomes"), 20, "the attacks")
        posts = wait_for(lambda: [entry for entry in server.log[logged:] if entry[0] == "POST"]
                         if sum(entry[0] == "POST" for entry in server.log[logged:]) >= 5 else None,
                         20, "the form post")
    finally:
        attacker.shutdown()
    # the requests reached the server (the test would see an attack that worked) and were refused
    assert {path for _, path, _ in posts} >= {"/api/runs", "/api/runs/1/cancel", "/api/uploads", "/api/runs/2/rashomon"}, posts
    assert all(status == 403 for _, _, status in posts), posts
    assert outcomes["run as json"].startswith("failed"), json.dumps(outcomes)  # no CORS: the preflight fails
    assert outcomes["read runs"].startswith("failed"), json.dumps(outcomes)  # and nothing can be read
    assert len(server.manager.runs) == runs_before and server.manager.uploads.keys() == uploads_before


def test_a_fit_under_a_fairness_constraint_and_its_trade_off_curve(server, browser, shots):
    """Choosing a fairness constraint asks for the sensitive column; the fit's certificate says the
    constraint; Draw it runs the curve, drawn as two lines of a point per bound, with its table."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server.link)
    wait_for(lambda: len(Select(browser.find_element(By.ID, "dataset")).options) > 1, 20, "the dataset list")
    Select(browser.find_element(By.ID, "dataset")).select_by_value("dataset:compas")
    wait_for(lambda: "6907 rows" in browser.find_element(By.ID, "table-info").text, 30, "the table summary")
    Select(browser.find_element(By.ID, "target")).select_by_value("two_year_recid")
    Select(browser.find_element(By.ID, "model")).select_by_value("rulelist")
    assert not browser.find_element(By.ID, "sensitive-label").is_displayed()  # no constraint: no question
    Select(browser.find_element(By.ID, "fairness")).select_by_value("statistical_parity")
    assert browser.find_element(By.ID, "sensitive-label").is_displayed()
    browser.find_element(By.ID, "start").click()
    assert "choose the sensitive column" in wait_for(lambda: browser.find_element(By.ID, "message").text, 10, "the ask")
    Select(browser.find_element(By.ID, "sensitive")).select_by_value("sex")
    browser.find_element(By.ID, "start").click()
    wait_for(lambda: "done" in browser.find_element(By.ID, "run-status").text
             and browser.find_element(By.ID, "frontier-form").is_displayed(), 90, "the fair fit")
    assert "statistical parity" in browser.find_element(By.ID, "certificate-text").text
    bounds = browser.find_element(By.ID, "f-bounds")
    bounds.clear()
    bounds.send_keys("0.02, 0.1")
    browser.find_element(By.ID, "f-start").click()
    wait_for(lambda: "trade-off curve" in browser.find_element(By.ID, "run-title").text
             and "done" in browser.find_element(By.ID, "run-status").text, 120, "the curve")
    wait_for(lambda: browser.find_element(By.ID, "frontier-result").is_displayed(), 10, "the curve's result")
    circles = browser.execute_script("return document.querySelectorAll('#f-chart circle').length")
    rows = browser.execute_script("return document.querySelectorAll('#f-points tbody tr').length")
    assert circles == 4 and rows == 2  # two bounds, two lines
    browser.execute_script("document.getElementById('run').scrollIntoView()")
    browser.save_screenshot(str(shots / "web_fairness.png"))
