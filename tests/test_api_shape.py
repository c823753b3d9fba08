#!/usr/bin/env python3
"""recio.h's public shape, as issue 24 set it for 1.0 (run by make test through tests/run.sh):

- at most MAX_FUNCTIONS public functions (RECIODEF declarations before the implementation): issue 24
  asks for 110, and 1.0 has 110;
- no public name ending in _ex, _scratch, _scaled or _fast (a desc form carries the options);
- no (char *errmsg, size_t) parameter pair: words come through a desc's errmsg or a handle;
- recio_iter_desc has at most 12 top-level members and its source is a recio_split_desc;
- one error-message size constant (RECIO_ERRMSG_SIZE), no alias of it;
- no line over 120 columns in recio.h, and recio.h is as .clang-format formats it (clang-format 14,
  Debian 12's, which make test installs; another version may format differently: the check names it).
Prints "api_shape: N passed, N failed" last."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "recio.h").read_text()
DECL = TEXT[: TEXT.index("#if defined(RECIO_IMPLEMENTATION)")]
passed = failed = 0
MAX_FUNCTIONS = 110


def check(ok: bool, what: str) -> None:
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")


def public_functions() -> dict:
    """name -> parameter text, for every RECIODEF function declared in the header part."""
    out = {}
    for m in re.finditer(r"^RECIODEF\b([^;{]*?)\b(recio_\w+)\s*\(([^;{]*?)\)\s*;", DECL, re.M | re.S):
        out[m.group(2)] = m.group(3)
    return out


def struct_members(name: str) -> list:
    """Top-level member names of `typedef struct name {...} name;` in the header part."""
    m = re.search(r"typedef struct %s \{(.*?)\n\} %s;" % (name, name), DECL, re.S)
    if not m:
        return []
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    depth, members, cur = 0, [], ""
    for ch in body:  # split on ';' at depth 0, so nested structs/unions count once
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == ";" and depth == 0:  # `unsigned rank, nsplit;` is two members
            members += [cur.strip()] * (1 + re.sub(r"\(.*?\)", "", cur).count(","))
            cur = ""
        else:
            cur += ch
    return [m for m in members if m]


funcs = public_functions()
print(f"  public functions: {len(funcs)}")
check(len(funcs) > 50, f"the declaration scan found {len(funcs)} functions (expected the whole API)")
check(len(funcs) <= MAX_FUNCTIONS, f"{len(funcs)} public functions (at most {MAX_FUNCTIONS})")
variants = sorted(n for n in funcs if re.search(r"_(ex|scratch|scaled|fast)$", n))
check(not variants, f"variant names: {', '.join(variants)}")
pairs = sorted(n for n, p in funcs.items() if re.search(r"char\s*\*\s*\w*err\w*\s*,\s*size_t", p))
check(not pairs, f"(char *errmsg, size_t) parameter pairs in: {', '.join(pairs)}")
members = struct_members("recio_iter_desc")
print(f"  recio_iter_desc top-level members: {len(members)}")
check(0 < len(members) <= 12, f"recio_iter_desc has {len(members)} top-level members (at most 12)")
check(any(re.match(r"recio_split_desc\s+\w+$", m) for m in members), "recio_iter_desc's source is a recio_split_desc")
aliases = sorted(set(re.findall(r"#define\s+(RECIO\w*ERRMSG\w*)\s+RECIO_ERRMSG_SIZE", TEXT)))
check(not aliases, f"aliases of RECIO_ERRMSG_SIZE: {', '.join(aliases)}")
long_lines = [i + 1 for i, l in enumerate(TEXT.splitlines()) if len(l) > 120]
check(not long_lines, f"{len(long_lines)} lines of recio.h over 120 columns (first: {long_lines[:5]})")
fmt = shutil.which("clang-format")
check(fmt is not None, "clang-format is missing: make test installs Debian's clang-format")
if fmt:
    version = subprocess.run([fmt, "--version"], capture_output=True, text=True).stdout.strip()
    r = subprocess.run([fmt, "--dry-run", "--Werror", str(ROOT / "recio.h")], capture_output=True, text=True, cwd=ROOT)
    where = sorted(set(re.findall(r"recio\.h:(\d+):", r.stderr)), key=int)
    check(r.returncode == 0, f"recio.h is not as .clang-format formats it ({version}): lines {where[:8]}; "
          "run clang-format -i recio.h")
print(f"api_shape: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
