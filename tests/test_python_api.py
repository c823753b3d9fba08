"""Issue 25 item 5: every public name of recio, recio.torch and recio.mx (and its submodules) has a
docstring and type hints, and help(recio.ImageRecordIter) lists MXNet's parameter names.

Public: a module's __all__ and its other names without a leading underscore, defined in the recio
package (so not NumPy's, torch's or typing's names a module imports). For each: a module or class
needs a docstring; a function, method (static and class methods too) or property needs its own
docstring (not one inherited from object) and an annotation on every parameter but self/cls and on
its return; __init__ needs the annotations (the class docstring documents it), the protocol methods
(__call__, __getitem__, __len__, __iter__, __next__, __enter__, __exit__) both. A class's members
include those of its base classes in the package (a handle's close(), closed).

    RECIO_LIBRARY=$PWD/build/librecio.so /usr/bin/python3 -m pytest tests/test_python_api.py
"""
import importlib
import inspect
import os
import pkgutil
import pydoc
import sys
import types

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import recio  # noqa: E402

PROTOCOL = ("__call__", "__getitem__", "__len__", "__iter__", "__next__", "__enter__", "__exit__")

# MXNet 1.x's ImageRecordIter parameters (help(mx.io.ImageRecordIter) of MXNet 1.9), written out here
# rather than taken from recio's own table, so that a name dropped from recio's help shows.
MXNET_PARAMS = """path_imgrec path_imgidx path_imglist data_shape label_width batch_size round_batch part_index
num_parts shuffle seed seed_aug shuffle_chunk_size shuffle_chunk_seed aug_seq preprocess_threads prefetch_buffer
dtype ctx device_id verbose data_name label_name resize inter_method rand_crop random_resized_crop min_random_area
max_random_area min_aspect_ratio max_aspect_ratio max_rotate_angle rotate max_shear_ratio fill_value pad brightness
contrast saturation pca_noise mirror rand_mirror mean_r mean_g mean_b mean_a std_r std_g std_b std_a scale mean_img
max_random_scale min_random_scale max_crop_size min_crop_size max_img_size min_img_size random_h random_s random_l
max_random_contrast max_random_illumination""".split()


def modules():
    """recio, recio.torch (when torch imports) and recio.mx with every submodule."""
    names = ["recio", "recio.mx"]
    import recio.mx
    names += [m.name for m in pkgutil.walk_packages(recio.mx.__path__, "recio.mx.") if not m.name.split(".")[-1].startswith("_")]
    try:
        import torch  # noqa: F401
        names.append("recio.torch")
    except ImportError:
        pass
    return [importlib.import_module(n) for n in names]


def ours(obj):
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "recio"


def public_names(mod):
    """__all__ and every other name without a leading underscore (one missing from __all__ is still
    reachable as recio.name)."""
    names = list(getattr(mod, "__all__", ()))
    return names + [n for n in vars(mod) if not n.startswith("_") and n not in names]


def check_function(where, f, problems, need_doc=True):
    if need_doc and not (f.__doc__ or "").strip():
        problems.append("%s: no docstring" % where)
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 and p.name in ("self", "cls"):
            continue
        if p.annotation is inspect.Parameter.empty:
            problems.append("%s: parameter %s has no type hint" % (where, p.name))
    if sig.return_annotation is inspect.Signature.empty:
        problems.append("%s: no return type hint" % where)


def check_class(where, cls, problems):
    if not (cls.__doc__ or "").strip():
        problems.append("%s: no docstring" % where)
    seen = set()
    for base in cls.__mro__:
        if not ours(base):
            continue
        for name, member in vars(base).items():
            if name in seen or (name.startswith("_") and name != "__init__" and name not in PROTOCOL):
                continue
            seen.add(name)
            at = "%s.%s" % (where, name)
            if isinstance(member, property):
                if not (member.__doc__ or "").strip():
                    problems.append("%s: property without a docstring" % at)
                if member.fget is not None and "return" not in getattr(member.fget, "__annotations__", {}):
                    problems.append("%s: property without a return type hint" % at)
            elif isinstance(member, (staticmethod, classmethod)):
                check_function(at, member.__func__, problems)
            elif inspect.isfunction(member):
                check_function(at, member, problems, need_doc=name != "__init__")
    return len(seen)


def public_problems():
    """(problems, number of names checked) over every public name of every module."""
    problems, checked = [], 0
    for mod in modules():
        if not (mod.__doc__ or "").strip():
            problems.append("%s: module without a docstring" % mod.__name__)
        for name in public_names(mod):
            obj = getattr(mod, name)
            where = "%s.%s" % (mod.__name__, name)
            if isinstance(obj, types.ModuleType) or not ours(obj):
                continue
            if inspect.isclass(obj):
                checked += 1 + check_class(where, obj, problems)
            elif inspect.isfunction(obj):
                checked += 1
                check_function(where, obj, problems)
    return problems, checked


def test_every_public_name_has_a_docstring_and_type_hints():
    problems, checked = public_problems()
    assert checked >= 100, "only %d public names found: the walk missed the package" % checked
    assert not problems, "\n".join(problems)


def test_the_walk_sees_a_missing_docstring_and_hint():
    """The check itself: a public function without docstring or hints added to recio is reported."""
    def bare(x, y=1):
        return x
    bare.__module__ = "recio"
    recio.bare_for_test = bare
    try:
        problems, _ = public_problems()
    finally:
        del recio.bare_for_test
    assert "recio.bare_for_test: no docstring" in problems
    assert "recio.bare_for_test: parameter x has no type hint" in problems
    assert "recio.bare_for_test: no return type hint" in problems


def test_help_of_image_record_iter_lists_mxnet_parameters():
    text = pydoc.render_doc(recio.ImageRecordIter, renderer=pydoc.plaintext)
    missing = [n for n in MXNET_PARAMS if n not in text]
    assert not missing, "help(recio.ImageRecordIter) does not name: %s" % ", ".join(missing)


def test_py_typed_ships():
    assert os.path.exists(os.path.join(os.path.dirname(recio.__file__), "py.typed"))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
