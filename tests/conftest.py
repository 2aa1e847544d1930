import os
from pathlib import Path

# The searches' parallel regions are short and many (a batch each): libgomp's threads spin while they wait
# for the next, and on a machine another process keeps busy a spinning thread takes the core a working one
# needs (a memory-budget test: 12.1 s beside a CPU-bound process, 4.4 s with passive waits). Set before
# numba starts its threading layer; the results do not depend on it (every thread count searches alike).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import pytest

SHARED = Path(os.environ.get("OPTRULES_SHARED", Path(__file__).resolve().parents[2] / "shared"))
COMPAS_DATA = SHARED / "data" / "compas" / "corels_data"


def shared_path(*parts) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set OPTRULES_SHARED)")
    return path


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def client():
    """The web app behind Starlette's test client, as the app's own page calls it (tests/web/)."""
    pytest.importorskip("httpx2")
    from starlette.testclient import TestClient

    from optrules.web.app import create_app
    from optrules.web.runs import RunManager

    app = create_app(RunManager(workers=1, max_upload_bytes=2 * 2**20), allowed_hosts=["testserver"])
    with TestClient(app, headers={"Origin": "http://testserver"}) as client:  # what the app's own page sends
        yield client
