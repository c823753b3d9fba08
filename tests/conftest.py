"""pytest setup for the Python tests (tests/test_*.py, tests/mxnet/): the package from this tree
(python/), unless RECIO_PYTHON_TREE=0 says to test the installed one; and a closing line
"test_python: N passed, N failed[, N skipped]" that tests/run.sh adds up like the C tests' lines."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("RECIO_PYTHON_TREE", "1") != "0":
    sys.path.insert(0, os.path.join(ROOT, "python"))


def _forkserver_under_asan():
    """Under AddressSanitizer (make sanitize preloads it), DataLoaders that would fork their workers
    use the forkserver instead. GCC 12's ASan allocator is not fork-safe: a child forked while another
    thread of the parent holds one of its locks hangs at its first allocation (seen: a DataLoader
    worker blocked in torch.set_num_threads -> pthreadpool_create -> free, on ASan's size-class
    lock, in 3 of 10 runs of the whole suite, in tests that had passed for rounds). glibc's malloc takes
    its locks around fork, so a plain build has no such hang: make test runs every fork case as
    written; the forkserver forks from a process with one thread."""
    if "libasan" not in os.environ.get("LD_PRELOAD", ""):
        return
    try:
        import torch.utils.data as tud
    except ImportError:
        return
    import multiprocessing
    multiprocessing.set_forkserver_preload(["torch", "torch.utils.data", "recio", "recio.torch"])  # workers start warm
    init = tud.DataLoader.__init__

    def init_forkserver(self, *args, **kwargs):
        if kwargs.get("num_workers") and kwargs.get("multiprocessing_context") in (None, "fork"):
            kwargs["multiprocessing_context"] = "forkserver"
        init(self, *args, **kwargs)
    tud.DataLoader.__init__ = init_forkserver


_forkserver_under_asan()


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len([r for r in stats.get("passed", []) if r.when == "call"])
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))  # errors: a setup or collection failed
    skipped = len(stats.get("skipped", []))
    tail = ", %d skipped" % skipped if skipped else ""
    terminalreporter.write_line("test_python: %d passed, %d failed%s" % (passed, failed, tail))
