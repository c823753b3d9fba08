"""MXNet ImageRecordIter parameters -> a recio transform spec and iterator options.

Every parameter of MXNet 1.x's ImageRecordIter is listed in OPTIONS with what recio does with it;
docs/python.md has the same table in words. A parameter recio cannot honour raises ValueError naming
it: none is accepted and dropped.
"""
import ctypes
import operator
import os
from typing import Any

# name -> MXNet default. "supported" / "rejected" is decided in translate(); docs/python.md tells why.
MXNET_DEFAULTS = {
    # data set
    "path_imgrec": "", "path_imgidx": "", "path_imglist": "", "data_shape": None, "label_width": 1,
    "batch_size": None, "round_batch": True, "part_index": 0, "num_parts": 1, "shuffle": False, "seed": 0,
    "seed_aug": None, "shuffle_chunk_size": 0, "shuffle_chunk_seed": 0, "aug_seq": "aug_default",
    # engine
    "preprocess_threads": 4, "prefetch_buffer": 4, "dtype": None, "ctx": "gpu", "device_id": 0, "verbose": True,
    "data_name": "data", "label_name": "softmax_label",
    # augmentation (DefaultImageAugmenter)
    "resize": -1, "rand_crop": False, "random_resized_crop": False, "max_random_area": 1.0, "min_random_area": 1.0,
    "max_aspect_ratio": 0.0, "min_aspect_ratio": None, "max_rotate_angle": 0, "rotate": -1, "max_shear_ratio": 0.0,
    "max_crop_size": -1, "min_crop_size": -1, "max_random_scale": 1.0, "min_random_scale": 1.0,
    "max_img_size": 1e10, "min_img_size": 0.0, "random_h": 0, "random_s": 0, "random_l": 0, "fill_value": 255,
    "inter_method": 1, "pad": 0, "brightness": 0.0, "contrast": 0.0, "saturation": 0.0, "pca_noise": 0.0,
    # normalisation (ImageNormalizeParam)
    "mirror": False, "rand_mirror": False, "mean_img": "", "mean_r": 0.0, "mean_g": 0.0, "mean_b": 0.0,
    "mean_a": 0.0, "std_r": 1.0, "std_g": 1.0, "std_b": 1.0, "std_a": 1.0, "scale": 1.0,
    "max_random_contrast": 0.0, "max_random_illumination": 0.0,
}

# Parameters recio has no equivalent for, and why (the ValueError says this).
UNSUPPORTED = {
    "max_random_scale": "random affine scaling is not a recio op; use random_resized_crop=True or spec=",
    "min_random_scale": "random affine scaling is not a recio op; use random_resized_crop=True or spec=",
    "max_crop_size": "random-size square crops are not a recio op; use random_resized_crop=True",
    "min_crop_size": "random-size square crops are not a recio op; use random_resized_crop=True",
    "max_img_size": "the affine size clamp is not a recio op",
    "min_img_size": "the affine size clamp is not a recio op",
    "random_h": "HSL jitter is not a recio op; use brightness/contrast/saturation or spec= with hue(F)",
    "random_s": "HSL jitter is not a recio op; use brightness/contrast/saturation or spec= with hue(F)",
    "random_l": "HSL jitter is not a recio op; use brightness/contrast/saturation or spec= with hue(F)",
    "max_random_contrast": "MXNet's contrast on mean-subtracted values is not a recio op; use contrast=",
    "max_random_illumination": "MXNet's illumination offset after normalisation is not a recio op; use brightness=",
    "mean_a": "recio normalises three channels; a 4th (alpha) channel is not normalised",
    "std_a": "recio normalises three channels; a 4th (alpha) channel is not normalised",
}

# recio's own keyword arguments (not MXNet's): see docs/python.md.
RECIO_OPTIONS = {"spec": None, "layout": "NCHW", "last_batch": None, "workers": None, "shuffle_buffer": 0,
                 "equalise": False, "equalize": None, "rotate_shards": False, "copy": False, "checksums": False,
                 "epoch": 0, "use_mmap": False, "label_pad_width": 0, "label_pad_value": -1.0, "label_strict": False,
                 "masks": False, "mask_fill": 255, "mixup_alpha": 0.0, "cutmix_alpha": 0.0, "mix_prob": 1.0,
                 "num_classes": 0, "cache_bytes": 0, "skip_bad": False, "keys": None, "directories": False}

