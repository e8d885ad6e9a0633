# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# apt-private.sh - sourced by fetch-kernels.sh, build-smartcols.sh,
# build-mhd.sh, sysroot.sh and guest-tools.sh: apt_private DIR [ARCH] writes an APT configuration of its own under DIR (state,
# cache, the sources.list read from stdin) and exports APT_CONFIG, so that
# apt-get download / apt-get source reach Debian without touching the host's
# apt state. ARCH (default amd64) is the architecture apt resolves packages
# for, in this configuration only: the host's dpkg never gets a foreign
# architecture (arm64 kernels and sysroot packages). Release files are not checked for expiry (snapshot mirrors).
apt_private() {
	local apt=$1 arch=${2:-amd64}
	mkdir -p "$apt/etc/sources.list.d" "$apt/state/lists/partial" \
		"$apt/cache/archives/partial" "$apt/etc/preferences.d" "$apt/etc/apt.conf.d"
	cat > "$apt/etc/sources.list"
	cat > "$apt/apt.conf" <<CONF
Dir::State "$apt/state";
Dir::State::status "$apt/state/status";
Dir::Cache "$apt/cache";
Dir::Etc::sourcelist "$apt/etc/sources.list";
Dir::Etc::sourceparts "$apt/etc/sources.list.d";
Dir::Etc::preferencesparts "$apt/etc/preferences.d";
Dir::Etc::parts "$apt/etc/apt.conf.d";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Acquire::Languages "none";
Acquire::Check-Valid-Until "false";
APT::Sandbox::User "root";
CONF
	touch "$apt/state/status"
	export APT_CONFIG=$apt/apt.conf
}

# apt_private_suite DIR deb|deb-src [ARCH]: apt_private with the host's own
# suite as its sources (main, and its security and updates archives): the
# binary packages for ARCH, or the sources
apt_private_suite() {
	local apt=$1 kind=$2 arch=${3:-amd64} codename opt
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	opt="signed-by=/usr/share/keyrings/debian-archive-keyring.gpg"
	[ "$kind" = deb ] && opt="arch=$arch $opt"
	apt_private "$apt" "$arch" <<LIST
$kind [$opt] http://deb.debian.org/debian $codename main
$kind [$opt] http://deb.debian.org/debian-security $codename-security main
$kind [$opt] http://deb.debian.org/debian $codename-updates main
LIST
}
