"""Files we write never lose what they replace: a write that fails part-way leaves the previous file byte for
byte and no temporary file behind (optrules.files.replacing, used by every command that writes)."""

import errno
import os
import stat
import subprocess
import sys

import pytest

from optrules.files import replacing, write_text

OLD = b'{"an earlier model": "' + b"x" * 20_000 + b'"}\n'


@pytest.fixture
def old_file(tmp_path):
    path = tmp_path / "model.json"
    path.write_bytes(OLD)
    path.chmod(0o640)
    return path


def _failing_writer(error):
    def write(temporary):
        with open(temporary, "w") as handle:
            handle.write("the new model, cut short " * 200)
            handle.flush()
            raise error
    return write


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt(),
                                   ValueError("a writer's own error")])
def test_a_failed_write_leaves_the_previous_file_and_no_temporary(old_file, error):
    with pytest.raises(type(error)):
        with replacing(old_file) as temporary:
            assert temporary.parent == old_file.parent and temporary != old_file
            _failing_writer(error)(temporary)
    assert old_file.read_bytes() == OLD
    assert sorted(p.name for p in old_file.parent.iterdir()) == ["model.json"]


def test_a_write_replaces_the_whole_file_with_its_permissions(old_file, tmp_path):
    write_text(old_file, "new\n")
    assert old_file.read_bytes() == b"new\n"
    assert stat.S_IMODE(old_file.stat().st_mode) == 0o640
    new = tmp_path / "new.txt"
    umask = os.umask(0o022)
    os.umask(umask)
    write_text(new, "first")
    assert new.read_text() == "first" and stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json", "new.txt"]


def test_a_link_is_written_through_and_a_device_directly(tmp_path, old_file):
    link = tmp_path / "link.json"
    link.symlink_to(old_file)
    write_text(link, "through the link")
    assert link.is_symlink() and old_file.read_text() == "through the link"
    with replacing(os.devnull) as path:
        assert str(path) == os.devnull  # not a regular file: nothing to replace, written as it is


def _run_limited(arguments: list[str], cwd, limit: int) -> subprocess.CompletedProcess:
    """``optrules ARGUMENTS`` in a process whose files may not grow past ``limit`` bytes (a full disk, as
    the write sees it: the write fails with EFBIG part-way)."""
    code = ("import resource, signal, sys\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
            "from optrules.cli import main\n"
            f"sys.exit(main({arguments!r}))\n")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["report", "export"])
def test_a_command_whose_write_fails_part_way_keeps_the_previous_file(tmp_path, command):
    """`optrules report`/`export` writing past a file-size limit: an error line, the previous file as it was
    (it was cut to the limit before)."""
    from optrules import RuleListClassifier, load_compas

    data = load_compas("A")
    model = RuleListClassifier(regularization=0.02, max_card=1, time_limit=60).fit(data.X, data.y)
    (tmp_path / "model.json").write_text(model.rule_list_.to_json())
    output = tmp_path / ("report.html" if command == "report" else "model.py")
    output.write_bytes(OLD)
    arguments = (["report", "model.json", "-o", output.name] if command == "report"
                 else ["export", "model.json", "--to", "python", "-o", output.name])
    assert len(OLD) > 1024
    done = _run_limited(arguments, tmp_path, 1024)
    assert done.returncode != 0, done.stdout
    assert "cannot write" in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert output.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model.json", output.name])
    assert _run_limited(arguments, tmp_path, 1 << 30).returncode == 0  # (with room, it is written)
    assert output.read_bytes() != OLD


def test_fit_output_whose_write_fails_keeps_the_previous_model(tmp_path, monkeypatch, capsys):
    """`optrules fit -o model.json` on a full disk (the sync fails): the previous model is left whole."""
    import optrules.files
    from optrules.cli import main

    path = tmp_path / "model.json"
    path.write_bytes(OLD)

    def full_disk(descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(optrules.files.os, "fsync", full_disk)
    with pytest.raises(SystemExit, match="cannot write .*No space left on device"):
        main(["fit", "--dataset", "compas", "-r", "0.02", "--max-card", "1", "-o", str(path)])
    assert path.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]
