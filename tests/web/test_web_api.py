"""The web app's API through Starlette's test client: uploads, runs, progress events, cancel, errors."""

import io
import json
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("httpx2")
from starlette.testclient import TestClient  # noqa: E402

from optrules.data.datasets import load_compas  # noqa: E402
from optrules.models import load_model  # noqa: E402
from optrules.web.app import create_app  # noqa: E402
from optrules.web.runs import RunManager  # noqa: E402


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def compas_csv():
    data = load_compas()
    return csv_bytes(data.X.assign(two_year_recid=np.where(data.y == 1, "yes", "no")))


def strict_json(text: str):
    """What a browser's JSON.parse accepts: no NaN or Infinity."""
    def refuse(constant):
        raise AssertionError(f"{constant} in JSON: browsers cannot parse it")
    return json.loads(text, parse_constant=refuse)


def wait(client, run_id, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = strict_json(client.get(f"/api/runs/{run_id}").text)
        if run["status"] in ("done", "failed", "cancelled"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish: {run}")


def upload(client, content: bytes, name="data.csv"):
    return client.post("/api/uploads", files={"file": (name, io.BytesIO(content), "text/csv")})


def test_index_and_assets_are_local(client):
    page = client.get("/")
    assert page.status_code == 200 and "optrules" in page.text
    assert "http://" not in page.text and "https://" not in page.text  # no CDN: every asset ships here
    for asset in ("/static/app.js", "/static/style.css"):
        response = client.get(asset)
        assert response.status_code == 200 and len(response.text) > 500
        assert "https://" not in response.text


def test_upload_fit_stream_and_download(client, compas_csv):
    info = upload(client, compas_csv, "compas.csv").json()
    assert info["n_rows"] == 6907 and "two_year_recid" in info["columns"] and len(info["preview"]) == 8
    response = client.post("/api/runs", json={"table": info["key"], "target": "two_year_recid", "model": "rulelist",
                                              "params": {"regularization": 0.01, "time_limit": 30}})
    assert response.status_code == 201, response.text
    run_id = response.json()["id"]
    # the event stream delivers status, progress points and an end event, then closes
    events = []
    with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("event: "):
                events.append(line[7:])
    assert events[0] == "status" and events[-1] == "end" and "progress" in events
    run = wait(client, run_id)
    assert run["status"] == "done", run
    result = run["result"]
    assert "if (" in result["text"] and result["certificate"]["status"] == "optimal"
    assert result["certificate_text"].startswith("certified optimal")
    # the headline says what the certificate's first line says (the ladder's sentence)
    statement = result["certificate"]["counters"]["proven"]
    assert result["certificate_text"].startswith(statement) and run["message"].startswith(statement)
    assert 0.6 < result["training_accuracy"] < 0.8
    last = run["points"][-1]
    assert last["objective"] == pytest.approx(last["lower_bound"])  # they meet when optimal
    download = client.get(f"/api/runs/{run_id}/model.json")
    assert "attachment" in download.headers["content-disposition"]
    strict_json(download.text)
    model = load_model(download.text)
    assert str(model) == result["text"]
    assert json.loads(download.text)["certificate"]["status"] == "optimal"


def test_bundled_dataset_and_other_families(client):
    info = client.get("/api/tables/dataset:car").json()
    assert info["n_rows"] == 1728 and info["columns"][-1] == "class"
    ids = []
    for model, params in [("rulelist", {"max_card": 1, "regularization": 0.02}),
                          ("frl", {"w": 1, "C": 0.01, "max_card": 1, "time_limit": 10}),
                          ("ruleset", {"complexity": 6, "max_degree": 2, "time_limit": 3})]:
        target = "class" if model == "rulelist" else "safety"
        table = "dataset:car"
        if model != "rulelist":  # binary families: a binary target from the compas data
            table, target = "dataset:compas", "two_year_recid"
        response = client.post("/api/runs", json={"table": table, "target": target, "model": model, "params": params})
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    # several runs queue without blocking the API; they finish in order
    assert len(client.get("/api/runs").json()) == 3
    for run_id in ids:
        run = wait(client, run_id, 120)
        assert run["status"] == "done", run
        assert run["result"]["text"]
    # a rule set's message: its mistakes, and unless certified its gap in accuracy points of the 6,907 rows
    certificate = run["result"]["certificate"]
    gap = certificate["objective"] - certificate["lower_bound"]
    assert f"{certificate['counters']['training_mistakes']:,} training mistakes" in run["message"]
    if gap <= 1e-9:
        assert run["message"].startswith("certified optimal") and "accuracy points" not in run["message"]
    else:
        assert f"({100 * gap / 6907:.2f} accuracy points)" in run["message"], run["message"]


def test_a_rule_set_describes_the_class_the_form_names(client):
    """The form names the class the set describes (the first class here, not the default)."""
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "ruleset",
            "params": {"complexity": 4, "max_degree": 1, "time_limit": 5, "pos_label": "no"}}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    run = wait(client, response.json()["id"], 60)
    assert run["status"] == "done", run
    assert "THEN predict no" in run["result"]["text"]  # not the default, the second class "yes"


def test_a_falling_list_falls_for_the_class_the_form_names(client):
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "frl",
            "params": {"w": 1.0, "C": 0.01, "max_card": 1, "time_limit": 10, "pos_label": "no"}}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    run = wait(client, response.json()["id"], 60)
    assert run["status"] == "done", run
    assert run["result"]["model"]["describes"] == 0  # "no" is the first class


def test_a_refined_run_says_which_space_it_started_from(client):
    body = {"table": "dataset:compas", "target": "two_year_recid",
            "params": {"regularization": 0.02, "refine": True, "time_limit": 30}}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    run = wait(client, response.json()["id"], 60)
    assert run["status"] == "done", run
    counters = run["result"]["certificate"]["counters"]
    assert counters["guided_space"].startswith("certified optimum over the boosted space")
    assert "numeric thresholds at quantiles and thresholds from a boosted reference" in counters["space"]


