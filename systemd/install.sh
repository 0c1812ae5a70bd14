#!/usr/bin/env bash
# Installs the satoken agent as a systemd service: the jar, the launcher, the unit and an example config.
# Safe to run again: files are replaced (by rename, never rewritten in place, so a running agent keeps
# its jar), and an existing /etc/satoken/agent.yaml is never overwritten.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: install.sh [--prefix DIR] [--destdir DIR] [--jar PATH]
       install.sh --uninstall [--purge] [--prefix DIR] [--destdir DIR]

Installs the satoken node agent as a systemd service:
  PREFIX/lib/satoken/satoken-agent.jar             0644
  PREFIX/bin/satoken-agent                         0755, the launcher, pointing at that jar
  SYSTEMD_UNIT_DIR/satoken-agent.service           0644
  /etc/satoken/agent.yaml                          0640, only if absent; edit it, it is never overwritten
and the system user `satoken` the service runs as. The agent also needs API credentials in
/etc/satoken/kubeconfig (0640, group satoken), which this script does not make. Then:
  systemctl enable --now satoken-agent

Options:
  --prefix DIR    install under DIR (default /usr/local)
  --destdir DIR   stage everything under DIR instead of / (default: $DESTDIR); no user is made and
                  systemd is not told, as for a package build
  --jar PATH      the agent's jar (default: agent/target/satoken-agent.jar, built by mvn package)
  --uninstall     remove what install.sh installs, keeping /etc/satoken/agent.yaml and the token dirs
                  /var/lib/satoken and /run/satoken
  --purge         with --uninstall: remove those too (the satoken user is kept)
  -h, --help      show this help
Environment: DESTDIR, SYSTEMD_UNIT_DIR (default /etc/systemd/system).
EOF
}

die() {
  echo "install.sh: $*" >&2
  exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")

prefix=/usr/local
destdir=${DESTDIR:-}
jar=$repo/agent/target/satoken-agent.jar
unit_dir=${SYSTEMD_UNIT_DIR:-/etc/systemd/system}
action=install
purge=no

while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --destdir) [ $# -ge 2 ] || die "--destdir needs a directory"; destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#*=}; shift ;;
    --jar) [ $# -ge 2 ] || die "--jar needs a file"; jar=$2; shift 2 ;;
    --jar=*) jar=${1#*=}; shift ;;
    --uninstall) action=uninstall; shift ;;
    --purge) purge=yes; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

