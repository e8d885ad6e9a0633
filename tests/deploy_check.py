#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
"""deploy_check.py DAEMONSET UNINSTALL VERSION MEMACCT - `make deploy-check`: the
Kubernetes objects of docs/deploy/daemonset.yaml parsed (python3-yaml) and
checked against each other and against memacct, as `kubectl apply` and a
cluster would take them (no cluster is reachable here, and Debian has no
kubectl):

- every volumeMount of every container names a volume of the pod; the root
  file system read-only, the OOM post-mortems' directory (/run/memacct) a
  mount, not the image;
- the memacct container's image is what `make image` builds
  (memacct:VERSION, or REGISTRY/memacct:VERSION) and its arguments are a
  `memacct daemon` command line that memacct accepts (MEMACCT daemon ARGS
  --check-args); the probes and kube-rbac-proxy's upstream reach the
  address it listens on;
- the PodMonitor selects the DaemonSet's pods, scrapes a port its proxy
  exposes, with the token of a Secret shipped here (a service-account token
  of a service account shipped here, bound to a ClusterRole that allows get
  on /metrics), and names each target by its node (instance and node from
  __meta_kubernetes_pod_node_name);
- docs/deploy/uninstall.yaml (UNINSTALL) detaches, on every node, the pin
  path the DaemonSet's daemon pins at, with the same image and the node's
  bpffs mounted.

Prints one line per check; exit 1 at the first failure.
"""
import os
import re
import subprocess
import sys

import yaml

# where the daemon pins without --pin-path: user/kernel/pin.h PIN_DEFAULT_DIR
with open(os.path.join(os.path.dirname(__file__), "..", "user", "kernel", "pin.h")) as _f:
    PIN_DEFAULT_DIR = re.search(r'#define PIN_DEFAULT_DIR "([^"]+)"', _f.read()).group(1)