def test_cancel_a_running_and_a_queued_run(client):
    rng = np.random.default_rng(0)
    hard = pd.DataFrame(rng.random((400, 6)).round(2), columns=[f"x{j}" for j in range(6)])
    hard["y"] = rng.integers(0, 2, 400)
    info = upload(client, csv_bytes(hard)).json()
    # (quantile thresholds and pairs: a search that lasts; the default space certifies this table at once)
    params = {"regularization": 0.0005, "time_limit": 300, "thresholds": "quantile", "max_card": 2}
    first = client.post("/api/runs", json={"table": info["key"], "target": "y", "params": params}).json()["id"]
    second = client.post("/api/runs", json={"table": info["key"], "target": "y", "params": params}).json()["id"]
    deadline = time.time() + 30
    while client.get(f"/api/runs/{first}").json()["status"] != "running" and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    assert client.post(f"/api/runs/{second}/cancel").json()["status"] == "cancelled"
    client.post(f"/api/runs/{first}/cancel")
    run = wait(client, first, 30)
    assert run["status"] == "cancelled"
    # cancelled mid-search: the best list so far, with a certified gap
    assert run["result"]["certificate"]["status"] == "interrupted"
    assert run["result"]["certificate"]["gap"] > 0
    # the worker is free again: a new run goes through
    quick = client.post("/api/runs", json={"table": "dataset:compas", "target": "two_year_recid",
                                           "params": {"regularization": 0.05}}).json()["id"]
    assert wait(client, quick)["status"] == "done"


def test_a_fit_that_lets_a_cancel_through_leaves_the_worker_alive(client, monkeypatch):
    """Whatever stage lets the cancel's KeyboardInterrupt out of a fit, the run ends (cancelled, no
    model) and the worker takes the next run: a rule-list run cancelled while its search's kernel
    compiled (the server's first fit of a size) let it out, its worker's thread died, the run stayed
    "running" and every later run waited for ever (benchmarks/web_server.py hung there)."""
    from optrules.web.runs import RunManager

    real_fit = RunManager._fit

    def escaping(self, run):
        while not run.cancel_requested:
            time.sleep(0.01)
        raise KeyboardInterrupt

    monkeypatch.setattr(RunManager, "_fit", escaping)
    first = client.post("/api/runs", json={"table": "dataset:compas", "target": "two_year_recid",
                                           "params": {"regularization": 0.05}}).json()["id"]
    deadline = time.time() + 30
    while client.get(f"/api/runs/{first}").json()["status"] != "running" and time.time() < deadline:
        time.sleep(0.05)
    client.post(f"/api/runs/{first}/cancel")
    run = wait(client, first, 10)
    assert run["status"] == "cancelled" and "before the fit had a model" in run["message"]
    monkeypatch.setattr(RunManager, "_fit", real_fit)
    quick = client.post("/api/runs", json={"table": "dataset:compas", "target": "two_year_recid",
                                           "params": {"regularization": 0.05}}).json()["id"]
    assert wait(client, quick)["status"] == "done"


@pytest.mark.parametrize("content, name, status, fragment", [
    (b"\x89PNG\r\n\x1a\n\x00\x00binary", "image.png", 400, "not a CSV"),
    (b"", "empty.csv", 400, "empty"),
    (b"value\n1\n2\n", "one.csv", 400, "column"),
    (b"a,b\n1,2\n", "short.csv", 400, "row"),
    (b"a,b\n" + b"1,2\n" * 700_000, "big.csv", 413, "over the limit"),
])
def test_bad_uploads_get_a_message(client, content, name, status, fragment):
    response = upload(client, content, name)
    assert response.status_code == status
    assert fragment in response.json()["error"]


def test_the_form_comes_from_the_family_registry(client):
    from optrules.families import families

    listed = client.get("/api/families").json()
    assert [f["name"] for f in listed] == list(families()) == ["rulelist", "frl", "ruleset"]
    by_name = {f["name"]: {p["name"]: p for p in f["parameters"]} for f in listed}
    assert by_name["rulelist"]["regularization"]["max"] == 0.999 and by_name["frl"]["soft"]["kind"] == "flag"
    # the Rashomon form is offered for the families that declare Rashomon sets, and only those
    assert {f["name"]: f["rashomon"] for f in listed} == {name: found.rashomon for name, found in families().items()}
    assert [f["name"] for f in listed if f["rashomon"]] == ["rulelist"]
    # each family's form settings are exactly what its estimator takes, and the server reads them back
    for family in families().values():
        assert set(by_name[family.name]) <= set(family.estimator().get_params())
        defaults = {name: p["default"] for name, p in by_name[family.name].items()}
        estimator = family.estimator_from_form(defaults, {"time_limit": 5.0})
        assert isinstance(estimator, family.estimator) and estimator.time_limit == 5.0
    key = upload(client, csv_bytes(pd.DataFrame({"a": [0, 1] * 10, "label": [0, 1] * 10}))).json()["key"]
    refused = client.post("/api/runs", json={"table": key, "target": "label", "model": "ruleset",
                                             "params": {"w": 2}}).json()["error"]
    assert "w: not a parameter of ruleset" in refused


