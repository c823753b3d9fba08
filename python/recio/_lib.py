"""ctypes declarations of the recio.h functions and structs the package uses.

The structs mirror recio.h field for field; tests/test_python.py checks them against the C library
(an iterator batch's shape, labels and checksum must come out as `recio iter` prints them).
"""
import ctypes
import ctypes.util
import os
import re
import sys
from ctypes import (POINTER, Structure, c_char, c_char_p, c_float, c_int, c_size_t, c_uint,
                    c_uint32, c_uint64, c_void_p)

# recio_err
OK, END = 0, 1
(ERR_ARG, ERR_NOMEM, ERR_IO, ERR_CORRUPT, ERR_TOO_BIG, ERR_FORMAT, ERR_DECODE, ERR_SPEC, ERR_UNSUPPORTED, ERR_LIMIT,
 ERR_SMALL) = range(-1, -12, -1)

# recio_dtype, recio_layout, recio_last_batch, split modes
U8, F32, I8, F16 = 0, 1, 2, 3
HWC, CHW = 0, 1
LAST_PAD, LAST_DISCARD, LAST_ROLL_OVER = 0, 1, 2
SPLIT_BYTES, SPLIT_INDEX = 0, 1
SHUFFLE_NONE, SHUFFLE_FULL = 0, 1
SPLIT_UNKNOWN = (1 << 64) - 1
LABEL_ARRAY = 0x80000000  # RECIO_LABEL_ARRAY: or'ed into nlabels, flag = nlabels for one label too
FNV1A_INIT = 0xcbf29ce484222325
ERRMSG_SIZE = 512  # RECIO_ERRMSG_SIZE


class Allocator(Structure):
    _fields_ = [("alloc", c_void_p), ("free", c_void_p), ("user", c_void_p)]


class Image(Structure):
    _fields_ = [("width", c_int), ("height", c_int), ("channels", c_int), ("dtype", c_int), ("layout", c_int),
                ("stride", c_size_t), ("data", c_void_p), ("owned", c_void_p), ("alloc", Allocator)]


class TransformInfo(Structure):
    _fields_ = [("shape", Image), ("scratch_size", c_size_t)]


class CacheInfo(Structure):
    _fields_ = [("mode", c_int), ("prefix_ops", c_uint), ("records", c_uint64), ("bytes", c_uint64), ("hits", c_uint64),
                ("misses", c_uint64), ("why", ctypes.c_char * ERRMSG_SIZE)]


class IterBad(Structure):
    _fields_ = [("file", c_char_p), ("offset", c_uint64), ("what", ctypes.c_char * ERRMSG_SIZE)]


class Batch(Structure):
    _fields_ = [("data", c_void_p), ("labels", c_void_p), ("ids", c_void_p), ("keys", c_void_p), ("sums", c_void_p),
                ("count", c_uint), ("pad", c_uint), ("batch", c_uint), ("item_bytes", c_size_t), ("item", Image),
                ("label_width", c_uint), ("epoch", c_uint64), ("index", c_uint64), ("skipped", c_uint),
                ("workers", c_uint), ("label_counts", c_void_p), ("objects", c_void_p), ("masks", c_void_p),
                ("soft_labels", c_void_p), ("lam", c_float), ("mix", c_int)]


class DecodeDesc(Structure):  # recio_decode_desc
    _fields_ = [("bytes", c_void_p), ("size", c_size_t), ("channels", c_int), ("min_short", c_int),
                ("transform", c_void_p), ("mask", c_int), ("check", c_int), ("alloc", Allocator), ("errmsg", c_void_p)]


class TransformDesc(Structure):  # recio_transform_desc
    _fields_ = [("alloc", Allocator), ("errmsg", c_void_p)]


class ApplyDesc(Structure):  # recio_apply_desc
    _fields_ = [("image", POINTER(Image)), ("bytes", c_void_p), ("size", c_size_t), ("channels", c_int),
                ("full_scale", c_int), ("out", POINTER(Image)), ("seed", c_uint64), ("scratch", c_void_p),
                ("scratch_size", c_size_t), ("boxes", POINTER(c_float)), ("count", c_int), ("stride", c_int),
                ("boxes_out", POINTER(c_float)), ("count_out", POINTER(c_int)), ("mask", POINTER(Image)),
                ("mask_out", POINTER(Image)), ("mask_fill", c_int), ("errmsg", c_void_p)]