# The type of each numeric or yes/no parameter: translate() turns what is given into it first, and a
# value that is not one raises TypeError naming the parameter (MXNet passes every value as a string,
# so numeric strings and "true"/"false" are read as MXNet reads them).
_INTS = ("label_width", "batch_size", "part_index", "num_parts", "seed", "seed_aug", "shuffle_chunk_size",
         "shuffle_chunk_seed", "preprocess_threads", "prefetch_buffer", "device_id", "resize", "inter_method",
         "pad", "label_pad_width", "workers",
         "shuffle_buffer", "num_classes", "cache_bytes", "epoch", "mask_fill")
_FLOATS = ("max_random_area", "min_random_area", "max_aspect_ratio", "min_aspect_ratio", "max_rotate_angle", "rotate",
           "max_shear_ratio", "max_random_scale", "min_random_scale", "max_img_size", "min_img_size", "fill_value",
           "max_crop_size", "min_crop_size", "random_h", "random_s", "random_l",
           "brightness", "contrast", "saturation", "pca_noise", "mean_r", "mean_g", "mean_b", "mean_a", "std_r", "std_g",
           "std_b", "std_a", "scale", "max_random_contrast", "max_random_illumination", "label_pad_value", "mixup_alpha",
           "cutmix_alpha", "mix_prob")
_BOOLS = ("round_batch", "shuffle", "verbose", "rand_crop", "random_resized_crop", "mirror", "rand_mirror", "equalise",
          "rotate_shards", "copy", "checksums", "use_mmap", "label_strict", "masks", "skip_bad", "directories")
_NONE_OK = ("seed_aug", "min_aspect_ratio", "workers")


def _typed(name, v):
    """v as the type of parameter `name` (see _INTS, _FLOATS, _BOOLS), or TypeError naming it."""
    if v is None and name in _NONE_OK:
        return None
    if name in _BOOLS:
        t = v.strip().lower() if isinstance(v, str) else v
        if isinstance(t, str) or not hasattr(t, "__index__"):
            ok = {"true": True, "1": True, "false": False, "0": False}
            if isinstance(t, str) and t in ok:
                return ok[t]
            if type(t).__name__ != "bool_":  # NumPy's bool has no __index__
                raise TypeError("ImageRecordIter: %s: True or False, not %r" % (name, v))
        if t in (0, 1):
            return bool(t)
        raise TypeError("ImageRecordIter: %s: True or False, not %r" % (name, v))
    want = "an integer" if name in _INTS else "a number"
    if name in _INTS:
        try:
            return operator.index(v)  # exact, whatever its size (a uint64 seed)
        except TypeError:
            pass
        if isinstance(v, str):
            try:
                return int(v.strip())
            except ValueError:
                pass
    try:
        f = float(v.strip() if isinstance(v, str) else v)
    except (TypeError, ValueError):
        raise TypeError("ImageRecordIter: %s: %s, not %r" % (name, want, v)) from None
    if name in _FLOATS:
        return f
    if f != f or f in (float("inf"), float("-inf")) or f != int(f):
        raise TypeError("ImageRecordIter: %s: %s, not %r" % (name, want, v))
    return int(f)


EQUALIZE = {False: 0, True: 1, None: 0, "pad": 1, "drop": 2}

LAST_BATCH = {"pad": 0, "discard": 1, "roll_over": 2}


def _path(name, v):
    """A path parameter as a str (a list or tuple of them joined by ';' for path_imgrec)."""
    if name == "path_imgrec" and isinstance(v, (list, tuple)):
        return ";".join(_path(name, x) for x in v)
    try:
        return os.fsdecode(os.fspath(v))
    except TypeError:
        raise TypeError("ImageRecordIter: %s: a path (str or os.PathLike), not %r" % (name, v)) from None