def test_bad_runs_get_a_message(client):
    frame = pd.DataFrame({"a": ["x", "y", None, "x"] * 5, "b": range(20), "one": [1] * 20,
                          "label": [0, 1, 2, 1] * 5})
    key = upload(client, csv_bytes(frame)).json()["key"]

    def submit(**body):
        return client.post("/api/runs", json={"table": key, "model": "rulelist", "params": {}, **body})

    assert "no column 'nope'" in submit(target="nope").json()["error"]
    assert "one class" in submit(target="one").json()["error"]
    error = submit(target="label").json()["error"]
    assert "missing" in error and "category" in error
    assert submit(target="label", params={"missing_as_category": True}).status_code == 201
    assert "binary" in submit(target="label", model="frl", params={"missing_as_category": True}).json()["error"]
    assert "regularization" in submit(target="label", params={"regularization": 3}).json()["error"]
    assert "unknown model" in submit(target="label", model="forest").json()["error"]
    assert client.post("/api/runs", content=b"not json",
                       headers={"Content-Type": "application/json"}).json()["error"].startswith("the request body")
    assert client.get("/api/runs/999").status_code == 404
    assert client.get("/api/runs/999/model.json").status_code == 404
    assert client.get("/api/tables/upload-999").status_code == 404


def test_a_failing_run_does_not_stop_the_server(client, monkeypatch):
    from optrules.web import runs as runs_module

    original = runs_module.build_estimator
    calls = {"n": 0}

    def broken(model, params, progress):
        calls["n"] += 1
        if progress is not None and calls["n"] == 2:  # the fit of the first run, not its validation
            raise RuntimeError("boom")
        return original(model, params, progress)

    monkeypatch.setattr(runs_module, "build_estimator", broken)
    body = {"table": "dataset:compas", "target": "two_year_recid", "params": {"regularization": 0.05}}
    failed = client.post("/api/runs", json=body).json()["id"]
    run = wait(client, failed)
    assert run["status"] == "failed" and "boom" in run["message"]
    ok = client.post("/api/runs", json=body).json()["id"]
    assert wait(client, ok)["status"] == "done"


def test_optrules_serve_binds_to_loopback_and_needs_its_token():
    import os
    import re
    import socket
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    from optrules.cli import build_parser

    assert build_parser().parse_args(["serve"]).host == "127.0.0.1"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "optrules.cli", "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        first = server.stdout.readline()
        link = re.search(r"http://127\.0\.0\.1:\d+/\?token=(\S+)", first)
        assert link, first
        token = link.group(1)
        base = f"http://127.0.0.1:{port}"

        def get(path, **headers):
            request = urllib.request.Request(base + path, headers=headers)
            with urllib.request.urlopen(request, timeout=2) as response:
                return response.status, response.read()

        deadline = time.time() + 30
        while True:
            try:
                status, body = get("/api/datasets", Authorization=f"token {token}")
                break
            except urllib.error.HTTPError:
                raise
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        assert [d["name"] for d in json.loads(body)] == ["compas", "bank", "car"]
        # without the token (another user of this machine), or with a wrong one: 401
        for headers in ({}, {"Authorization": "token wrong"}, {"Cookie": f"optrules-token-{port}=wrong"}):
            with pytest.raises(urllib.error.HTTPError) as refused:
                get("/api/datasets", **headers)
            assert refused.value.code == 401 and b"access token" in refused.value.read()
        # the printed link sets a cookie that the page's requests then carry
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(base + f"/?token={token}", timeout=2) as page:
            assert page.url == base + "/" and b"optrules" in page.read()
        with opener.open(base + "/api/datasets", timeout=2) as response:
            assert response.status == 200
        # listening on loopback only: the port is not open on the machine's other addresses
        others = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
        for address in others:
            with socket.socket() as probe:
                probe.settimeout(1)
                assert probe.connect_ex((address, port)) != 0
    finally:
        server.terminate()
        server.communicate(timeout=10)


def test_uploads_live_on_disk_in_a_private_folder():
    manager = RunManager(workers=1, max_uploads_kept=2)
    app = create_app(manager, allowed_hosts=["testserver"])
    with TestClient(app, headers={"Origin": "http://testserver"}) as client:
        folder = manager.uploads.folder
        assert folder.stat().st_mode & 0o777 == 0o700  # other users of the machine cannot read them
        frames = [pd.DataFrame({"a": [i, 2, 3], "y": [0, 1, 0]}) for i in range(4)]
        keys = [upload(client, csv_bytes(frame), f"f{i}.csv").json()["key"] for i, frame in enumerate(frames)]
        assert sorted(p.name for p in folder.iterdir()) == [f"{k}.csv" for k in keys[2:]]
        assert client.get(f"/api/tables/{keys[0]}").status_code == 404
        assert len(manager._parsed) <= 2
        # a table that left memory is read again from disk, the same
        manager._parsed.clear()
        assert client.get(f"/api/tables/{keys[3]}").json()["preview"][0] == [3, 0]
        pd.testing.assert_frame_equal(manager.table(keys[3]).frame, frames[3])
    assert not folder.exists()  # the server's stop deletes the uploads


def test_a_chunked_upload_is_refused_before_it_is_read_whole():
    """No Content-Length: the limit is counted as the body streams, and reading stops at 413."""
    import asyncio

    limit = 1 << 20
    manager = RunManager(workers=1, max_upload_bytes=limit)
    app = create_app(manager, allowed_hosts=["testserver"])
    chunk = b"a,b\n" + b"1,2\n" * 16383  # 64 KB
    sent = {"bytes": 0}
    answer = {}

    head = b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n\r\n'

    async def receive():  # a well-formed form whose file part never ends
        if sent["bytes"] >= 300 * 2**20:
            return {"type": "http.request", "body": b"", "more_body": False}
        body = chunk if sent["bytes"] else head + chunk
        sent["bytes"] += len(body)
        return {"type": "http.request", "body": body, "more_body": True}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answer["body"] = answer.get("body", b"") + message.get("body", b"")

    scope = {"type": "http", "method": "POST", "path": "/api/uploads", "raw_path": b"/api/uploads",
             "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
             "server": ("testserver", 80), "client": ("127.0.0.1", 5000),
             "headers": [(b"host", b"testserver"), (b"origin", b"http://testserver"),
                         (b"content-type", b"multipart/form-data; boundary=xyz"), (b"transfer-encoding", b"chunked")]}
    try:
        asyncio.run(app(scope, receive, send))
        assert answer["status"] == 413 and b"over the limit" in answer["body"]
        assert sent["bytes"] <= limit + 64 * 1024 + 2 * len(chunk)  # not 300 MB
        assert list(manager.uploads.folder.iterdir()) == []  # the partial file is gone
    finally:
        manager.shutdown()


