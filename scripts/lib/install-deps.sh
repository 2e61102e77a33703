# Sourced by scripts: installs the Debian packages Flow needs when they are missing.
need_packages=()

ensure_system_packages() {
  local wanted=(libzmq3-dev libsqlite3-dev zlib1g-dev pkg-config "$@")
  need_packages=()
  for package in "${wanted[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || need_packages+=("$package")
  done
  [ ${#need_packages[@]} -eq 0 ] && return 0
  echo "==> installing ${need_packages[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_packages[@]}" >/dev/null
}
