import os
from pathlib import Path

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
