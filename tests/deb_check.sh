#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# deb_check.sh DEB - `make deb-check`: the package `make deb` built, inspected
# with dpkg-deb -I / -c, unpacked with dpkg -x into a temporary root, and its
# binary run from there (`memacct help`, `memacct top --help`). No root
# needed; nothing is installed on the host.
set -eu
deb=$1
fail() { echo "deb-check: FAIL: $*" >&2; exit 1; }

info=$(dpkg-deb -I "$deb")
for field in 'Package: memacct' 'Architecture: ' 'Maintainer: ' 'Installed-Size: ' \
	'Section: admin' 'Description: '; do
	echo "$info" | grep -q "^ $field" || fail "control has no '$field'"
done
version=$(sed -n 's/^#define MEMACCT_VERSION "\(.*\)"/\1/p' "$(dirname "$0")/../user/util.h")
echo "$info" | grep -q "^ Version: $version\$" || fail "Version is not $version (user/util.h)"
# Depends: every shared library the binary needs, by its Debian package
depends=$(echo "$info" | sed -n 's/^ Depends: //p')
for lib in libbpf1 libc6 libjansson4 libmicrohttpd12 libncursesw6 libsmartcols1 libtinfo6; do
	echo "$depends" | grep -q "$lib" || fail "Depends lacks $lib: $depends"
done

list=$(dpkg-deb -c "$deb")
for f in ./usr/sbin/memacct ./usr/share/man/man1/memacct.1.gz \
	./usr/share/bash-completion/completions/memacct \
	./usr/share/zsh/vendor-completions/_memacct \
	./usr/lib/systemd/system/memacct.service ./etc/logrotate.d/memacct \
	./usr/share/doc/memacct/copyright ./usr/share/doc/memacct/README.md \
	./usr/share/doc/memacct/daemon.md ./usr/share/doc/memacct/metrics.md \
	./usr/share/doc/memacct/memacct.report.v1.schema.json \
	./usr/share/doc/memacct/memacct.record.v1.schema.json \
	./usr/lib/python3/dist-packages/memacct.py ./usr/include/memacct_mark.h; do
	echo "$list" | grep -q " $f\$" || fail "$f is not in the package"
done
echo "$list" | grep -v ' root/root ' && fail "files not owned by root/root"
echo "$list" | grep -q '^-rwxr-xr-x .* ./usr/sbin/memacct$' || fail "memacct is not 0755"

root=$(mktemp -d /tmp/memacct-deb-check.XXXXXX)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
"$root/usr/sbin/memacct" help > "$root/help.txt" || fail "memacct help exited $?"
grep -q '^  memacct top ' "$root/help.txt" || fail "memacct help lists no top"
"$root/usr/sbin/memacct" top --help > /dev/null || fail "memacct top --help exited $?"
# the unit runs the packaged binary and points at the packaged docs
unit=$root/usr/lib/systemd/system/memacct.service
grep -q '^ExecStart=/usr/sbin/memacct daemon ' "$unit" || fail "unit ExecStart: $(grep ExecStart "$unit")"
# the OOM post-mortems' directory (user/model/daemon_oom.h OOM_LOG_DEFAULT)
# is the service's and the DaemonSet's: writable under ProtectSystem=strict
# and a read-only root (issue 41 item 7: both lost every post-mortem)
oomdir=$(sed -n 's|^#define OOM_LOG_DEFAULT[^"]*"\(.*\)/[^/]*"$|\1|p' \
	"$(dirname "$0")/../user/model/daemon_oom.h")
[ "$oomdir" = /run/memacct ] || fail "OOM_LOG_DEFAULT's directory is $oomdir: update the unit and the DaemonSet"
grep -q '^RuntimeDirectory=memacct$' "$unit" && grep -q '^RuntimeDirectoryPreserve=yes$' "$unit" ||
	fail "unit: no RuntimeDirectory=memacct kept across restarts for $oomdir"
grep -q "mountPath: $oomdir}" "$(dirname "$0")/../docs/deploy/daemonset.yaml" ||
	fail "daemonset.yaml mounts no volume at $oomdir (its root file system is read-only)"
doc=$(sed -n 's|^Documentation=file://||p' "$unit")
[ -f "$root$doc" ] || fail "unit Documentation=$doc is not in the package"
# the unit's sandboxing, as systemd rates it (7.0 MEDIUM before its hardening)
if command -v systemd-analyze > /dev/null; then
	systemd-analyze security --offline=yes --threshold=50 "$unit" > "$root/security.txt" 2>&1 ||
		fail "unit exposure over 5.0: $(tail -1 "$root/security.txt")"
fi
echo "$info" | grep -q 'conffiles' || fail "no conffiles (/etc/logrotate.d/memacct)"
# prerm: removing the package detaches the pinned kernel side, upgrading
# keeps it (docs/daemon.md "Uninstall"); run here with its memacct and
# systemctl stubs that log their arguments
echo "$info" | grep -q ' prerm  ' || fail "no prerm in the package's control area"
dpkg-deb -e "$deb" "$root/DEBIAN"
grep -q '^[[:space:]]*/usr/sbin/memacct detach' "$root/DEBIAN/prerm" || fail "prerm runs no memacct detach"
printf '#!/bin/sh\necho "memacct $*" >> %s/calls\n' "$root" > "$root/stub"
chmod +x "$root/stub"
sed "s|/usr/sbin/memacct|$root/stub|" "$root/DEBIAN/prerm" > "$root/prerm"
for a in upgrade failed-upgrade remove; do
	: > "$root/calls"
	sh "$root/prerm" "$a" 0.1.0 || fail "prerm $a exited $?"
	case $a in
	remove) grep -qx 'memacct detach' "$root/calls" || fail "prerm remove: no detach" ;;
	*) [ ! -s "$root/calls" ] || fail "prerm $a detached: $(cat "$root/calls")" ;;
	esac
done
zcat "$root/usr/share/man/man1/memacct.1.gz" | grep -q '^\.SS top' || fail "man page has no top"
bash -n "$root/usr/share/bash-completion/completions/memacct" || fail "bash completion"
echo "deb-check: $deb ok: $(echo "$list" | grep -c '^-') files; Depends: $depends"