MASK_FILL_ZERO = -1


class Record(Structure):
    _fields_ = [("data", c_void_p), ("size", c_size_t), ("offset", c_uint64)]


class IRecord(Structure):
    _fields_ = [("flag", c_uint32), ("label", c_float), ("id", c_uint64), ("id2", c_uint64), ("labels", c_void_p),
                ("image", c_void_p), ("image_size", c_size_t), ("mask", c_void_p), ("mask_size", c_size_t),
                ("nlabels", c_uint32), ("all_labels", c_void_p)]


class IO(Structure):
    _fields_ = [("read", c_void_p), ("write", c_void_p), ("seek", c_void_p), ("size", c_void_p), ("sync", c_void_p),
                ("close", c_void_p), ("user", c_void_p), ("writev", c_void_p), ("error", c_void_p)]


class ReaderDesc(Structure):
    _fields_ = [("io", IO), ("name", c_char_p), ("buffer_size", c_size_t), ("use_mmap", c_int), ("errmsg", c_void_p),
                ("alloc", Allocator), ("fs", c_void_p)]


class WriterDesc(Structure):
    _fields_ = [("io", IO), ("name", c_char_p), ("index_path", c_char_p), ("atomic", c_int), ("buffer_size", c_size_t),
                ("background", c_int), ("errmsg", c_void_p), ("alloc", Allocator), ("fs", c_void_p), ("mem", c_void_p),
                ("tmp_names", c_void_p)]


class WriterItem(Structure):
    _fields_ = [("data", c_void_p), ("size", c_size_t), ("key", c_uint64)]


class SplitDesc(Structure):
    _fields_ = [("mode", c_int), ("index_path", c_char_p), ("shuffle", c_int), ("seed", c_uint64), ("epoch", c_uint64),
                ("chunk_records", c_uint32), ("window_chunks", c_uint32), ("equalize", c_int), ("ordinals", c_int),
                ("use_mmap", c_int), ("buffer_size", c_size_t), ("fs", c_void_p),
                ("errmsg", c_void_p), ("alloc", Allocator), ("key_begin", c_uint64), ("key_end", c_uint64)]


# recio_iter_desc: its sub-descs, each as recio.h declares it (recio/__init__.py's _DESC fills them)
class IterItemDesc(Structure):
    _fields_ = [("spec", c_char_p), ("channels", c_int), ("transform", c_void_p), ("user", c_void_p),
                ("item_bytes", c_size_t), ("mean_img", c_char_p), ("mean_scale", c_float), ("seed_aug", c_uint64)]


class IterLabelDesc(Structure):
    _fields_ = [("width", c_uint), ("pad_set", c_int), ("pad_value", c_float), ("strict", c_int), ("detection", c_int),
                ("masks", c_int), ("mask_fill", c_int), ("imglist", c_char_p)]


class IterMixDesc(Structure):
    _fields_ = [("mixup_alpha", c_float), ("cutmix_alpha", c_float), ("prob", c_float), ("num_classes", c_uint)]


class IterRunDesc(Structure):
    _fields_ = [("batch", c_uint), ("last_batch", c_int), ("workers", c_uint), ("prefetch", c_uint),
                ("shuffle_buffer", c_size_t), ("checksums", c_int), ("skip_bad", c_int), ("cache_bytes", c_size_t)]


class IterDesc(Structure):
    _fields_ = [("uris", c_char_p), ("rank", c_uint), ("nsplit", c_uint), ("rotate_shards", c_int), ("source", SplitDesc),
                ("item", IterItemDesc), ("labels", IterLabelDesc), ("mix", IterMixDesc), ("run", IterRunDesc),
                ("errmsg", c_void_p), ("alloc", Allocator)]


class IterInfo(Structure):
    _fields_ = [("records", c_uint64), ("batches", c_uint64), ("item", Image), ("item_bytes", c_size_t),
                ("skipped", c_uint64), ("bad", POINTER(IterBad)), ("nbad", c_uint), ("cache", CacheInfo)]


class SplitWhere(Structure):
    _fields_ = [("file", c_uint), ("path", c_char_p), ("ordinal", c_uint64), ("key", c_uint64), ("index", c_uint64),
                ("seq", c_uint64), ("repeat", c_int)]


class SplitInfo(Structure):
    _fields_ = [("begin", c_uint64), ("end", c_uint64), ("count", c_uint64), ("total_bytes", c_uint64),
                ("nfiles", c_uint), ("files", POINTER(c_char_p)), ("where", SplitWhere)]