def test_the_upload_folder_has_a_total_cap():
    import asyncio

    from optrules.web.uploads import UploadRefused, UploadStore

    store = UploadStore(max_file_bytes=100_000, max_total_bytes=250_000, max_files=10)
    removed = []

    def body(size, field="file", boundary="b0undary"):
        content = b"x,y\n" + b"1" * (size - 4)
        return (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"t.csv\"\r\n"
                f"Content-Type: text/csv\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()

    def receive(size, pinned=(), field="file", content_type="multipart/form-data; boundary=b0undary"):
        async def chunks():
            data = body(size, field)
            for start in range(0, len(data), 8192):
                yield data[start:start + 8192]
        return asyncio.run(store.receive(content_type, chunks(), lambda: pinned, removed.append))

    try:
        keys = [receive(90_000)[0] for _ in range(2)]
        assert receive(90_000, pinned=[keys[0]])[2] == 90_000
        assert removed == [keys[1]]  # the oldest unpinned upload made room; the pinned one stayed
        with pytest.raises(UploadRefused, match="keeps at most") as full:
            receive(90_000, pinned=store.keys())  # every kept upload is needed: refused, none deleted
        assert full.value.status == 413 and len(store.keys()) == 2
        assert store.total_bytes == 180_000 == sum(store.path(k).stat().st_size for k in store.keys())
        with pytest.raises(UploadRefused, match="over the limit"):
            receive(150_000)
        with pytest.raises(UploadRefused, match="no file"):
            receive(10, field="comment")
        with pytest.raises(UploadRefused, match="multipart") as wrong_type:
            receive(10, content_type="text/csv")
        assert wrong_type.value.status == 415
        assert sorted(p.name for p in store.folder.iterdir()) == sorted(f"{k}.csv" for k in store.keys())
    finally:
        store.close()
    assert not store.folder.exists()


@pytest.mark.parametrize("body", [
    {"params": "abc"}, {"params": [1, 2]}, {"params": {"time_limit": "abc"}}, {"params": {"time_limit": [1]}},
    {"params": {"time_limit": True}}, {"params": {"time_limit": 0}}, {"params": {"time_limit": 1e9}},
    {"params": {"max_card": 2.5}}, {"params": {"max_card": "two"}}, {"params": {"missing_as_category": "yes"}},
    {"params": {"negations": "maybe"}}, {"params": {"negations": True}}, {"params": {"max_memory": 1}},
    {"params": {"max_memory": {"mb": 5}}}, {"params": {"w": 3}},
    {"params": {"regularization": None}}, {"params": {"class_weight": {"0": 1}}}, {"params": {"foo": 1}},
    {"target": 5}, {"table": None}, {"model": ["rulelist"]}, {"model": "frl", "params": {"soft": 1}},
    {"model": "ruleset", "params": {"max_degree": -1}}, {"model": "ruleset", "params": {"complexity": "inf"}},
    {"model": "ruleset", "params": {"pos_label": 1}}, {"model": "ruleset", "params": {"pos_label": "maybe"}},
])
def test_every_bad_parameter_is_a_400(client, body):
    run = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist", "params": {}, **body}
    response = client.post("/api/runs", json=run)
    assert response.status_code == 400, response.text
    assert response.json()["error"]
    assert client.get("/api/runs").json() == []


def test_non_finite_numbers_in_the_body_are_a_400(client):
    body = b'{"table": "dataset:compas", "target": "two_year_recid", "params": {"time_limit": Infinity}}'
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and "finite" in response.json()["error"]
    for raw in (b"[]", b'"x"', b"null"):
        assert client.post("/api/runs", content=raw, headers={"Content-Type": "application/json"}).status_code == 400


def test_limits_are_published(client):
    from optrules.budget import default_memory_budget
    from optrules.parameters import DEFAULT_TIME_LIMIT

    limits = client.get("/api/limits").json()
    assert limits["time_limit"]["default"] == DEFAULT_TIME_LIMIT == 120  # (the estimators' and the CLI's)
    assert limits["max_memory_mb"]["default"] == round(default_memory_budget() / 2**20)
    assert limits["max_upload_mb"] == 2 and limits["max_upload_total_mb"] == 20


def test_a_raw_table_run_says_what_was_left_out(client):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"id": np.arange(1, 301), "group": rng.choice(["a", "b", "c"], 300)})
    frame["label"] = np.where((frame["group"] == "a") ^ (rng.random(300) < 0.1), "yes", "no")
    key = upload(client, csv_bytes(frame)).json()["key"]
    run = client.post("/api/runs", json={"table": key, "target": "label", "model": "rulelist",
                                         "params": {"regularization": 0.01, "time_limit": 20}}).json()
    done = wait(client, run["id"])
    assert done["status"] == "done"
    text = done["result"]["certificate_text"]
    assert "left out as row identifiers: id" in text and "antecedents from" in text
    model_text = done["result"]["text"]
    assert "group=a" in model_text and "id<=" not in model_text and "id>" not in model_text


