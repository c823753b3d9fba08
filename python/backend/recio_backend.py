"""recio's PEP 517 build backend: `pip install .` and `pip wheel .` at the repository root.

It compiles recio_impl.c into the package's own shared library (recio/librecio.so, .dylib or .dll)
and writes the wheel itself, so a build needs a C compiler and stb_image.h but no Python package at
all: not setuptools, not wheel. That is what lets `pip install --no-build-isolation .` work in a venv
of Debian's python3 (its ensurepip gives pip and setuptools but no wheel), and a build without
--no-build-isolation work with no package index (nothing to download).

JPEG: libjpeg-turbo (-DRECIO_TURBOJPEG -ljpeg) when the compiler can build and link a program using
it (the Makefile's probe), else stb_image. Choose with RECIO_JPEG=turbo|stb or
`pip install . -C jpeg=stb`. stb_image.h: RECIO_STB (or -C stb=DIR), else the usual include folders.
Remote paths (s3://, http(s)://: docs/remote.md): libcurl >= 7.75 (-DRECIO_CURL -lcurl) when a
program using it builds and links, as the Makefile's default build; RECIO_CURL=yes insists, no
leaves it out (or -C curl=no). Without it, a remote path says the build has no remote filesystems.
CC, CFLAGS and LDFLAGS are honoured. The compiled library is kept under build/python/ keyed by its
sources and command, so a second build of the same tree (pip install, then pip wheel) reuses it.

The version is recio.h's RECIO_VERSION_MAJOR.MINOR.0, as the Makefile's; the wheel carries it in
recio/_version.py and its metadata.
"""
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "recio"
SUMMARY = "RecordIO (MXNet/dmlc-core) datasets to model-ready tensors: records, splits, image transforms, iterators"
# What an sdist carries: enough to build the wheel again (tests, tools and benchmarks stay in the repository).
SDIST_FILES = ["pyproject.toml", "recio.h", "recio_impl.c", "README.md", "docs/python.md", "python/backend/recio_backend.py"]
STB_DIRS = ["/usr/include/stb", "/usr/local/include/stb", "/usr/include", "/usr/local/include",
            "/opt/homebrew/include/stb", "/opt/homebrew/include"]
# The Makefile's probe: CURLOPT_AWS_SIGV4 is libcurl 7.75's, which recio.h requires.
CURL_PROBE = ("#include <curl/curl.h>\nint main(void){return (int)curl_easy_setopt(curl_easy_init(),"
              "CURLOPT_AWS_SIGV4,\"aws:amz\");}\n")
TURBO_PROBE = ("#include <stdio.h>\n#include <jpeglib.h>\nint main(void){struct jpeg_decompress_struct d;"
               "JDIMENSION x=0,w=1;jpeg_crop_scanline(&d,&x,&w);return 0;}\n")


def _fail(msg):
    raise SystemExit("recio: " + msg)


def version():
    """MAJOR.MINOR.0 from recio.h's RECIO_VERSION_MAJOR / RECIO_VERSION_MINOR."""
    with open(os.path.join(ROOT, "recio.h")) as f:
        text = f.read()
    got = dict(re.findall(r"^#define RECIO_VERSION_(MAJOR|MINOR) (\d+)\s*$", text, re.M))
    if len(got) != 2:
        _fail("recio.h has no RECIO_VERSION_MAJOR / RECIO_VERSION_MINOR")
    return "%s.%s.0" % (got["MAJOR"], got["MINOR"])


def _lib_name():
    if sys.platform == "darwin":
        return "librecio.dylib"
    if sys.platform in ("win32", "cygwin", "msys"):
        return "recio.dll"
    return "librecio.so"


def _setting(config, key, env):
    return (config or {}).get(key) or os.environ.get(env) or ""


def _compiler():
    cc = os.environ.get("CC") or next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if not cc or not shutil.which(cc.split()[0]):
        _fail("no C compiler found (CC=%s): install one (Debian: apt-get install gcc), or set CC" % (cc or ""))
    return cc.split()


def _stb_dir(config):
    given = _setting(config, "stb", "RECIO_STB")
    for d in ([given] if given else STB_DIRS):
        if os.path.isfile(os.path.join(d, "stb_image.h")):
            return d
    return None


