"""The web app as a server: what uploads cost it, and how fast Cancel stops a run of each family.

Starts ``optrules serve`` in its own process (with its access token, as a user would) and measures,
through HTTP only:

* a chunked upload of 300 MB (no ``Content-Length``) against the 50 MB limit: how many bytes the
  client could send before the answer, the answer, and the server's peak memory (VmHWM) before and
  after;
* five uploads of bank-full replicated 10 times (452k rows, 46 MB): the server's resident memory
  after each, and what the upload folder holds;
* Cancel: for each family and table, a run with a 600 s budget is cancelled 0.3 s, 2 s and 6 s after it
  started running; reported is the time from the cancel request to the run being finished (polled
  every 20 ms). Target (issue 14): <= 2 s for every family.

Run by hand: ``python benchmarks/web_server.py [--quick]``; writes ``benchmarks/results/web_server.json``
and the section in its history file, ``benchmarks/history/`` (and the summary, ``BENCHMARKS.md``). Needs
``../shared`` beside the repository (or ``OPTRULES_SHARED``).
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from benchmarks_md import stamp, write_block

from optrules.files import write_text

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("OPTRULES_SHARED", HERE.parent.parent / "shared"))
RESULTS = HERE / "results" / "web_server.json"
FAMILY_PARAMS = {
    "rulelist": {"regularization": 0.001, "max_card": 2},
    "frl": {"w": 3, "C": 1e-6, "max_card": 2},
    "ruleset": {"complexity": 30, "max_card": 5},
}


class Server:
    def __init__(self, max_upload_mb=50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "optrules.cli", "serve", "--port", str(self.port), "--max-upload-mb",
             str(max_upload_mb)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.token = re.search(r"\?token=(\S+)", self.process.stdout.readline()).group(1)
        # the server logs every request: unread, its output filled the pipe and the server stopped at its
        # next line (a poll every 20 ms writes 64 KB in ~20 s); what is not the access log is shown at stop
        self.log: collections.deque[str] = collections.deque(maxlen=200)
        threading.Thread(target=self._drain, daemon=True).start()
        self.headers = {"Authorization": f"token {self.token}"}
        deadline = time.time() + 60
        while True:
            try:
                self.get("/api/limits")
                return
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)

    def _drain(self) -> None:
        for line in self.process.stdout:
            if not line.startswith("INFO:"):
                self.log.append(line)

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)

    def request(self, method, path, body=None, headers=None):
        connection = self.connection()
        connection.request(method, path, body=body, headers={**self.headers, **(headers or {})})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, (json.loads(data) if data else None)

    def get(self, path):
        return self.request("GET", path)[1]

    def memory(self) -> dict:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines())
        return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")}  # MB

    def upload(self, path: Path) -> tuple[int, dict]:
        boundary = uuid.uuid4().hex
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
                "Content-Type: text/csv\r\n\r\n").encode()
        body = head + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
        return self.request("POST", "/api/uploads", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})

    def chunked_upload(self, total_bytes: int) -> dict:
        """Send a chunked form whose file never ends, until the server answers or closes."""
        boundary = "xyz"
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall((f"POST /api/uploads HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                      f"Authorization: token {self.token}\r\nTransfer-Encoding: chunked\r\n"
                      f"Content-Type: multipart/form-data; boundary={boundary}\r\n\r\n").encode())
        payload = b"a,b\n" + b"1,2\n" * 16383
        chunk = f"{len(payload):x}\r\n".encode() + payload + b"\r\n"
        first = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n\r\n'.encode()
        sock.sendall(f"{len(first):x}\r\n".encode() + first + b"\r\n")
        sent, answer = 0, b""
        try:
            while sent < total_bytes:
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    break
                sock.sendall(chunk)
                sent += len(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(10)
        try:
            answer = sock.recv(65536)
        except OSError:
            pass
        sock.close()
        status = int(answer.split()[1]) if answer.startswith(b"HTTP/") else None
        return {"sent_mb": sent / 2**20, "status": status, "answer": answer.split(b"\r\n\r\n", 1)[-1].decode()[:200]}

    def run_and_cancel(self, table: str, target: str, model: str, delay: float) -> dict:
        body = json.dumps({"table": table, "target": target, "model": model,
                           "params": {**FAMILY_PARAMS[model], "time_limit": 600, "missing_as_category": True}})
        status, run = self.request("POST", "/api/runs", body, {"Content-Type": "application/json"})
        assert status == 201, run
        while self.get(f"/api/runs/{run['id']}")["status"] == "queued":
            time.sleep(0.02)
        time.sleep(delay)
        asked = time.perf_counter()
        self.request("POST", f"/api/runs/{run['id']}/cancel")
        while (detail := self.get(f"/api/runs/{run['id']}"))["status"] in ("queued", "running"):
            time.sleep(0.02)
        latency = time.perf_counter() - asked
        return {"table": table, "model": model, "delay_s": delay, "status": detail["status"],
                "latency_s": latency, "message": detail["message"][:120], "rss_mb": self.memory()["VmRSS"]}

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)  # (its output is the drain thread's to read, not communicate's)
        if self.log:  # what the server said beside its access log: a worker's traceback, say
            sys.stderr.write("server output:\n" + "".join(self.log))


def bank_times(k: int, folder: Path) -> Path:
    lines = (SHARED / "data" / "bank_marketing" / "bank-full.csv").read_text().splitlines(keepends=True)
    path = folder / f"bank-full-x{k}.csv"
    with path.open("w") as out:
        out.write(lines[0])
        for _ in range(k):
            out.writelines(lines[1:])
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one delay, fewer uploads")
    args = parser.parse_args()
    import tempfile

    results = {"stamp": stamp("python benchmarks/web_server.py" + (" --quick" if args.quick else ""))}
    with tempfile.TemporaryDirectory() as folder:
        big = bank_times(10, Path(folder))
        server = Server()
        try:
            results["idle"] = server.memory()
            results["chunked"] = {**server.chunked_upload(300 * 2**20), **{"after": server.memory()}}
            print("chunked 300 MB:", results["chunked"])
            uploads = []
            for k in range(2 if args.quick else 5):
                status, info = server.upload(big)
                assert status == 200, info
                folder_mb = sum(p.stat().st_size for p in Path(tempfile.gettempdir()).glob("optrules-uploads-*/*")) / 2**20
                uploads.append({"n": k + 1, "key": info["key"], "rows": info["n_rows"], **server.memory(),
                                "upload_folders_mb": folder_mb})
                print("upload", uploads[-1])
            results["uploads"] = uploads
            results["upload_mb"] = big.stat().st_size / 2**20
            tables = [(uploads[-1]["key"], "y", "bank-full x10")]
            status, compas = server.upload(SHARED / "data" / "compas" / "compas-scores-two-years.csv")
            assert status == 200, compas
            tables.append((compas["key"], "two_year_recid", "compas (raw)"))
            cancels = []
            for key, target, name in tables:
                for model in FAMILY_PARAMS:
                    for delay in ((2.0,) if args.quick else (0.3, 2.0, 6.0)):
                        row = server.run_and_cancel(key, target, model, delay)
                        row["table"] = name
                        cancels.append(row)
                        print(f"{name:14} {model:9} cancel after {delay:4.1f} s: {row['status']} in "
                              f"{row['latency_s']:.2f} s ({row['message']})")
            results["cancel"] = cancels
            results["end"] = server.memory()
        finally:
            server.stop()
    RESULTS.parent.mkdir(exist_ok=True)
    write_text(RESULTS, json.dumps(results, indent=2))
    write_block("web-server", render(results), "The web app as a server: uploads and Cancel")


def render(results: dict) -> str:
    chunked, uploads = results["chunked"], results["uploads"]
    lines = [
        f"{results['stamp']} `optrules serve` in its own process, driven over HTTP with its token.",
        "",
        f"- Chunked upload of 300 MB without a size (limit 50 MB): answer {chunked['status']} after the client "
        f"sent {chunked['sent_mb']:.1f} MB; server peak memory {results['idle']['VmHWM']:.0f} MB before, "
        f"{chunked['after']['VmHWM']:.0f} MB after.",
        f"- Uploads of bank-full x10 ({uploads[0]['rows']:,} rows, {results['upload_mb']:.1f} MB), one after the "
        "other: server memory (MB) " + ", ".join(f"{u['VmRSS']:.0f}" for u in uploads)
        + f"; the upload folder holds {uploads[-1]['upload_folders_mb']:.0f} MB.",
        "",
        "| table | family | cancelled after (s) | status | cancel to finished (s) |",
        "|---|---|---:|---|---:|",
    ]
    for row in results["cancel"]:
        lines.append(f"| {row['table']} | {row['model']} | {row['delay_s']:.1f} | {row['status']} | {row['latency_s']:.2f} |")
    worst = max(row["latency_s"] for row in results["cancel"])
    lines += ["", f"Longest cancel: {worst:.2f} s."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