def test_other_sites_are_refused(client):
    """A page on another origin cannot start, cancel or upload; a rebound host name cannot even read."""
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist", "params": {"time_limit": 1}}
    evil = {"Origin": "http://evil.example"}
    assert client.post("/api/runs", json=body, headers=evil).status_code == 403
    assert client.post("/api/runs", content=json.dumps(body), headers={"Content-Type": "text/plain"}).status_code == 415
    assert client.post("/api/runs/1/cancel", headers=evil).status_code == 403
    assert upload_with(client, {"Origin": "null"}).status_code == 403
    no_origin = TestClient(client.app)
    assert no_origin.post("/api/runs", json=body).status_code == 403
    rebound = client.get("/api/datasets", headers={"Host": "attacker.example:8765"})
    assert rebound.status_code == 403 and "not this server" in rebound.json()["error"]
    assert client.get("/api/datasets").status_code == 200
    assert client.get("/api/runs").json() == []  # nothing was started


def upload_with(client, headers):
    return client.post("/api/uploads", files={"file": ("x.csv", io.BytesIO(b"a,b\n1,2\n3,4\n"), "text/csv")},
                       headers=headers)


def test_host_names():
    from optrules.web.app import _hostname

    assert _hostname("127.0.0.1:8000") == "127.0.0.1"
    assert _hostname("[::1]:8000") == "::1"
    assert _hostname("LOCALHOST") == "localhost"


def test_a_preview_with_infinities_and_gaps_is_strict_json(client):
    content = b"a,b,when,y\ninf,1,2024-01-02,yes\n-inf,,2024-02-03,no\n1.5,2,,yes\n"
    response = upload(client, content)
    assert response.status_code == 200, response.text
    assert strict_json(response.text)["preview"] == [["inf", 1.0, "2024-01-02", "yes"], ["-inf", None, "2024-02-03", "no"],
                                                      [1.5, 2.0, None, "yes"]]


def test_the_form_takes_the_rule_lists_domain_constraints(client):
    families = {family["name"]: family for family in client.get("/api/families").json()}
    kinds = {parameter["name"]: parameter["kind"] for parameter in families["rulelist"]["parameters"]}
    assert kinds["required"] == kinds["forbidden"] == "names" and kinds["max_rules"] == "integer"
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist",
            "params": {"regularization": 0.01, "max_rules": "3", "forbidden": "sex", "required": "juvenile-crimes"}}
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    run = wait(client, response.json()["id"], 60)
    assert run["status"] == "done", run
    text = run["result"]["text"]
    assert "juvenile-crimes" in text and "sex=" not in text and text.count("predict") <= 4
    for bad in ({"max_rules": -1}, {"max_rules": 1.5}, {"required": 3}):
        response = client.post("/api/runs", json={**body, "params": {"regularization": 0.01, **bad}})
        assert response.status_code == 400 and next(iter(bad)) in response.text, response.text
    # an unknown name is the fit's error, shown on the run
    response = client.post("/api/runs", json={**body, "params": {"regularization": 0.01, "required": "nope"}})
    run = wait(client, response.json()["id"], 60)
    assert run["status"] == "failed" and "neither features nor columns" in run["message"], run


def _compas_rulelist(client, regularization=0.01):
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist",
            "params": {"regularization": regularization, "time_limit": 30}}
    run = wait(client, client.post("/api/runs", json=body).json()["id"])
    assert run["status"] == "done", run
    return run


def test_the_rashomon_set_of_a_run(client):
    """Every list within 1% of COMPAS's optimum at lambda 0.01, from the page's API: the set the
    library enumerates (174 lists), its histogram, best members and group rates, as strict JSON; the
    same again when the fitted list has left memory and is fitted anew."""
    from optrules import RuleListClassifier

    parent = _compas_rulelist(client)
    params = {"epsilon_percent": 1, "group": "sex", "time_limit": 60}
    response = client.post(f"/api/runs/{parent['id']}/rashomon", json={"params": params})
    assert response.status_code == 201, response.text
    assert response.json()["kind"] == "rashomon" and response.json()["parent"] == parent["id"]
    run = wait(client, response.json()["id"], 120)
    assert run["status"] == "done", run
    result = strict_json(client.get(f"/api/runs/{run['id']}").text)["result"]
    data = load_compas()
    expected = RuleListClassifier(regularization=0.01).fit(data.X, data.y).rashomon_set(0.01, relative=True)
    assert result["size"] == expected.size and result["complete"] and result["status"] == "complete"
    assert result["optimum"] == pytest.approx(expected.optimum, abs=1e-12)
    assert result["complete_below"] is None  # infinite: complete
    assert sum(result["histogram"]["counts"]) == expected.size
    assert [m["objective"] for m in result["members"]] == sorted(m["objective"] for m in result["members"])
    assert result["members"][0]["objective"] == pytest.approx(expected.optimum, abs=1e-9)
    groups = expected.permutation_groups()
    assert [m["orderings"] for m in result["members"]] == [len(g) for g in groups][:10] and not result["sampled"]
    assert sum(len(g) for g in groups) == expected.size
    assert {row["group"] for row in result["rates"]} == {"Male", "Female"}
    assert all(row["min"] <= row["optimal"] + 1e-12 <= row["max"] + 2e-12 for row in result["rates"])
    usage = expected.feature_usage()
    assert [(f["feature"], f["members"]) for f in result["features"]] == list(zip(usage["feature"], usage["members"]))[:20]
    assert run["message"] == f"{expected.size:,} rule lists, certified complete"
    # the fitted list left memory: fitted again, same set
    client.app.state.manager._fitted.clear()
    again = client.post(f"/api/runs/{parent['id']}/rashomon", json={"params": {"epsilon_percent": 1}}).json()
    rerun = wait(client, again["id"], 120)
    assert rerun["status"] == "done" and rerun["result"]["size"] == expected.size and rerun["result"]["rates"] is None