def _probe(cc, tmp, name, source, lib):
    """Whether cc builds and links source with lib."""
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    return subprocess.run(cc + [src, "-o", os.path.join(tmp, name), lib],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


# The optional libraries, each chosen by one rule: linked when a probe program builds with it
# (the Makefile's probes), left out when asked, and an error when insisted on and missing.
# name: (config key, variable, the word that insists, the word that leaves it out, what they mean,
#        probe source, link flag, what the probe needs)
OPTIONAL = {
    "turbo": ("jpeg", "RECIO_JPEG", "turbo", "stb", "turbo (libjpeg-turbo) or stb (stb_image)", TURBO_PROBE, "-ljpeg",
              "libjpeg-turbo >= 1.5 (Debian: apt-get install libjpeg62-turbo-dev)"),
    "curl": ("curl", "RECIO_CURL", "yes", "no", "yes (s3:// and http(s):// paths through libcurl) or no", CURL_PROBE,
             "-lcurl", "libcurl >= 7.75 (Debian: apt-get install libcurl4-openssl-dev)"),
}


def _optional(cc, config, tmp, name):
    """True when library name (OPTIONAL) is chosen and links."""
    key, env, yes, no, words, source, lib, needs = OPTIONAL[name]
    want = _setting(config, key, env).lower()
    if want not in ("", "auto", yes, no):
        _fail("%s=%s: say %s" % (key, want, words))
    if want == no:
        return False
    ok = _probe(cc, tmp, name + "_probe", source, lib)
    if want == yes and not ok:
        _fail("%s=%s: %s cannot build a program with %s" % (key, yes, " ".join(cc), needs))
    return ok


def _command(cc, stb, turbo, out, curl=False):
    """The compile-and-link command of the shared library."""
    shared = ["-dynamiclib"] if sys.platform == "darwin" else ["-shared"]
    pic = [] if sys.platform in ("win32", "cygwin", "msys") else ["-fPIC"]
    threads = [] if sys.platform in ("win32", "cygwin", "msys") else ["-lpthread"]
    jpeg = (["-DRECIO_TURBOJPEG"], ["-ljpeg"]) if turbo else ([], [])
    remote = (["-DRECIO_CURL"], ["-lcurl"]) if curl else ([], [])
    return (cc + ["-std=c99", "-O2"] + pic + shared + ["-I" + ROOT, "-I" + stb, "-D_FILE_OFFSET_BITS=64", "-DRECIO_THREADS"]
            + jpeg[0] + remote[0] + os.environ.get("CFLAGS", "").split() + [os.path.join(ROOT, "recio_impl.c"), "-o", out]
            + os.environ.get("LDFLAGS", "").split() + jpeg[1] + remote[1] + ["-lm"] + threads)


def build_library(config=None):
    """The path of a freshly built (or cached) shared library; SystemExit with what to install when it
    cannot be built."""
    cc = _compiler()
    stb = _stb_dir(config)
    with tempfile.TemporaryDirectory() as tmp:
        turbo = _optional(cc, config, tmp, "turbo")
        curl = _optional(cc, config, tmp, "curl")
    if stb is None:
        given = _setting(config, "stb", "RECIO_STB")
        _fail("cannot build the C library: stb_image.h not found (looked in %s). recio decodes PNG and BMP%s "
              "with stb_image: install it (Debian/Ubuntu: apt-get install libstb-dev) or set "
              "RECIO_STB=/folder/with/stb_image.h. libjpeg-turbo: %s."
              % (", ".join([given] if given else STB_DIRS), "" if turbo else ", and JPEG here,",
                 "found (it decodes JPEG only)" if turbo else
                 "not found either (apt-get install libjpeg62-turbo-dev for faster JPEG decoding)"))
    name = _lib_name()
    key = hashlib.sha256()
    for f in ("recio.h", "recio_impl.c"):
        with open(os.path.join(ROOT, f), "rb") as fh:
            key.update(fh.read())
    key.update(" ".join(_command(cc, stb, turbo, name, curl)).encode())
    key.update(subprocess.run(cc + ["--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout)
    cache = os.path.join(ROOT, "build", "python", key.hexdigest()[:16])
    lib = os.path.join(cache, name)
    if os.path.isfile(lib):
        return lib, turbo
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError:  # a read-only tree: build in a scratch folder
        cache = tempfile.mkdtemp(prefix="recio-build-")
        lib = os.path.join(cache, name)
    part = lib + ".part.%d" % os.getpid()
    cmd = _command(cc, stb, turbo, part, curl)
    print("recio: building %s with %s (JPEG through %s; remote paths %s)"
          % (name, " ".join(cc), "libjpeg-turbo" if turbo else "stb_image",
             "through libcurl" if curl else "left out: no libcurl >= 7.75 (apt-get install libcurl4-openssl-dev)"),
          file=sys.stderr)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        _fail("compiling the library failed:\n%s\n%s" % (" ".join(cmd), r.stdout.decode(errors="replace")))
    os.replace(part, lib)
    _prune(os.path.dirname(cache))
    return lib, turbo


def _prune(folder, keep=4):
    """Drop all but the newest `keep` cached builds (older sources, other options)."""
    try:
        old = sorted((os.path.join(folder, d) for d in os.listdir(folder)), key=os.path.getmtime)[:-keep]
    except OSError:
        return
    for d in old:
        shutil.rmtree(d, ignore_errors=True)


# ---- metadata and archives ---------------------------------------------------------------------

def _metadata():
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        long = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT OR Unlicense\n"
            "Requires-Python: >=3.8\n"
            "Provides-Extra: numpy\nRequires-Dist: numpy; extra == \"numpy\"\n"
            "Provides-Extra: torch\nRequires-Dist: numpy; extra == \"torch\"\nRequires-Dist: torch; extra == \"torch\"\n"
            "Description-Content-Type: text/markdown\n\n%s" % (NAME, version(), SUMMARY, long))


def _licence():
    with open(os.path.join(ROOT, "recio.h")) as f:
        text = f.read()
    i = text.rfind("This software is available under 2 licenses")
    return text[i:text.rfind("*/")].rstrip("\n-") + "\n" if i >= 0 else "MIT or public domain: see recio.h\n"


def _package_files():
    """(path in the wheel, path on disk) of the Python package's sources and py.typed."""
    src = os.path.join(ROOT, "python", NAME)
    out = []
    for d, dirs, files in os.walk(src):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if (f.endswith(".py") or f == "py.typed") and f != "_version.py":
                p = os.path.join(d, f)
                out.append((NAME + "/" + os.path.relpath(p, src).replace(os.sep, "/"), p))
    return out


def _tag():
    return "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


def _epoch():
    """Archive timestamps: SOURCE_DATE_EPOCH, else 1980-01-01 (the earliest a zip holds), so that the
    same tree gives the same archives."""
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _stamp():
    return time.gmtime(_epoch())[:6]


def _dist_info():
    return "%s-%s.dist-info" % (NAME, version())


def _write_metadata_dir(into):
    d = os.path.join(into, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return os.path.basename(d)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_metadata_dir(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """recio-VERSION-py3-none-PLATFORM.whl: the package, its library, _version.py and the metadata.
    Tagged py3-none: the library is loaded through ctypes, not as a CPython extension."""
    lib, _ = build_library(config_settings)
    name = "%s-%s-%s.whl" % (NAME, version(), _tag())
    info = _dist_info()
    entries = [(arc, open(p, "rb").read()) for arc, p in _package_files()]
    entries.append((NAME + "/_version.py", ('"""recio.h\'s version, written by the build."""\n__version__ = "%s"\n'
                                           % version()).encode()))
    entries.append((NAME + "/" + _lib_name(), open(lib, "rb").read()))
    entries.append((info + "/METADATA", _metadata().encode("utf-8")))
    entries.append((info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: recio_backend %s\nRoot-Is-Purelib: false\nTag: %s\n"
                                      % (version(), _tag())).encode()))
    entries.append((info + "/LICENSE", _licence().encode()))
    entries.append((info + "/top_level.txt", (NAME + "\n").encode()))
    record = io.StringIO()
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            zi = zipfile.ZipInfo(arc, _stamp())
            zi.external_attr = (0o755 if arc.endswith(_lib_name()) else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.write("%s,sha256=%s,%d\n" % (arc, digest, len(data)))
        record.write("%s/RECORD,,\n" % info)
        zi = zipfile.ZipInfo(info + "/RECORD", _stamp())
        zi.external_attr = 0o644 << 16
        z.writestr(zi, record.getvalue(), zipfile.ZIP_DEFLATED)
    os.replace(path + ".part", path)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """recio-VERSION.tar.gz: the header, its implementation file, the Python package and this backend."""
    base = "%s-%s" % (NAME, version())
    files = [(f, os.path.join(ROOT, f)) for f in SDIST_FILES]
    files += [("python/" + arc, p) for arc, p in _package_files()]
    os.makedirs(sdist_directory, exist_ok=True)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    mtime = _epoch()

    def add(t, arc, data, mode=0o644):
        ti = tarfile.TarInfo(base + "/" + arc)
        ti.size, ti.mode, ti.mtime = len(data), mode, mtime
        t.addfile(ti, io.BytesIO(data))

    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as t:
        for arc, p in files:
            with open(p, "rb") as f:
                add(t, arc, f.read())
        add(t, "PKG-INFO", _metadata().encode("utf-8"))
    os.replace(path + ".part", path)
    return os.path.basename(path)