case $prefix in /*) ;; *) die "--prefix must be an absolute path, got \"$prefix\"" ;; esac
case $prefix in *[[:space:]\#\&\\]*) die "--prefix must not hold blanks, #, & or \\, got \"$prefix\"" ;; esac
case $unit_dir in /*) ;; *) die "SYSTEMD_UNIT_DIR must be an absolute path, got \"$unit_dir\"" ;; esac
[ "$purge" = no ] || [ "$action" = uninstall ] || die "--purge goes with --uninstall"
prefix=${prefix%/}
destdir=${destdir%/}

user=satoken
bin_file=$prefix/bin/satoken-agent
lib_dir=$prefix/lib/satoken
jar_file=$lib_dir/satoken-agent.jar
unit_file=$unit_dir/satoken-agent.service
conf_dir=/etc/satoken
conf_file=$conf_dir/agent.yaml
token_dirs=(/var/lib/satoken /run/satoken)

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT

# systemd is told about the unit only on a live install on a host that runs systemd.
systemd_live() {
  [ -z "$destdir" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]
}

# put SRC DEST MODE: installs SRC as DEST with MODE, replacing DEST by rename.
put() {
  local dest=$destdir$2
  mkdir -p -- "$(dirname -- "$dest")"
  local tmp
  tmp=$(mktemp -- "$dest.XXXXXX")
  if ! { cat -- "$1" >"$tmp" && chmod "$3" -- "$tmp" && mv -f -- "$tmp" "$dest"; }; then
    rm -f -- "$tmp"
    die "could not install $dest"
  fi
  echo "installed $dest"
}

# rendered SRC: SRC with /usr/local/ replaced by the prefix, for the unit's paths.
rendered() {
  sed "s#/usr/local/#$prefix/#g" -- "$1"
}

make_user() {
  if [ -n "$destdir" ]; then
    echo "not making the $user user (staging into $destdir)"
  elif getent passwd "$user" >/dev/null 2>&1; then
    echo "user $user exists"
  elif [ "$(id -u)" != 0 ]; then
    echo "not making the $user user (not root); the service needs it: useradd --system --user-group $user"
  elif command -v useradd >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /var/lib/satoken \
      --shell /usr/sbin/nologin --comment "satoken agent" "$user"
    echo "made the $user user"
  else
    echo "not making the $user user (no useradd); the service needs it"
  fi
}

install_all() {
  [ -f "$jar" ] || die "$jar not found; build it with: mvn -B -q -DskipTests package (or pass --jar)"
  make_user

  put "$jar" "$jar_file" 0644

  # The launcher finds the jar next to a source checkout; the installed one points at the installed jar.
  local launcher=$work/satoken-agent
  sed "s#^jar=\${SATOKEN_AGENT_JAR:-.*}\$#jar=\${SATOKEN_AGENT_JAR:-$jar_file}#" \
    -- "$repo/agent/bin/satoken-agent" >"$launcher"
  grep -q "^jar=\${SATOKEN_AGENT_JAR:-$jar_file}\$" -- "$launcher" \
    || die "agent/bin/satoken-agent has no jar= line to point at $jar_file"
  put "$launcher" "$bin_file" 0755

  local unit=$work/satoken-agent.service
  rendered "$here/satoken-agent.service" >"$unit"
  put "$unit" "$unit_file" 0644

  if [ -e "$destdir$conf_file" ]; then
    echo "kept $destdir$conf_file"
  else
    mkdir -p -- "$destdir$conf_dir"
    local tmp
    tmp=$(mktemp -- "$destdir$conf_file.XXXXXX")
    cat -- "$here/agent.yaml" >"$tmp"
    chmod 0640 -- "$tmp"
    # The agent runs as $user and must read its config; root keeps it otherwise.
    if [ -z "$destdir" ] && getent group "$user" >/dev/null 2>&1; then
      chgrp "$user" -- "$tmp"
    fi
    # -n: an agent.yaml that appeared meanwhile is still not overwritten
    mv -n -- "$tmp" "$destdir$conf_file"
    rm -f -- "$tmp"
    echo "installed $destdir$conf_file"
  fi

  if systemd_live; then
    systemctl daemon-reload
    echo "next: put the agent's kubeconfig in $conf_dir/kubeconfig, then: systemctl enable --now satoken-agent"
  fi
}

remove() {
  if [ -e "$destdir$1" ] || [ -L "$destdir$1" ]; then
    rm -rf -- "$destdir$1"
    echo "removed $destdir$1"
  fi
}

uninstall_all() {
  if systemd_live && systemctl cat satoken-agent.service >/dev/null 2>&1; then
    systemctl disable --now satoken-agent.service
  fi
  remove "$bin_file"
  remove "$jar_file"
  rmdir -- "$destdir$lib_dir" 2>/dev/null || true
  remove "$unit_file"
  if [ "$purge" = yes ]; then
    remove "$conf_file"
    rmdir -- "$destdir$conf_dir" 2>/dev/null \
      || { [ ! -d "$destdir$conf_dir" ] || echo "kept $destdir$conf_dir: it holds files install.sh did not make"; }
    local dir
    for dir in "${token_dirs[@]}"; do
      remove "$dir"
    done
  else
    [ ! -e "$destdir$conf_file" ] || echo "kept $destdir$conf_file (--purge removes it)"
  fi
  if systemd_live; then
    systemctl daemon-reload
  fi
}

case $action in
  install) install_all ;;
  uninstall) uninstall_all ;;
esac