def test_a_cancel_during_a_rashomon_run_s_analysis_ends_it_with_what_it_read(client, monkeypatch):
    """The analysis after the enumeration (multiplicity, group rates) hears the run's Cancel between its
    blocks of members: the run ends cancelled with the members read so far, and says so (a 600,000-row
    upload with a 300-value group column analysed 10,000 members for minutes and never heard it). Asserted
    in blocks, not seconds."""
    from optrules.corels import rashomon_analysis

    monkeypatch.setattr(rashomon_analysis, "PREDICTION_CELLS", 1)  # one member a block
    parent = _compas_rulelist(client, 0.01)
    manager = client.app.state.manager
    original = rashomon_analysis.prediction_blocks
    after_cancel = []

    def blocks(groups, members, *arguments, **options):
        for k, block in enumerate(original(groups, members, *arguments, **options)):
            if len(members) > 1:  # (not the optimal list's own predictions)
                run = [r for r in manager.runs.values() if r.kind == "rashomon"][0]
                if run.cancel_requested:
                    after_cancel.append(k)
                elif k == 3:
                    manager.cancel(run.id)
            yield block

    monkeypatch.setattr(rashomon_analysis, "prediction_blocks", blocks)
    response = client.post(f"/api/runs/{parent['id']}/rashomon",
                           json={"params": {"epsilon_percent": 1, "group": "sex", "time_limit": 120}})
    run = wait(client, response.json()["id"], 120)
    assert run["status"] == "cancelled", run
    result = run["result"]
    shown = ("complete", "status", "size", "analysis", "multiplicity", "analysed")
    assert result["complete"] and result["analysis"], {k: result[k] for k in shown}  # the set is whole; its analysis is not
    assert "members" in result["analysis"] and "stopped (Ctrl-C or Cancel)" in result["analysis"]
    assert 0 < result["multiplicity"]["members"] < result["analysed"]
    assert after_cancel in ([], [0])  # after the cancel: at most the first block (the optimal list's) of the next analysis


def test_the_rashomon_set_of_a_run_with_required_features(client):
    body = {"table": "dataset:compas", "target": "two_year_recid", "model": "rulelist",
            "params": {"regularization": 0.02, "required": "sex", "time_limit": 30}}
    parent = wait(client, client.post("/api/runs", json=body).json()["id"])
    assert parent["status"] == "done", parent
    response = client.post(f"/api/runs/{parent['id']}/rashomon", json={"params": {"epsilon_percent": 2}})
    run = wait(client, response.json()["id"], 120)
    assert run["status"] == "done" and run["result"]["complete"], run
    assert run["result"]["optimum"] == pytest.approx(parent["result"]["certificate"]["objective"], abs=1e-12)
    assert all("sex=" in member["text"] for member in run["result"]["members"])