def fail(msg):
    print("deploy-check: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print("deploy-check: ok   " + msg)


def one(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    if len(found) != 1:
        fail("%d objects of kind %s%s (want 1)" % (len(found), kind, " named " + name if name else ""))
    return found[0]


def main():
    path, uninstall, version, memacct = sys.argv[1:5]
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for d in docs:
        for key in ("apiVersion", "kind", "metadata"):
            if key not in d:
                fail("an object without %s: %s" % (key, d))
    ds = one(docs, "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    if ds["spec"]["selector"]["matchLabels"].items() - labels.items():
        fail("the DaemonSet's selector does not match its pods' labels")
    volumes = {v["name"] for v in pod.get("volumes", [])}
    containers = {c["name"]: c for c in pod["containers"]}
    for c in pod["containers"]:
        for m in c.get("volumeMounts", []):
            if m["name"] not in volumes:
                fail("container %s mounts volume %s, which the pod does not have" % (c["name"], m["name"]))
    ok("%d containers' %d mounts name volumes of the pod" % (len(containers), sum(
        len(c.get("volumeMounts", [])) for c in pod["containers"])))

    m = containers.get("memacct") or fail("no container named memacct")
    image = m["image"]
    if image.rsplit("/", 1)[-1] != "memacct:" + version:
        fail("memacct's image %s is not what make image builds: [REGISTRY/]memacct:%s" % (image, version))
    if not m["securityContext"].get("readOnlyRootFilesystem"):
        fail("memacct's root file system is not read-only")
    mounts = {x["mountPath"]: x for x in m.get("volumeMounts", [])}
    if "/run/memacct" not in mounts or mounts["/run/memacct"].get("readOnly"):
        fail("no writable mount at /run/memacct (the OOM post-mortems): the root is read-only")
    ok("image %s (make image: memacct:%s), /run/memacct writable on a read-only root" % (image, version))

    args = m["args"]
    if args[0] != "daemon":
        fail("memacct's args do not start with daemon: %s" % args)
    r = subprocess.run([memacct] + args + ["--check-args"], capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s %s --check-args: exit %d: %s" % (memacct, " ".join(args), r.returncode, r.stderr.strip()))
    listen = args[args.index("--listen") + 1] if "--listen" in args else "127.0.0.1:9464"
    host, port = listen.rsplit(":", 1)
    for probe in ("readinessProbe", "livenessProbe"):
        g = m[probe]["httpGet"]
        if (g.get("host"), str(g["port"])) != (host, port):
            fail("%s reaches %s:%s, the daemon listens on %s" % (probe, g.get("host"), g["port"], listen))
    proxy = containers.get("kube-rbac-proxy") or fail("no kube-rbac-proxy container")
    if "--upstream=http://%s/" % listen not in proxy["args"]:
        fail("kube-rbac-proxy's upstream is not http://%s/: %s" % (listen, proxy["args"]))
    ok("memacct %s: accepted by %s; probes and the proxy's upstream at %s"
       % (" ".join(args), memacct, listen))

    pm = one(docs, "PodMonitor")
    if pm["spec"]["selector"]["matchLabels"].items() - labels.items():
        fail("the PodMonitor's selector does not match the DaemonSet's pods")
    ports = {p["name"] for c in pod["containers"] for p in c.get("ports", [])}
    ns = pm["metadata"]["namespace"]
    for ep in pm["spec"]["podMetricsEndpoints"]:
        if ep["port"] not in ports:
            fail("the PodMonitor scrapes port %s; the pods name %s" % (ep["port"], sorted(ports)))
        cred = ep["authorization"]["credentials"]
        sec = one(docs, "Secret", cred["name"])
        if sec["metadata"]["namespace"] != ns:
            fail("Secret %s is not in the PodMonitor's namespace %s" % (cred["name"], ns))
        if sec["type"] != "kubernetes.io/service-account-token" or cred["key"] != "token":
            fail("Secret %s is not a service-account token read by key token" % cred["name"])
        sa = sec["metadata"]["annotations"]["kubernetes.io/service-account.name"]
        one(docs, "ServiceAccount", sa)
        roles = [b["roleRef"]["name"] for b in docs if b["kind"] == "ClusterRoleBinding" and
                 any(s["kind"] == "ServiceAccount" and s["name"] == sa and s["namespace"] == ns
                     for s in b["subjects"])]
        if not any(r.get("nonResourceURLs") == ["/metrics"] and "get" in r["verbs"]
                   for name in roles for r in one(docs, "ClusterRole", name)["rules"]):
            fail("service account %s is bound to no ClusterRole allowing get on /metrics" % sa)
        targets = {r["targetLabel"] for r in ep.get("relabelings", [])
                   if r.get("sourceLabels") == ["__meta_kubernetes_pod_node_name"]}
        if not {"instance", "node"} <= targets:
            fail("the PodMonitor does not name targets by node (instance, node): %s" % sorted(targets))
    ok("PodMonitor: port, Secret %s (token of %s, get on /metrics), instance and node from the "
       "node's name" % (cred["name"], sa))

    with open(uninstall) as f:
        udocs = [d for d in yaml.safe_load_all(f) if d]
    uds = one(udocs, "DaemonSet")
    upod = uds["spec"]["template"]["spec"]
    pin = args[args.index("--pin-path") + 1] if "--pin-path" in args else PIN_DEFAULT_DIR
    det = [c for c in upod.get("initContainers", []) if c["args"][:1] == ["detach"]]
    if len(det) != 1:
        fail("%s: not one init container running memacct detach" % uninstall)
    det = det[0]
    if det["image"] != image:
        fail("%s: image %s, the DaemonSet's is %s" % (uninstall, det["image"], image))
    if det["args"] != ["detach", "--pin-path", pin]:
        fail("%s: %s, not detach --pin-path %s (the daemon's)" % (uninstall, det["args"], pin))
    uvol = {v["name"]: v for v in upod["volumes"]}
    bpffs = [m for m in det.get("volumeMounts", []) if m["mountPath"] == "/sys/fs/bpf"]
    if not bpffs or uvol.get(bpffs[0]["name"], {}).get("hostPath", {}).get("path") != "/sys/fs/bpf":
        fail("%s: the node's /sys/fs/bpf is not mounted at /sys/fs/bpf" % uninstall)
    if upod.get("tolerations") != pod.get("tolerations"):
        fail("%s: tolerations differ from the DaemonSet's: some nodes left out" % uninstall)
    ok("%s: memacct detach --pin-path %s on every node the DaemonSet runs on" % (uninstall, pin))


main()