class IndexEntry(Structure):
    _fields_ = [("key", c_uint64), ("offset", c_uint64)]


class Index(Structure):
    _fields_ = [("entries", POINTER(IndexEntry)), ("count", c_size_t), ("alloc", Allocator)]


class IndexDesc(Structure):
    _fields_ = [("text", c_char_p), ("size", c_size_t), ("errmsg", c_void_p), ("alloc", Allocator), ("fs", c_void_p)]


class FsStat(Structure):  # recio_fs_stat
    _fields_ = [("kind", c_int), ("size", c_uint64)]


FS_NONE, FS_FILE, FS_DIR, FS_OTHER = 0, 1, 2, 3  # recio_fs_kind
FS_INFO = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, POINTER(FsStat), c_void_p)  # recio_fs.info


class Fs(Structure):  # recio_fs: a row of the filesystem table (only read here: its info hook is called)
    _fields_ = [("scheme", c_char_p), ("user", c_void_p), ("flags", c_uint), ("open_read", c_void_p), ("info", FS_INFO),
                ("list", c_void_p), ("create", c_void_p), ("commit", c_void_p), ("discard", c_void_p),
                ("remove", c_void_p), ("map", c_void_p), ("unmap", c_void_p), ("next", c_void_p)]


class LstItem(Structure):
    _fields_ = [("index", c_uint64), ("labels", POINTER(c_float)), ("nlabels", c_uint32), ("path", c_char_p),
                ("mask", c_char_p)]


class Lst(Structure):
    _fields_ = [("items", POINTER(LstItem)), ("count", c_size_t), ("storage", c_void_p), ("alloc", Allocator),
                ("skipped", c_size_t)]


class LstDesc(Structure):
    _fields_ = [("text", c_char_p), ("size", c_size_t), ("errmsg", c_void_p), ("on_bad_line", c_void_p),
                ("user", c_void_p), ("mask_column", c_int), ("alloc", Allocator), ("fs", c_void_p)]


def library_names(platform=None):
    """The file names librecio has on a platform (sys.platform by default): the names a build gives it
    there, the unversioned one first."""
    platform = platform or sys.platform
    if platform == "darwin":
        return ["librecio.dylib"]
    if platform in ("win32", "cygwin", "msys"):
        return ["recio.dll", "librecio.dll"]  # MSVC's name, then MinGW's
    return ["librecio.so", "librecio.so.%d" % VERSION[0]]


def _candidates(pkg_dir, environ, platform=None):
    """Where librecio may be, in order: the copy built into this package (a wheel, `pip install .`),
    RECIO_LIBRARY, the build tree this package sits in (make), the lib folder three levels above an
    installed copy (make install: PREFIX/lib/python3.X/dist-packages/recio -> PREFIX/lib), the loader's
    search path, /usr/local/lib and /usr/lib. A bundled library comes first because it was built from
    the same recio.h as this package's struct mirrors; RECIO_LIBRARY is for a package without one."""
    names = library_names(platform)
    bundled = [os.path.join(pkg_dir, n) for n in names]
    env = environ.get("RECIO_LIBRARY")
    if env:
        return bundled + [env]  # an explicit choice is never second-guessed (after a bundled copy)
    root = os.path.dirname(os.path.dirname(pkg_dir))  # python/recio -> the source tree
    prefix_lib = os.path.dirname(os.path.dirname(os.path.dirname(pkg_dir)))
    out = bundled + [os.path.join(root, "build", n) for n in names] + [os.path.join(prefix_lib, n) for n in names]
    found = ctypes.util.find_library("recio")
    if found:
        out.append(found)
    return out + [os.path.join(d, n) for d in ("/usr/local/lib", "/usr/lib") for n in names]


def find_library(pkg_dir=None, environ=None, platform=None):
    """The path of the librecio this package loads (see _candidates), or raise OSError saying where it looked."""
    pkg_dir = pkg_dir or os.path.dirname(os.path.abspath(__file__))
    environ = os.environ if environ is None else environ
    cands = _candidates(pkg_dir, environ, platform)
    for c in cands:
        if os.path.isfile(c):
            return c
    if environ.get("RECIO_LIBRARY"):
        return cands[-1]  # as given: loading it says what is wrong with it
    for c in cands:
        if os.sep not in c and c.startswith("lib"):  # find_library gives a bare soname
            return c
    raise OSError("recio: %s not found (looked in %s): 'pip install .' in the recio tree builds it into the "
                  "package; or run 'make' there, 'make install', or set RECIO_LIBRARY=/path/to/%s"
                  % (library_names(platform)[0], ", ".join(cands), library_names(platform)[0]))


