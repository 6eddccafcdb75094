#!/bin/sh
# The claude-sandbox devcontainer feature: runs as root at image build, with
# the options as upper-cased variables (CLAUDEVERSION, ALLOWWRITE, ...) and
# the CLI's _REMOTE_USER and friends. It picks the prebuilt static binary
# for this machine and runs its installer, which copies the binary out of
# this directory (deleted after the build) to /usr/libexec/claude-sandbox.
set -eu
set -f # option values are never globs

here=$(cd "$(dirname "$0")" && pwd)
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*)
	echo "claude-sandbox feature: no build for $(uname -m) (amd64 and arm64 are shipped)" >&2
	exit 1
	;;
esac
bin="$here/bin/claude-sandbox-linux-$arch"
if [ ! -x "$bin" ]; then
	echo "claude-sandbox feature: $bin is missing; the package was not built with 'mage feature:package'" >&2
	exit 1
fi

# Namespaces are often unavailable while an image builds; the container's
# postStartCommand checks the sandbox on the host it runs on.
set -- install --skip-probe
user=${REMOTEUSER:-${_REMOTE_USER:-}}
[ -n "$user" ] && set -- "$@" --user "$user"
[ -n "${CLAUDEVERSION:-}" ] && set -- "$@" --claude-version "$CLAUDEVERSION"
[ "${NOFORGE:-false}" = true ] && set -- "$@" --no-forge
# The CLI passes the modes' defaults too, so the conf states the mode the
# options chose, also over a conf an earlier install wrote.
[ -n "${NETWORK:-}" ] && set -- "$@" --network "$NETWORK"
[ -n "${CREDENTIALS:-}" ] && set -- "$@" --credentials "$CREDENTIALS"

# Comma-separated lists, one flag per item; blanks around items are dropped.
add_list() {
	flag=$1
	list=$2
	old_ifs=$IFS
	IFS=,
	for item in $list; do
		item=$(printf '%s' "$item" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		[ -n "$item" ] && set_args="$set_args$(printf '%s\n%s' "$flag" "$item")
"
	done
	IFS=$old_ifs
}
set_args=
add_list --allow-write "${ALLOWWRITE:-}"
add_list --allow-write-executable "${ALLOWWRITEEXECUTABLE:-}"
add_list --sandbox-cache "${SANDBOXCACHE:-}"
add_list --pass-env "${PASSENV:-}"
add_list --protect "${PROTECT:-}"
add_list --allow-domain "${ALLOWDOMAIN:-}"
add_list --allow-preset "${ALLOWPRESET:-}"
add_list --allow-ip "${ALLOWIP:-}"
add_list --forge "${FORGE:-}"
add_list --push-ref "${PUSHREF:-}"
add_list --push-delete "${PUSHDELETE:-}"
add_list --push-force "${PUSHFORCE:-}"
add_list --forge-api "${FORGEAPI:-}"
if [ -n "$set_args" ]; then
	old_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2086 # one argument per line, split on newlines only
	set -- "$@" $set_args
	IFS=$old_ifs
fi

# What the install downloads and the image does not need: apt's package
# lists and cache, npm's cache and the npm install the real binary is copied
# from (together about three times the binaries). Entries there before the
# install are the image's own and stay; only those it added are removed.
tidy="/var/lib/apt/lists /var/cache/apt /var/cache/claude-sandbox ${HOME:-/root}/.npm"
before=$(mktemp)
# shellcheck disable=SC2086 # a list of paths without blanks
find $tidy -xdev >"$before" 2>/dev/null || true

"$bin" "$@"

# shellcheck disable=SC2086
find $tidy -xdev -depth 2>/dev/null | grep -Fxv -f "$before" | while IFS= read -r added; do
	rm -rf "$added"
done
rm -f "$before"
