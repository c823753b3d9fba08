#!/bin/sh
# tests/test_python_handles.py (the Python handles under threads, fork, pickling and close) as
# test_python.sh runs test_python.py: the same interpreter, sanitizer preload and skip lines.
RECIO_PY_TEST=test_python_handles.py exec "$(dirname "$0")/test_python.sh"