def _version_of(pkg_dir):
    """recio.h's version as MAJOR.MINOR.0 (the Makefile's): from _version.py, which `pip install`/`pip
    wheel` and `make install` write from recio.h, else from the recio.h of the source tree the package
    sits in (PYTHONPATH=python). recio.h's RECIO_VERSION_* macros are the one source of truth."""
    try:
        from ._version import __version__ as v
        return v
    except ImportError:
        pass
    got = {}
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(pkg_dir)), "recio.h")) as f:
            for line in f:
                m = re.match(r"#define RECIO_VERSION_(MAJOR|MINOR) (\d+)\s*$", line)
                if m:
                    got[m.group(1)] = m.group(2)
                if len(got) == 2:
                    return "%s.%s.0" % (got["MAJOR"], got["MINOR"])
    except OSError:
        pass
    return "0+unknown"  # a copied package without _version.py and away from its tree


__version__ = _version_of(os.path.dirname(os.path.abspath(__file__)))
VERSION = tuple(int(x) if x.isdigit() else 0 for x in __version__.split("+")[0].split("."))


def _declare(lib):
    P, S, U64, I, E = c_void_p, c_size_t, c_uint64, c_int, c_int
    sigs = {
        "recio_strerror": (c_char_p, [E]),
        "recio_fnv1a64": (U64, [U64, P, S]),
        "recio_checksum": (U64, [P, S, S]),
        "recio_seed_for": (U64, [U64, U64, U64]),
        "recio_batch_checksum": (U64, [POINTER(Batch), c_int]),
        # iterator
        "recio_iter_open": (E, [POINTER(P), POINTER(IterDesc)]),
        "recio_iter_set_spec": (E, [P, c_char_p]),
        "recio_iter_next": (E, [P, POINTER(Batch)]),
        "recio_iter_reset": (E, [P]),
        "recio_iter_save": (E, [P, P, S, POINTER(S)]),
        "recio_iter_restore": (E, [P, P, S]),
        "recio_iter_errmsg": (c_char_p, [P]),
        "recio_iter_close": (None, [P]),
        "recio_iter_stats": (None, [P, POINTER(IterInfo)]),
        # transforms
        "recio_transform_parse_desc": (E, [POINTER(P), c_char_p, POINTER(TransformDesc)]),
        "recio_transform_free": (None, [P]),
        "recio_transform_apply": (E, [P, POINTER(Image), POINTER(Image), U64]),
        "recio_transform_apply_desc": (E, [P, POINTER(ApplyDesc)]),
        "recio_image_decode": (E, [POINTER(Image), P, S, I]),
        "recio_image_decode_desc": (E, [POINTER(Image), POINTER(DecodeDesc)]),
        "recio_boxes_check": (E, [POINTER(c_float), I, I, POINTER(I), c_char_p]),
        "recio_transform_query": (E, [P, I, I, I, POINTER(TransformInfo)]),
        "recio_image_info": (E, [P, S, POINTER(I), POINTER(I), POINTER(I)]),
        "recio_image_free": (None, [POINTER(Image)]),
        "recio_image_bytes": (S, [POINTER(Image)]),
        # records
        "recio_reader_open_desc": (E, [POINTER(P), c_char_p, POINTER(ReaderDesc)]),
        "recio_reader_next": (E, [P, POINTER(Record)]),
        "recio_reader_seek": (E, [P, U64]),
        "recio_reader_tell": (U64, [P]),
        "recio_reader_errmsg": (c_char_p, [P]),
        "recio_reader_close": (None, [P]),
        "recio_writer_open_desc": (E, [POINTER(P), c_char_p, POINTER(WriterDesc)]),
        "recio_writer_write": (E, [P, P, S]),
        "recio_writer_write_batch": (E, [P, POINTER(WriterItem), S]),
        "recio_writer_tell": (U64, [P]),
        "recio_writer_errmsg": (c_char_p, [P]),
        "recio_writer_finish": (E, [P]),
        "recio_writer_close": (E, [P]),
        "recio_writer_abort": (None, [P]),
        "recio_irecord_unpack": (E, [POINTER(IRecord), P, S]),
        "recio_irecord_pack_header": (S, [P, POINTER(c_float), c_uint32, U64, U64]),
        "recio_irecord_mask_tail": (S, [P, S]),
        "recio_lst_load": (E, [POINTER(Lst), c_char_p, POINTER(LstDesc)]),
        "recio_index_load": (E, [POINTER(Index), c_char_p, POINTER(IndexDesc)]),
        "recio_index_save": (E, [POINTER(Index), c_char_p, POINTER(IndexDesc)]),
        "recio_index_free": (None, [POINTER(Index)]),
        "recio_index_path": (E, [ctypes.c_char_p, S, c_char_p, P, POINTER(I)]),
        "recio_lst_free": (None, [POINTER(Lst)]),
        "recio_fs_find": (POINTER(Fs), [P, c_char_p]),
        # split
        "recio_split_open_desc": (E, [POINTER(P), c_char_p, c_uint, c_uint, POINTER(SplitDesc)]),
        "recio_split_next": (E, [P, POINTER(Record)]),
        "recio_split_query": (E, [P, POINTER(SplitInfo)]),
        "recio_split_reset": (E, [P, U64]),
        "recio_split_errmsg": (c_char_p, [P]),
        "recio_split_close": (None, [P]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


path = find_library()
lib = _declare(ctypes.CDLL(path))


def stat(path):
    """What is at path (bytes), asked of the filesystem that serves it in the C library's table (a
    local file, s3://, http(s)://), as every recio call that takes a path would: (err, kind, size,
    why). err is OK, or the recio_err of a path no filesystem serves or that cannot be told (the
    network, a permission); why is the filesystem's reason (bytes, maybe empty)."""
    fs = lib.recio_fs_find(None, path)
    why = ctypes.create_string_buffer(ERRMSG_SIZE)
    st = FsStat()
    if not fs:
        return ERR_UNSUPPORTED, FS_NONE, 0, b"no filesystem serves this scheme"
    if not fs.contents.info:  # every built-in row has one; never called through NULL
        return ERR_UNSUPPORTED, FS_NONE, 0, b"its filesystem cannot tell what is at a path"
    e = fs.contents.info(fs.contents.user, path, ctypes.byref(st), ctypes.cast(why, c_void_p))
    return e, st.kind, st.size, why.value


def strerror(code):
    return lib.recio_strerror(code).decode()


def cstr(s):
    """A str or path as the bytes C wants (None stays None)."""
    if s is None:
        return None
    return os.fsencode(s) if not isinstance(s, bytes) else s


# numpy dtype names of recio_dtype, and their array-interface typestrs (native byte order, as C writes them)
DTYPES = {U8: "uint8", F32: "float32", I8: "int8", F16: "float16"}
_NATIVE = "<" if sys.byteorder == "little" else ">"
TYPESTR = {U8: "|u1", F32: _NATIVE + "f4", I8: "|i1", F16: _NATIVE + "f2"}


class _NoNumpy:
    """Stands in for NumPy when it is not installed: `import recio` still works (records need no NumPy:
    pip does not require it, so that an offline venv can install recio), and the first use of an array
    says what to install."""

    def __init__(self, err):
        self._err = err

    def __getattr__(self, name):
        raise ImportError("recio: this needs NumPy, which is not installed: 'pip install numpy', or Debian's "
                          "python3-numpy (a venv sees it when made with --system-site-packages)") from self._err


def numpy():
    """The numpy module, or a stand-in whose every attribute raises ImportError saying how to get it."""
    try:
        import numpy as np
        return np
    except ImportError as e:
        return _NoNumpy(e)
ELEM_SIZE = {U8: 1, F32: 4, I8: 1, F16: 2}


def decode_desc(buf, channels=0, mask=False):
    """recio_image_decode_desc over bytes buf: (error code, Image, the words)."""
    img, msg, d = Image(), ctypes.create_string_buffer(ERRMSG_SIZE), DecodeDesc()
    d.bytes, d.size, d.channels, d.mask = ctypes.cast(ctypes.c_char_p(buf), c_void_p), len(buf), channels, int(mask)
    d.errmsg = ctypes.cast(msg, c_void_p)
    e = lib.recio_image_decode_desc(ctypes.byref(img), ctypes.byref(d))
    return e, img, msg.value
