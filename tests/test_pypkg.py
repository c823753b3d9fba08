"""The Python package as a package (pytest; tests/test_python.sh): its version is recio.h's, it finds its
library in the documented order under each platform's names, it is typed (py.typed, hints and
docstrings on recio.mx), and `import recio` works without NumPy. Installing it with pip is
tests/test_pip_install.sh."""
import inspect
import os
import re
import subprocess
import sys
import typing

import pytest

import recio
import recio.mx
from recio import _lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def recio_h_version():
    text = open(os.path.join(ROOT, "recio.h")).read()
    major = re.search(r"^#define RECIO_VERSION_MAJOR (\d+)$", text, re.M).group(1)
    minor = re.search(r"^#define RECIO_VERSION_MINOR (\d+)$", text, re.M).group(1)
    return "%s.%s.0" % (major, minor)


def test_version_is_recio_h():
    assert recio.__version__ == recio_h_version()
    assert not os.path.exists(os.path.join(ROOT, "python", "recio", "_version.py")), \
        "the tree has no _version.py: builds write it from recio.h"


def test_library_lookup_order(tmp_path, monkeypatch):
    monkeypatch.setattr(_lib.ctypes.util, "find_library", lambda name: None)  # whatever this machine has installed
    pkg = tmp_path / "site" / "recio"
    pkg.mkdir(parents=True)
    given = tmp_path / "given.so"
    given.write_bytes(b"")
    env = {"RECIO_LIBRARY": str(given)}
    assert _lib.find_library(str(pkg), env, "linux") == str(given), "no bundled copy: RECIO_LIBRARY"
    for platform, name in (("linux", "librecio.so"), ("darwin", "librecio.dylib"), ("win32", "recio.dll")):
        (pkg / name).write_bytes(b"")
        assert _lib.find_library(str(pkg), env, platform) == str(pkg / name), "%s: the bundled copy first" % platform
        assert _lib.find_library(str(pkg), {}, platform) == str(pkg / name)
    (pkg / "recio.dll").unlink()
    (pkg / "librecio.dll").write_bytes(b"")  # MinGW's name
    assert _lib.find_library(str(pkg), {}, "win32") == str(pkg / "librecio.dll")
    # make install's layout: PREFIX/lib/python3.X/dist-packages/recio beside PREFIX/lib/librecio.dylib
    inst = tmp_path / "prefix" / "lib" / "python3.11" / "dist-packages" / "recio"
    inst.mkdir(parents=True)
    (tmp_path / "prefix" / "lib" / "librecio.dylib").write_bytes(b"")
    assert _lib.find_library(str(inst), {}, "darwin") == str(tmp_path / "prefix" / "lib" / "librecio.dylib")
    with pytest.raises(OSError, match="librecio.dylib not found"):
        _lib.find_library(str(tmp_path / "nowhere" / "a" / "recio"), {}, "darwin")


def _public(module):
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) and obj.__module__ == module.__name__:
            yield name, obj
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and (inspect.isfunction(member) or isinstance(member, property)):
                    yield "%s.%s" % (name, attr), member.fget if isinstance(member, property) else member
            yield name + ".__init__", obj.__init__
        elif inspect.isfunction(obj) and obj.__module__ == module.__name__:
            yield name, obj


@pytest.mark.parametrize("module", [recio.mx.recordio, recio.mx.image, recio.mx.ndarray])
def test_mx_is_typed_and_documented(module):
    assert os.path.isfile(os.path.join(os.path.dirname(recio.__file__), "py.typed"))
    assert module.__doc__ and recio.mx.__doc__
    for name, obj in _public(module):
        assert inspect.getdoc(obj), "%s.%s has no docstring" % (module.__name__, name)
        if inspect.isfunction(obj):
            sig = inspect.signature(obj)
            hints = typing.get_type_hints(obj)  # every annotation resolves
            missing = [p for p in sig.parameters if p != "self" and p not in hints]
            assert not missing and "return" in hints, "%s.%s: no hint for %s" % (module.__name__, name, missing or "return")


def test_mx_docs_name_every_mxnet_name():
    doc = recio.mx.__doc__ + open(os.path.join(ROOT, "docs", "python.md")).read()
    for name in ("MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img", "imdecode",
                 "asnumpy", "read_idx", "write_idx", "keys", "seek", "tell", "reset", "mx.io", "NDArray"):
        assert name in recio.mx.__doc__, name
        assert name in doc, name


def test_import_without_numpy(tmp_path):
    """Records need no NumPy (pip does not require it, so an offline venv installs recio); arrays say
    what to install."""
    script = """
import sys
sys.modules["numpy"] = None  # as if it were not installed
import recio, recio.mx as mx
p, ix = sys.argv[1] + "/n.rec", sys.argv[1] + "/n.idx"
with recio.Writer(p) as w:
    w.write(b"abc")
assert list(recio.Reader(p)) == [b"abc"]
w = mx.recordio.MXIndexedRecordIO(ix, p, "w")
w.write_idx(3, mx.recordio.pack((0, 2.5, 7, 0), b"img"))
del w
r = mx.recordio.MXIndexedRecordIO(ix, p, "r")
h, s = mx.recordio.unpack(r.read_idx(3))
assert (h.flag, h.label, h.id, s) == (0, 2.5, 7, b"img"), (h, s)
try:
    mx.recordio.pack((0, [1, 2], 0, 0), b"")
except ImportError as e:
    print("ImportError:", e)
"""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=env).stdout.decode()
    assert out.startswith("ImportError: recio: this needs NumPy, which is not installed: 'pip install numpy'"), out
