#!/bin/sh
# Writes the recio(1) man page on stdout from the command's own --help texts, so the two never
# disagree: `tools/mkman.sh build/recio > recio.1` (make install does it). RECIO may carry a runner
# prefix (qemu) as the Makefile's $(RUN).
set -eu
RECIO=${1:?usage: mkman.sh RECIO_COMMAND [DOCDIR]}
DOCDIR=${2:-/usr/local/share/doc/recio}
# roff: a backslash is \e; a line starting with . or ' is protected with \&
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
version=$($RECIO --version)
cat <<HEAD
.TH RECIO 1 "" "$version" "User Commands"
.SH NAME
recio \\- read, write, pack and iterate MXNet / dmlc-core RecordIO image datasets
.SH SYNOPSIS
.B recio
.I COMMAND
[\\fIOPTIONS\\fR] ...
.br
.B recio help
.I COMMAND
.SH DESCRIPTION
This page is generated from the output of \\fBrecio \\-\\-help\\fR and \\fBrecio \\fICOMMAND\\fB \\-\\-help\\fR.
.PP
.nf
HEAD
$RECIO --help | esc
echo ".fi"
echo ".SH COMMANDS"
for cmd in $($RECIO --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
    echo ".SS recio $cmd"
    echo ".nf"
    $RECIO "$cmd" --help | esc
    echo ".fi"
done
cat <<TAIL
.SH EXIT STATUS
0 on success, 1 for errors in the data or the system (\\fBrecio: FILE: offset N: what\\fR on stderr),
2 for bad usage.
.SH SEE ALSO
README.md and docs/*.md in $DOCDIR.
TAIL