KEY_MAX = (1 << 64) - 1  # recio_split_desc.key_end for "no upper end"


def _key(v, what):
    """One key of a range: an integer, or an integral float (insightface's header label is float32)."""
    try:
        return operator.index(v)
    except TypeError:
        pass
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError("%s: a key is an integer, not %r" % (what, v)) from None
    if f != f or f in (float("inf"), float("-inf")) or f != int(f):
        raise TypeError("%s: a key is an integer, not %r" % (what, v))
    return int(f)


def key_range(keys: Any, what: str = "keys") -> tuple:
    """(key_begin, key_end) for recio_split_desc/recio_iter_desc from keys: None (every record: (0, 0)),
    range(begin, end), or (begin, end) with end None for no upper end. The range is half-open, as
    Python's: insightface's images are (1, int(label[0])) of record 0's label."""
    if keys is None:
        return 0, 0
    if isinstance(keys, range):
        if keys.step != 1:
            raise ValueError("%s: a range of consecutive keys (step 1), not %r" % (what, keys))
        b, e = keys.start, keys.stop
    else:
        try:
            b, e = list(keys)
        except (TypeError, ValueError):
            raise TypeError("%s: (begin, end) or range(begin, end): the keys begin <= key < end, not %r"
                            % (what, keys)) from None
        b, e = _key(b, what), KEY_MAX if e is None else _key(e, what)
    if not 0 <= b < e <= KEY_MAX:
        raise ValueError("%s: begin < end, both in [0, 2**64), not [%d, %d): keys are the .idx's (begin <= key < end)"
                         % (what, b, e))
    return b, e


def _num(x):
    """A float for a spec argument, written so the C parser reads the same float back."""
    return format(float(x), ".9g")


def _bad(name, why):
    return ValueError("ImageRecordIter: %s: %s" % (name, why))


def _index_of(rec):
    """The .idx the C library uses for rec (recio_index_path, the one rule): REC.idx when it exists,
    else REC with .rec replaced by .idx."""
    from . import _lib as L
    raw = L.cstr(rec)
    out = ctypes.create_string_buffer(len(raw) + 5)
    if L.lib.recio_index_path(out, len(out), raw, None, None) != 0:
        raise ValueError("%r: no .idx name for it" % (rec,))
    return os.fsdecode(out.value) if isinstance(rec, str) else out.value


