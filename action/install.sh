#!/bin/sh
# The install step of the claude-sandbox GitHub Action (action.yml), run as
# root on the runner: RELEASE USER, with the release's checksums in
# SHA256SUMS, which action.yml pins (not the release's own list, which
# whoever could replace the binary could replace too). It downloads the
# release's static binary for this machine from RELEASE over https only,
# redirects too, checks it against its pinned checksum (a binary that does
# not match is never run), lets bwrap create user namespaces on an Ubuntu
# 23.10+ runner, and runs the installer for USER with the action's inputs
# (INPUT_* variables). The launcher's path goes to the step's outputs as
# launcher.
set -eu
set -f # input values are never globs
release=$1
user=$2
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*)
	echo "claude-sandbox: no build for $(uname -m) (amd64 and arm64 are released)" >&2
	exit 1
	;;
esac
bin=claude-sandbox-linux-$arch
sum=$(printf '%s\n' "${SHA256SUMS:-}" | grep -x "[0-9a-f]\{64\}  $bin" || true)
if [ -z "$sum" ]; then
	echo "claude-sandbox: action.yml pins no checksum for $bin; nothing was installed" >&2
	exit 1
fi
if ! command -v curl >/dev/null 2>&1; then
	echo "claude-sandbox: the action needs curl, which downloads over https only; nothing was installed" >&2
	exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! curl -fsSL --proto '=https' --proto-redir '=https' "$release/$bin" -o "$dir/$bin"; then
	echo "claude-sandbox: cannot download $bin from $release over https; nothing was installed" >&2
	exit 1
fi
(cd "$dir" && printf '%s\n' "$sum" | sha256sum -c - >/dev/null) || {
	echo "claude-sandbox: $bin does not match the checksum action.yml pins for it; nothing was installed" >&2
	exit 1
}
chmod +x "$dir/$bin"

# Ubuntu 23.10 and later deny user namespaces to unprivileged processes
# that AppArmor does not confine, and bwrap needs one for the runner's user
# (docs/ci.md, as the repository's own CI does). The runner is thrown away
# after the job.
if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || true)" = 1 ]; then
	sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0
fi

set -- install --user "$user"
[ -n "${INPUT_CLAUDE_VERSION:-}" ] && set -- "$@" --claude-version "$INPUT_CLAUDE_VERSION"
[ "${INPUT_NO_FORGE:-false}" = true ] && set -- "$@" --no-forge
[ -n "${INPUT_NETWORK:-}" ] && set -- "$@" --network "$INPUT_NETWORK"
[ -n "${INPUT_CREDENTIALS:-}" ] && set -- "$@" --credentials "$INPUT_CREDENTIALS"

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
add_list --allow-write "${INPUT_ALLOW_WRITE:-}"
add_list --allow-write-executable "${INPUT_ALLOW_WRITE_EXECUTABLE:-}"
add_list --sandbox-cache "${INPUT_SANDBOX_CACHE:-}"
add_list --pass-env "${INPUT_PASS_ENV:-}"
add_list --protect "${INPUT_PROTECT:-}"
add_list --allow-domain "${INPUT_ALLOW_DOMAIN:-}"
add_list --allow-preset "${INPUT_ALLOW_PRESET:-}"
add_list --allow-ip "${INPUT_ALLOW_IP:-}"
add_list --forge "${INPUT_FORGE:-}"
add_list --push-ref "${INPUT_PUSH_REF:-}"
add_list --push-delete "${INPUT_PUSH_DELETE:-}"
add_list --push-force "${INPUT_PUSH_FORCE:-}"
add_list --forge-api "${INPUT_FORGE_API:-}"
if [ -n "$set_args" ]; then
	old_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2086 # one argument per line, split on newlines only
	set -- "$@" $set_args
	IFS=$old_ifs
fi

"$dir/$bin" "$@"
launcher=/usr/local/bin/claude
if [ ! -x "$launcher" ]; then
	echo "claude-sandbox: the install left no launcher at $launcher" >&2
	exit 1
fi
echo "launcher=$launcher" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT names no file}"