def test_bad_rashomon_requests_get_a_message(client):
    parent = _compas_rulelist(client, 0.05)
    url = f"/api/runs/{parent['id']}/rashomon"
    for params, fragment in [({"epsilon_percent": -1}, "epsilon_percent"), ({"epsilon_percent": "x"}, "number"),
                             ({"epsilon_percent": 500}, "epsilon_percent"), ({"group": "nope"}, "group"),
                             ({"group": "two_year_recid"}, "group"), ({"group": 3}, "group"),
                             ({"time_limit": 0}, "time_limit"), ({"lambda": 1}, "not a setting")]:
        response = client.post(url, json={"params": params})
        assert response.status_code == 400 and fragment in response.json()["error"], (params, response.text)
    assert client.post("/api/runs/999/rashomon", json={}).status_code == 404
    assert client.post(url, content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
    assert client.post(url, json={}, headers={"Origin": "http://evil.example"}).status_code == 403
    ruleset = client.post("/api/runs", json={"table": "dataset:compas", "target": "two_year_recid", "model": "ruleset",
                                             "params": {"complexity": 4, "max_degree": 1, "time_limit": 5}}).json()
    wait(client, ruleset["id"])
    response = client.post(f"/api/runs/{ruleset['id']}/rashomon", json={})
    assert response.status_code == 400 and "rule-list run" in response.json()["error"]


def test_cancel_a_rashomon_run(client):
    """A large set (50% of R* at lambda 0.005) stops on cancel with what it has and says below which
    objective it is complete."""
    parent = _compas_rulelist(client, 0.005)
    run_id = client.post(f"/api/runs/{parent['id']}/rashomon",
                         json={"params": {"epsilon_percent": 50, "time_limit": 120}}).json()["id"]
    deadline = time.time() + 30
    while client.get(f"/api/runs/{run_id}").json()["status"] != "running" and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    started = time.time()
    client.post(f"/api/runs/{run_id}/cancel")
    run = wait(client, run_id, 60)
    assert run["status"] == "cancelled" and time.time() - started < 30
    result = run["result"]
    assert not result["complete"] and result["status"] == "interrupted"
    assert result["complete_below"] < parent["result"]["certificate"]["objective"] * 1.5


# -- hostile requests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw", [
    b'{"table": "dataset:compas", "target": "two_year_recid", "params": {"time_limit": ' + b"9" * 450 + b"}}",
    b'{"table": "dataset:compas", "target": "two_year_recid", "params": {"time_limit": ' + b"9" * 5000 + b"}}",
    b'{"table": "dataset:compas", "target": "two_year_recid", "params": {"time_limit": "' + b"9" * 5000 + b'"}}',
    b'{"params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
])
def test_huge_numbers_and_deep_json_are_a_400(client, raw):
    response = client.post("/api/runs", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code in (400, 413), response.text
    assert len(response.json()["error"]) < 300
    assert client.get("/api/runs").json() == []


def test_a_json_body_has_a_size_limit(client):
    body = b'{"table": "dataset:compas", "target": "' + b"x" * (1 << 20) + b'"}'
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and "KB" in response.json()["error"]


def test_the_queue_of_runs_has_a_cap(client, monkeypatch):
    from optrules.web import runs as web_runs

    monkeypatch.setattr(web_runs, "MAX_QUEUED_RUNS", 3)
    # a search that runs its whole budget (a warm kernel cache certifies the default COMPAS list before the
    # posts end, and the queue never fills)
    run = {"table": "dataset:compas", "target": "two_year_recid",
           "params": {"time_limit": 30, "max_card": 3, "regularization": 0.0005}}
    answers = [client.post("/api/runs", json=run).status_code for _ in range(6)]  # one runs, three wait
    assert answers[:4] == [201] * 4 and answers[-1] == 429, answers
    for listed in client.get("/api/runs").json():
        client.post(f"/api/runs/{listed['id']}/cancel")


def test_other_cookies_do_not_hide_the_token():
    from optrules.web.app import _cookie

    name = "optrules-token-8000"
    for header in [f'prefs={{"a": 1, "b": [2]}}; {name}=secret; x=1', f"a[b]=1; {name}=secret",
                   f"theme=dark mode; {name}=secret", f'{name}="secret"', f"junk; ;=; {name}=secret"]:
        assert _cookie(header, name) == "secret", header
    assert _cookie("other=1", name) == ""


def test_responses_refuse_framing_and_sniffing(client):
    for path in ("/", "/api/datasets", "/static/app.js"):
        headers = client.get(path).headers
        assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"


def test_tokens_are_hidden_in_the_access_log():
    import logging

    from optrules.web.app import HideTokens

    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5000", "GET", "/?token=abc123&x=1", "1.1", 303), None)
    HideTokens().filter(record)
    assert "abc123" not in record.getMessage() and "token=***" in record.getMessage()


def test_a_wildcard_host_allows_the_machines_own_names():
    import socket

    from optrules.web.app import host_names

    assert set(host_names("127.0.0.1")) == {"127.0.0.1", "localhost", "::1"}
    names = host_names("0.0.0.0")
    assert socket.gethostname() in names and "127.0.0.1" in names


def test_a_token_file_keeps_the_token_out_of_the_process_list(tmp_path, monkeypatch):
    import importlib

    from optrules import cli

    seen = {}  # (the module as `optrules serve` will import it: another test may have reloaded it)
    def serve(*args, sock=None):
        seen.setdefault("args", args)
        sock.close()

    monkeypatch.setattr(importlib.import_module("optrules.web.app"), "serve", serve)
    path = tmp_path / "token"
    path.write_text("a-long-enough-secret-token\n")
    assert cli.main(["serve", "--token-file", str(path)]) == 0
    assert seen["args"][4] == "a-long-enough-secret-token"
    path.write_text("short")
    with pytest.raises(SystemExit, match="at least 16"):
        cli.main(["serve", "--token-file", str(path)])


def test_a_port_another_server_holds_is_an_error_before_any_link(capsys):
    """The port is taken before the link is printed: when another server listens there, the command says
    so and prints no link (which would lead to that server)."""
    import socket

    from optrules import cli

    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(SystemExit, match=f"cannot serve on 127.0.0.1:{port}.*--port chooses another"):
            cli.main(["serve", "--port", str(port)])
    assert "http://" not in capsys.readouterr().out


def test_wide_and_odd_uploads_get_a_message(client, monkeypatch):
    from optrules.web import runs as web_runs

    monkeypatch.setattr(web_runs, "MAX_COLUMNS", 50)
    wide = ",".join(f"c{j}" for j in range(60)) + "\n" + ",".join("1" * 60) + "\n"
    response = upload(client, (wide * 1).encode() + (",".join("0" * 60) + "\n").encode())
    assert response.status_code == 400 and "60 columns" in response.json()["error"]
    assert "command line" in response.json()["error"]
    response = upload(client, b"a,label,label\n1,0,0\n2,1,1\n3,0,0\n")
    assert response.status_code == 400 and "twice" in response.json()["error"]
    response = upload(client, ("x" * 600 + ",label\n1,0\n2,1\n3,0\n").encode())
    assert response.status_code == 400 and "600 characters" in response.json()["error"]
    response = upload(client, "a,b,label\n1,x,0\n2,y,1\n3,x,0\n4,y,1\n".encode("utf-16"))
    assert response.status_code == 200 and response.json()["columns"] == ["a", "b", "label"]


def test_a_preview_is_capped(client):
    from optrules.web.runs import PREVIEW_CELL_CHARS, PREVIEW_COLUMNS

    n_columns = PREVIEW_COLUMNS + 30
    header = ",".join(f"c{j}" for j in range(n_columns)) + ",label\n"
    rows = "".join(",".join(["y" * 500] * n_columns) + f",{k % 2}\n" for k in range(20))
    info = upload(client, (header + rows).encode()).json()
    assert len(info["columns"]) == n_columns + 1 and info["preview_columns"] == PREVIEW_COLUMNS
    assert all(len(row) == PREVIEW_COLUMNS for row in info["preview"])
    assert all(len(cell) <= PREVIEW_CELL_CHARS + 1 for row in info["preview"] for cell in row)


def test_a_sniffing_bomb_is_read_at_once():
    import tempfile

    from optrules.data.tables import TableError, read_table

    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
        handle.write(',"' * 32768)
    started = time.perf_counter()
    with pytest.raises(TableError):
        read_table(handle.name)
    assert time.perf_counter() - started < 2.0  # csv.Sniffer took 13.5 s on this sample


def test_a_large_upload_in_progress_leaves_the_server_answering(tmp_path):
    """A wide upload (5,000 columns) streamed slowly, then parsed and described: meanwhile every other
    request is answered within a second (the preview used to be built on the event loop: a 10^6-column
    upload stalled every request for 118 s)."""
    import http.client
    import os
    import socket
    import subprocess
    import sys
    import threading

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "a-test-token-of-some-length"
    server = subprocess.Popen([sys.executable, "-m", "optrules.cli", "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1", "OPTRULES_TOKEN": token})
    headers = {"Authorization": f"token {token}"}

    def get(path):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status

    try:
        deadline = time.time() + 30
        while True:
            try:
                assert get("/api/limits") == 200
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        rng = np.random.default_rng(0)
        rows = pd.DataFrame(rng.integers(0, 10, (300, 5_000)), columns=[f"c{j}" for j in range(5_000)])
        body_csv = rows.assign(label=rng.integers(0, 2, len(rows))).to_csv(index=False).encode()
        boundary = "optrulesboundary"
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.csv\"\r\n"
                "Content-Type: text/csv\r\n\r\n").encode()
        body = head + body_csv + f"\r\n--{boundary}--\r\n".encode()
        answer = {}

        def send_slowly():
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            connection.putrequest("POST", "/api/uploads")
            for key, value in {**headers, "Content-Type": f"multipart/form-data; boundary={boundary}",
                               "Content-Length": str(len(body))}.items():
                connection.putheader(key, value)
            connection.endheaders()
            step = len(body) // 20
            for start in range(0, len(body), step):
                connection.send(body[start:start + step])
                time.sleep(0.1)
            response = connection.getresponse()
            answer["status"] = response.status
            answer["body"] = response.read()

        uploader = threading.Thread(target=send_slowly)
        uploader.start()
        latencies = []
        while uploader.is_alive():
            started = time.perf_counter()
            assert get("/api/limits") == 200
            latencies.append(time.perf_counter() - started)
            time.sleep(0.05)
        uploader.join()
        assert answer["status"] == 200, answer
        assert len(json.loads(answer["body"])["columns"]) == 5_001
        assert len(latencies) > 10 and max(latencies) < 1.0, (len(latencies), max(latencies))
    finally:
        server.terminate()
        server.communicate(timeout=10)