def translate(**kw: Any) -> dict:
    """MXNet keyword arguments -> dict(spec=..., options for the C iterator, ...). Raises ValueError for a
    parameter recio cannot honour and TypeError for a name neither MXNet's ImageRecordIter nor recio has."""
    for k in kw:
        if k not in MXNET_DEFAULTS and k not in RECIO_OPTIONS:
            raise TypeError("ImageRecordIter() got an unexpected keyword argument '%s'" % k)
    kw = {k: _typed(k, v) if k in _INTS or k in _FLOATS or k in _BOOLS else v for k, v in kw.items()}
    given = set(kw)
    o = dict(MXNET_DEFAULTS)
    o.update(RECIO_OPTIONS)
    o.update(kw)

    def changed(name):
        return name in given and kw[name] != MXNET_DEFAULTS.get(name, RECIO_OPTIONS.get(name))

    for name, why in UNSUPPORTED.items():
        if changed(name):
            raise _bad(name, why)

    # ---- data set ----
    rec = _path("path_imgrec", o["path_imgrec"]) if o["path_imgrec"] else ""
    if not rec:
        raise _bad("path_imgrec", "required (the .rec file, or 'a.rec;b.rec')")
    from . import _is_file, _stat  # the C library's filesystems: local, s3:// and http(s):// alike
    for f in rec.split(";"):
        # a shared folder may hold another program's .rec; a remote name ending in .rec is taken for a
        # file unasked (a request per shard at every open, at S3's latency), the split says if not
        remote_rec = "://" in f and f.lower().endswith(".rec")
        if not o["directories"] and not remote_rec and _stat(f)[0] == "dir":
            raise _bad("path_imgrec", "%s is a directory: MXNet reads one file; name the .rec file(s) ('a.rec;b.rec'), "
                       "or give directories=True to read every .rec in it" % f)
    if o["aug_seq"] != "aug_default":
        raise _bad("aug_seq", "only MXNet's default augmenter ('aug_default') is mapped; use spec= for other chains")
    if o["batch_size"] is None:
        raise _bad("batch_size", "required")
    batch = int(o["batch_size"])
    if batch < 1:
        raise _bad("batch_size", "must be at least 1")
    shape = o["data_shape"]
    if shape is not None:
        try:
            shape = tuple(_typed("data_shape", x) for x in shape)
        except TypeError:
            raise TypeError("ImageRecordIter: data_shape: (channels, height, width) integers, not %r" % (shape,)) from None
        if len(shape) != 3 or min(shape) < 1:
            raise _bad("data_shape", "(channels, height, width), each at least 1, not %r" % (o["data_shape"],))
        if shape[0] not in (1, 3):
            raise _bad("data_shape", "recio decodes to 1 or 3 channels here, not %d" % shape[0])
    elif o["spec"] is None:
        raise _bad("data_shape", "required (channels, height, width)")
    if int(o["label_width"]) < 1 and not int(o["label_pad_width"]):
        raise _bad("label_width", "must be at least 1 (for detection give label_pad_width)")
    nparts, part = int(o["num_parts"]), int(o["part_index"])
    if nparts < 1 or not 0 <= part < nparts:
        raise _bad("part_index", "must be in [0, num_parts): %d of %d" % (part, nparts))
    idx = _path("path_imgidx", o["path_imgidx"]) if o["path_imgidx"] else None
    files = rec.split(";")
    if idx and not _is_file(idx):
        raise _bad("path_imgidx", "%s does not exist (make it with 'recio index')" % idx)
    # an index partitions by record count (MXNet's indexed_recordio); over several files it is one index
    # of the whole list, global offsets
    shuffle = bool(o["shuffle"])
    if shuffle and not idx:
        for f in files:
            if not _is_file(_index_of(f)):
                raise _bad("shuffle", "a global shuffle needs %s (make it with 'recio index %s'), or use "
                           "shuffle_buffer=N for a streaming shuffle" % (_index_of(f), f))
    key_begin, key_end = key_range(o["keys"], "ImageRecordIter: keys")
    if key_end and not idx:
        for f in files:
            if not _is_file(_index_of(f)):
                raise _bad("keys", "a key range is read from the index: %s is missing (make it with 'recio index %s')"
                           % (_index_of(f), f))
    seed = int(o["seed"])
    seed_aug = 0
    if o["seed_aug"] is not None and int(o["seed_aug"]) != seed:
        seed_aug = int(o["seed_aug"])
        if seed_aug == 0:
            raise _bad("seed_aug", "recio reads seed_aug=0 as 'follow seed' (%d); give another value" % seed)
    chunk = int(o["shuffle_chunk_size"])
    chunk_records = 0
    if chunk < 0:
        raise _bad("shuffle_chunk_size", "megabytes, at least 0")
    if chunk:
        if not shuffle:
            raise _bad("shuffle_chunk_size", "acts with shuffle=True (as in MXNet)")
        chunk_records = _records_per_chunk(files, idx, chunk)
        if changed("shuffle_chunk_seed"):  # the chunk order follows it; the augmentation keeps seed
            if not seed_aug:
                seed_aug = seed
                if seed_aug == 0:
                    raise _bad("shuffle_chunk_seed", "with seed=0 give seed_aug too (recio reads seed_aug=0 as "
                               "'follow the order seed')")
            seed = int(o["shuffle_chunk_seed"])
    elif changed("shuffle_chunk_seed"):
        raise _bad("shuffle_chunk_seed", "acts with shuffle_chunk_size")
    eq = o["equalize"] if o["equalize"] is not None else bool(o["equalise"])
    if eq not in EQUALIZE:
        raise _bad("equalize", "'pad', 'drop', True (pad) or False, not %r" % (eq,))
    pad_width = int(o["label_pad_width"])
    if pad_width < 0:
        raise _bad("label_pad_width", "recio does not estimate it (MXNet's -1): give the width, header included")
    if o["ctx"] not in ("cpu", "gpu", None):  # MXNet's hint for where batches go next (default 'gpu')
        raise _bad("ctx", "'cpu' or 'gpu', not %r" % (o["ctx"],))
    if int(o["device_id"]) not in (0, -1):
        raise _bad("device_id", "recio does not allocate pinned memory for a device")

    # ---- the chain ----
    dtype = o["dtype"] or "float32"
    if dtype not in ("float32", "float16", "uint8", "int8"):
        raise _bad("dtype", "recio makes float32, float16, uint8 or int8 batches, not %s" % dtype)
    if o["layout"] not in ("NCHW", "NHWC"):
        raise _bad("layout", "NCHW or NHWC, not %r" % (o["layout"],))
    aug_names = ["resize", "rand_crop", "random_resized_crop", "max_random_area", "min_random_area",
                 "max_aspect_ratio", "min_aspect_ratio", "max_rotate_angle", "rotate", "max_shear_ratio", "fill_value",
                 "inter_method",
                 "pad", "brightness", "contrast", "saturation", "pca_noise", "mirror", "rand_mirror", "mean_r",
                 "mean_g", "mean_b", "std_r", "std_g", "std_b", "scale", "dtype"]
    if o["spec"] is not None:
        clash = [n for n in aug_names if n in given] + (["layout"] if "layout" in given else [])
        if clash:
            raise _bad(clash[0], "spec= gives the whole chain; leave out the augmentation options (%s)"
                       % ", ".join(clash))
        spec = str(o["spec"])
    else:
        spec = _chain(o, given, changed, shape, dtype)
    last = o["last_batch"]
    if last is None:
        last = "pad"  # round_batch True or False: see docs/python.md
    if last not in LAST_BATCH:
        raise _bad("last_batch", "pad, discard or roll_over, not %r" % (last,))
    if "last_batch" in given and "round_batch" in given:
        raise _bad("round_batch", "give round_batch or last_batch, not both")
    workers = o["workers"]
    if workers is None:
        threads = int(o["preprocess_threads"])
        if threads < 1:
            raise _bad("preprocess_threads", "must be at least 1 (workers=0 runs on the calling thread)")
        workers = min(threads, os.cpu_count() or 1)  # as MXNet: no more threads than cores
    elif "preprocess_threads" in given:
        raise _bad("preprocess_threads", "give preprocess_threads or workers, not both")
    prefetch = int(o["prefetch_buffer"])
    if prefetch < 1:
        raise _bad("prefetch_buffer", "must be at least 1")
    mean_img = _path("mean_img", o["mean_img"]) if o["mean_img"] else None
    if mean_img and not _is_file(mean_img):
        raise _bad("mean_img", "%s does not exist: make it with 'recio mean %s --spec SPEC -o %s' (MXNet makes it "
                   "on the first run; recio asks)" % (mean_img, rec, mean_img))
    # the options by recio_iter_desc's sub-descs (recio/__init__.py's _DESC puts each in its field),
    # then what only Python uses
    return dict(uris=rec, rank=part, nsplit=nparts, rotate_shards=bool(o["rotate_shards"]),
                # source (a recio_split_desc)
                index=shuffle or bool(idx) or bool(key_end), index_path=idx,
                shuffle=(2 if chunk else 1) if shuffle else 0, chunk_records=chunk_records, seed=seed,
                equalize=EQUALIZE[eq], equalise=bool(EQUALIZE[eq]), use_mmap=bool(o["use_mmap"]),
                key_begin=key_begin, key_end=key_end,
                # item
                spec=spec, channels=shape[0] if shape else 3, mean_img=mean_img,
                mean_scale=float(o["scale"]) if mean_img else 0.0, seed_aug=seed_aug,
                # labels
                label_width=pad_width or int(o["label_width"]), label_pad_value=float(o["label_pad_value"]),
                label_strict=bool(o["label_strict"]), label_detection=pad_width > 0, masks=bool(o["masks"]),
                mask_fill=_mask_fill(o["mask_fill"]),
                path_imglist=_path("path_imglist", o["path_imglist"]) if o["path_imglist"] else None,
                # mix
                mixup_alpha=float(o["mixup_alpha"]), cutmix_alpha=float(o["cutmix_alpha"]), mix_prob=float(o["mix_prob"]),
                num_classes=int(o["num_classes"]),
                # run
                batch=batch, last_batch=LAST_BATCH[last], workers=int(workers), prefetch=prefetch,
                shuffle_buffer=int(o["shuffle_buffer"]), checksums=bool(o["checksums"]), skip_bad=bool(o["skip_bad"]),
                cache_bytes=int(o["cache_bytes"]),
                # Python's own
                shape=shape, own_spec=o["spec"] is not None, verbose="verbose" in given and bool(o["verbose"]),
                data_name=o["data_name"], label_name=o["label_name"], copy=bool(o["copy"]), epoch=int(o["epoch"]))


