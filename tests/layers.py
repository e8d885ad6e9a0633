#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""layers.py - user/ by layer (README "Layout"), checked. Layers, first to last:
  user/         util, signals: no memacct header
  user/proc/    parsers of the kernel's files (/proc, memcg files)
  user/kernel/  the BPF side: loader, pins, task walk, BPF map readers
  user/model/   the report model, metric table, the collectors
  user/out/     writers: table, JSON, OpenMetrics, HTTP, recordings
  user/cmd/     one file per command, main, help text
Fails, naming each:
1. a file that includes a header of a later layer;
2. an include cycle between modules (a module: NAME.c and NAME.h);
3. a header that declares a function defined in another layer's file (the
   declaration belongs with the definition: a model header declaring an
   out/ writer hid model -> out calls from check 1).
"""
import collections
import os
import re
import sys

USER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "user")
LAYERS = [".", "proc", "kernel", "model", "out", "cmd"]


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def main():
    files = {}	# path -> layer index
    for i, d in enumerate(LAYERS):
        for f in sorted(os.listdir(os.path.join(USER, d))):
            if f.endswith((".c", ".h")):
                files[os.path.normpath(os.path.join(d, f))] = i
    where = {os.path.basename(p): i for p, i in files.items() if p.endswith(".h")}
    module = {p: os.path.basename(p).rsplit(".", 1)[0] for p in files}
    bad = 0
    graph = collections.defaultdict(set)
    for p, i in files.items():
        text = open(os.path.join(USER, p)).read()
        for h in re.findall(r'^#include "([^"]+)"', text, re.M):
            if h not in where:
                continue	# include/, the skeletons, system
            if where[h] > i:
                print(f"layers: user/{p} includes {h} of user/{LAYERS[where[h]]}/, "
                      "a later layer", file=sys.stderr)
                bad += 1
            dep = h.rsplit(".", 1)[0]
            if dep != module[p]:
                graph[module[p]].add(dep)
    if [p for p, i in files.items() if i == 0 and not re.match(r"(util|signals)\.", p)]:
        print("layers: user/ holds a file outside the layers", file=sys.stderr)
        bad += 1
    # 2: strongly connected components of the module graph (Tarjan)
    index, low, stack, on, n = {}, {}, [], set(), [0]
    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                nonlocal_bad.append(scc)
    nonlocal_bad = []
    for v in sorted(set(module.values())):
        if v not in index:
            visit(v)
    for scc in nonlocal_bad:
        edges = "; ".join(f"{a} -> {', '.join(sorted(graph[a] & set(scc)))}" for a in sorted(scc))
        print(f"layers: include cycle between modules {', '.join(sorted(scc))} ({edges})",
              file=sys.stderr)
        bad += 1
    # 3: a header's functions defined in another layer
    defined = {}
    for p, i in files.items():
        if p.endswith(".c"):
            for name in re.findall(r"^[A-Za-z_][\w \*]*?\b(\w+)\([^;{]*\)\s*\{", strip(open(
                    os.path.join(USER, p)).read()), re.M | re.S):
                defined.setdefault(name, p)
    for p, i in files.items():
        if not p.endswith(".h"):
            continue
        for name in re.findall(r"^[A-Za-z_][\w \*]*?\b(\w+)\([^;{]*\)\s*(?:__attribute__\(\(.*?\)\)\s*)?;",
                               strip(open(os.path.join(USER, p)).read()), re.M | re.S):
            d = defined.get(name)
            if d and files[d] != i:
                print(f"layers: user/{p} declares {name}(), defined in user/{d} "
                      f"(user/{LAYERS[files[d]]}/): declare it there", file=sys.stderr)
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