def test_cancel_is_heard_while_a_wide_table_is_binarized(client):
    """A 6,000-column table binarizes for seconds: a cancel ends the run within a few seconds and the
    worker takes the next run (a 300,000-column run ignored Cancel and held the queue for minutes)."""
    rng = np.random.default_rng(1)
    wide = pd.DataFrame(rng.random((150, 6_000)).round(3), columns=[f"x{j}" for j in range(6_000)])
    wide["y"] = rng.integers(0, 2, 150)
    client.app.state.manager.uploads.max_file_bytes = 64 * 2**20
    info = upload(client, csv_bytes(wide)).json()
    run = client.post("/api/runs", json={"table": info["key"], "target": "y", "params": {"time_limit": 600}})
    assert run.status_code == 201, run.text
    run_id = run.json()["id"]
    deadline = time.time() + 30
    while client.get(f"/api/runs/{run_id}").json()["status"] != "running" and time.time() < deadline:
        time.sleep(0.02)
    cancelled_at = time.time()
    client.post(f"/api/runs/{run_id}/cancel")
    assert wait(client, run_id, 60)["status"] == "cancelled"
    assert time.time() - cancelled_at < 10
    quick = client.post("/api/runs", json={"table": "dataset:compas", "target": "two_year_recid",
                                           "params": {"regularization": 0.05}}).json()["id"]
    assert wait(client, quick)["status"] == "done"


@pytest.mark.parametrize("model, sent, expected", [
    ("rulelist", "", True), ("rulelist", "without", False), ("frl", "", False), ("frl", "with", True),
    ("ruleset", "without", False),
])
def test_the_negations_setting_reaches_the_estimator(model, sent, expected):
    from optrules.web.runs import build_estimator

    assert build_estimator(model, {"negations": sent}, None).negations is expected


def test_the_page_starts_from_the_declared_defaults():
    """The page's shared fields start where the form's declaration (and the command line, and Python) do:
    missing values a category, every thresholds mode offered, the declared one first."""
    import re
    from importlib import resources

    from optrules.parameters import THRESHOLD_MODES
    from optrules.web.runs import common_form

    page = resources.files("optrules.web").joinpath("static/index.html").read_text()
    form = {parameter.name: parameter for parameter in common_form()}
    checkbox = re.search(r'<input id="missing_as_category" type="checkbox"( checked)?>', page)
    assert checkbox and bool(checkbox.group(1)) == form["missing_as_category"].default is True
    options = re.findall(r'<option value="(\w+)">', re.search(r'<select id="thresholds">(.*?)</select>', page).group(1))
    assert options[0] == form["thresholds"].default and sorted(options) == sorted(THRESHOLD_MODES)
    assert [value for value, _ in form["thresholds"].choices] == options


def test_the_page_offers_a_target_only_when_a_column_is_named_like_one():
    """A passenger list ends with its fare and port, not with who survived: the page takes a column named
    like a target (target, label, class, outcome, y), else none (the user chooses, as --target asks)."""
    import numpy as np
    import pandas as pd

    from optrules.web.runs import Table, describe_table

    rng = np.random.default_rng(0)
    passengers = pd.DataFrame({"Survived": rng.integers(0, 2, 50), "Fare": rng.random(50) * 100,
                               "Embarked": rng.choice(list("SCQ"), 50)})
    assert describe_table("k", Table("p.csv", passengers))["target"] is None
    assert describe_table("k", Table("p.csv", passengers.assign(Label=rng.integers(0, 2, 50))))["target"] == "Label"
    from importlib import resources

    page = resources.files("optrules.web").joinpath("static/app.js").read_text()
    assert "choose the target column" in page and "info.columns[info.columns.length - 1]" not in page