def _mask_fill(v):
    """recio_iter_desc.mask_fill for a label 0..255 (0 there means 255: label 0 is RECIO_MASK_FILL_ZERO)."""
    if int(v) != v or not 0 <= int(v) <= 255:
        raise _bad("mask_fill", "a label 0..255, not %r" % (v,))
    return -1 if int(v) == 0 else int(v)


def _records_per_chunk(files, idx, mb):
    """MXNet's shuffle_chunk_size is in megabytes, recio's chunk in records: the dataset's mean record
    size (file bytes over .idx entries) turns one into the other."""
    from . import _load_index, _stat
    size = sum(_stat(f)[1] for f in files)
    n = sum(len(_load_index(f)[0]) for f in ([idx] if idx else [_index_of(f) for f in files]))
    return max(1, int(mb * (1 << 20) * n // max(size, 1)))


def _chain(o, given, changed, shape, dtype):
    c, h, w = shape
    ops = []
    inter = int(o["inter_method"])
    filters = {0: ["interp(nearest)"], 1: [], 2: ["interp(cubic)"], 3: ["area"], 4: ["interp(lanczos)"], 9: ["interp(auto)"]}
    if inter not in filters:
        raise _bad("inter_method", "recio resizes with OpenCV's nearest (0), bilinear (1), bicubic (2), area (3), "
                   "Lanczos-4 (4) or MXNet's auto (9), not %d (10, a random one per image, is not offered)" % inter)
    area = filters[inter]
    resize = int(o["resize"])
    if resize > 0:
        ops += area + ["resize_short(%d)" % resize]
    elif resize != -1:
        raise _bad("resize", "the shorter side in pixels (> 0), or -1 for none, not %d" % resize)
    fill = float(o["fill_value"])
    rot = float(o["rotate"])
    if rot > 0 or float(o["max_rotate_angle"]) > 0:
        f = "," + _num(fill) if fill != 0 else ""  # the corners a rotation uncovers (MXNet's default 255)
        ops.append("rotate(%s%s)" % (_num(rot), f) if rot > 0 else "random_rotate(%s%s)" % (_num(o["max_rotate_angle"]), f))
    shear = float(o["max_shear_ratio"])
    if shear > 0:  # MXNet's one warp (rotation, then shear about the centre) as two
        ops.append("random_shear_x(%s%s)" % (_num(shear), "," + _num(fill) if fill != 0 else ""))
    elif shear < 0:
        raise _bad("max_shear_ratio", "must not be negative")
    pad = int(o["pad"])
    if changed("fill_value") and pad <= 0 and rot <= 0 and float(o["max_rotate_angle"]) <= 0 and shear <= 0:
        raise _bad("fill_value", "acts only with pad, rotate, max_rotate_angle or max_shear_ratio")
    if pad > 0:
        ops.append("pad(%d,%s)" % (pad, _num(fill)))
    elif pad < 0:
        raise _bad("pad", "must not be negative")
    if o["random_resized_crop"]:
        if o["rand_crop"]:
            raise _bad("rand_crop", "MXNet refuses rand_crop with random_resized_crop; give one")
        amin, amax = float(o["min_random_area"]), float(o["max_random_area"])
        rmax = float(o["max_aspect_ratio"])
        if o["min_aspect_ratio"] is None:
            rmin, rmax = 1.0 - rmax, 1.0 + rmax
        else:
            rmin = float(o["min_aspect_ratio"])
        if not (0 < amin <= amax <= 1) or not (0 < rmin <= rmax):
            raise _bad("min_random_area", "areas 0 < min <= max <= 1 and aspect ratios 0 < min <= max, not "
                       "[%g, %g] and [%g, %g]" % (amin, amax, rmin, rmax))
        size = "%d" % w if h == w else "%d,%d" % (w, h)  # W,H then four numbers: six arguments, always W x H
        ops += area + ["random_resized_crop(%s,%s,%s,%s,%s)" % (size, _num(amin), _num(amax), _num(rmin), _num(rmax))]
    else:
        for n in ("max_random_area", "min_random_area", "min_aspect_ratio", "max_aspect_ratio"):
            if changed(n):
                raise _bad(n, "acts only with random_resized_crop=True (MXNet's affine aspect jitter is not a "
                           "recio op)")
        ops.append(("random_crop(%d,%d)" if o["rand_crop"] else "center_crop(%d,%d)") % (w, h))
    if o["mirror"]:
        ops.append("flip")
    elif o["rand_mirror"]:
        ops.append("random_flip(0.5)")
    b, ct, s = float(o["brightness"]), float(o["contrast"]), float(o["saturation"])
    if b or ct or s:
        ops.append("color_jitter(%s,%s,%s)" % (_num(b), _num(ct), _num(s)))
    if float(o["pca_noise"]):
        ops.append("lighting(%s)" % _num(o["pca_noise"]))
    mean = [float(o["mean_r"]), float(o["mean_g"]), float(o["mean_b"])]
    std = [float(o["std_r"]), float(o["std_g"]), float(o["std_b"])]
    scale = float(o["scale"])
    norm_given = [n for n in ("mean_r", "mean_g", "mean_b", "std_r", "std_g", "std_b", "scale") if changed(n)]
    if o["mean_img"]:  # the C iterator subtracts it after the chain and multiplies by scale
        clash = [n for n in norm_given if n != "scale"]
        if clash:
            raise _bad(clash[0], "mean_img replaces mean_r/g/b and std (MXNet uses the mean image alone, then scale)")
        if dtype != "float32":
            raise _bad("mean_img", "the mean image is subtracted from float32 items, not %s" % dtype)
        if scale <= 0:
            raise _bad("scale", "must be positive")
        ops.append("float")
    elif dtype in ("float32", "float16"):
        if min(std) <= 0 or scale <= 0:
            raise _bad("std_r" if min(std) <= 0 else "scale", "must be positive")
        if norm_given:
            ops.append("normalize(%s)" % ",".join(_num(x) for x in mean + [v / scale for v in std]))
        else:
            ops.append("float")
    elif dtype == "uint8":
        if norm_given:
            raise _bad(norm_given[0], "dtype='uint8' gives the pixels as they are (MXNet ignores %s there)"
                       % norm_given[0])
    else:  # int8: MXNet stores saturate(pixel - round(mean)), no std, no scale
        bad = [n for n in norm_given if not n.startswith("mean")]
        if bad:
            raise _bad(bad[0], "dtype='int8' is pixel - round(mean) (MXNet ignores %s there)" % bad[0])
        m = [int(round(x)) for x in mean[:c]]
        if len(set(m)) > 1:
            raise _bad("mean_g", "dtype='int8' in recio subtracts one mean from every channel, not %s" % m)
        ops.append("i8(1,%d)" % -m[0])
    if o["layout"] == "NCHW":
        ops.append("chw")
    if dtype == "float16":
        ops.append("f16")
    return " ".join(ops)
