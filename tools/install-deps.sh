#!/bin/sh
# install-deps.sh PKG... - installs the missing Debian packages (as root).
# SPDX-License-Identifier: Apache-2.0
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "missing packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null || {
	echo "apt-get install failed for:$missing" >&2
	exit 1
}
