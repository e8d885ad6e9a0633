#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""bpf_units.py OBJ... - the rules of bpf/'s units (README "Layout"), checked:

1. A header (bpf/*.bpf.h) holds types, extern declarations and functions:
   no map, no variable, no static data. State in a header is copied into
   every unit that includes it (a trial split doubled .data.rss_cpu_off).
2. In each linked object OBJ, every variable's offset in its section's BTF
   (what the skeleton and the pinned .bss's layout check read) is its ELF
   symbol's value (what the programs' relocations use). libbpf 1.1's linker
   gives a variable or map offset 0 in the BTF when a unit that declares it
   extern comes before the unit that defines it: the Makefile links the
   defining units first, and this check fails on the day it does not.

Exits 1 naming each violation.
"""
import os
import re
import struct
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def strip_comments(text):
    """@text without comments and preprocessor lines, its lines kept."""
    def blank(m):
        return " " + "\n" * m.group(0).count("\n")
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # preprocessor lines, with their continuations
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, text, flags=re.M)


def header_state(path):
    """Top-level statements of @path that define storage: [(line, text)]."""
    text = strip_comments(open(path).read())
    bad, depth, stmt, line = [], 0, "", 1
    start = 1
    for ch in text:
        if ch == "\n":
            line += 1
        if ch == "{":
            depth += 1
            if depth == 1:
                stmt += " { "
            continue
        if ch == "}":
            depth -= 1
            if depth == 0:
                head = stmt.split("{", 1)[0]
                stmt += " } "
                if "(" in re.sub(r"SEC\([^)]*\)|__attribute__\(\(.*?\)\)", " ", head) \
                        and "=" not in head:
                    stmt = ""	# a function's body ends its definition
            continue
        if depth:
            continue
        if not stmt.strip():
            start = line
        if ch != ";":
            stmt += ch
            continue
        s = re.sub(r"SEC\([^)]*\)|__attribute__\(\(.*?\)\)", " ", stmt)
        s = " ".join(s.split())
        stmt = ""
        if not s or s.startswith(("extern ", "typedef ", "_Static_assert")):
            continue
        after = s.rsplit("}", 1)[1] if "}" in s else s
        if "{" in s:	# a type or function body; storage if a name follows it
            if re.search(r"[A-Za-z_]\w*", after) or "=" in s.split("{", 1)[0]:
                bad.append((start, s))
            continue
        if "(" in s and "=" not in s:	# a function's declaration
            continue
        bad.append((start, s))
    return bad


def elf_symbols(path):
    """{name: (section name, value)} of @path's symbols (ELF64 little-endian)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    def cstr(off):
        return data[off:data.index(b"\0", off)].decode()
    shstr = secs[shstrndx][4]
    names = [cstr(shstr + s[0]) for s in secs]
    out = {}
    for s in secs:
        if s[1] != 2:	# SHT_SYMTAB
            continue
        strtab = secs[s[6]][4]
        for i in range(s[5] // 24):
            nm, info, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", data, s[4] + i * 24)
            if nm and 0 < shndx < len(names):
                out[cstr(strtab + nm)] = (names[shndx], value)
    return out


def btf_offsets(path, bpftool):
    """[(section, variable, offset)] of @path's BTF DATASECs."""
    text = subprocess.run([bpftool, "btf", "dump", "file", path], check=True,
                          capture_output=True, text=True).stdout
    out, sec = [], None
    for l in text.splitlines():
        m = re.match(r"\[\d+\] DATASEC '([^']*)'", l)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r"\s+type_id=\d+ offset=(\d+) size=\d+ \((?:VAR|FUNC) '([^']*)'\)", l)
        if m and sec:
            out.append((sec, m.group(2), int(m.group(1))))
        elif not l.startswith(("\t", " ")):
            sec = None
    return out


def main():
    bpftool = os.environ.get("BPFTOOL", "bpftool")
    bad = 0
    bpf = os.path.join(ROOT, "bpf")
    for h in sorted(f for f in os.listdir(bpf) if f.endswith(".bpf.h")):
        for line, s in header_state(os.path.join(bpf, h)):
            print(f"bpf_units: bpf/{h}:{line}: state in a header (a unit's, with an "
                  f"extern here): {s[:100]}", file=sys.stderr)
            bad += 1
    for obj in sys.argv[1:]:
        syms = elf_symbols(obj)
        n = 0
        for sec, var, off in btf_offsets(obj, bpftool):
            if sec in (".ksyms", ".kconfig") or var not in syms:
                continue
            n += 1
            if syms[var] != (sec, off):
                print(f"bpf_units: {obj}: {var} is at {sec}+{off} in the BTF, at "
                      f"{syms[var][0]}+{syms[var][1]} in the symbol table (the units' link "
                      f"order: the defining unit first)", file=sys.stderr)
                bad += 1
        if not n:
            print(f"bpf_units: {obj}: no variable checked", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
