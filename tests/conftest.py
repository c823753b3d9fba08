"""pytest setup for the Python tests (tests/test_*.py, tests/mxnet/): the package from this tree
(python/), unless RECIO_PYTHON_TREE=0 says to test the installed one; and a closing line
"test_python: N passed, N failed[, N skipped]" that tests/run.sh adds up like the C tests' lines."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("RECIO_PYTHON_TREE", "1") != "0":
    sys.path.insert(0, os.path.join(ROOT, "python"))


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len([r for r in stats.get("passed", []) if r.when == "call"])
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))  # errors: a setup or collection failed
    skipped = len(stats.get("skipped", []))
    tail = ", %d skipped" % skipped if skipped else ""
    terminalreporter.write_line("test_python: %d passed, %d failed%s" % (passed, failed, tail))
