# shellcheck shell=bash
# Sourced by scripts: a throwaway nginx that accepts PUT uploads into a folder.
#   start_upload_server ROOT [ADDRESS]   sets UPLOAD_PORT and UPLOAD_PID; serves ROOT on ADDRESS:port
#   stop_upload_server
# Besides access.log, nginx writes timing.log: each request's end (epoch seconds), duration and path.
# UPLOAD_EXEC_PREFIX, optional: a command prefix (split on blanks) that nginx and the port probes
# run under, e.g. UPLOAD_EXEC_PREFIX="ip netns exec NS" serves from inside network namespace NS.
# UPLOAD_PID is then the pid of that prefix command (ip netns exec execs nginx: the same process).
# UPLOAD_STATE_PARENT, optional: where nginx's own folder (config, logs, request-body buffers) is
# made; default the system's temporary folder.
UPLOAD_PID=""
UPLOAD_PORT=""
UPLOAD_CONF_DIR=""

# The prefix as words (none when UPLOAD_EXEC_PREFIX is unset or empty).
upload_exec_prefix() {
  upload_prefix=()
  [ -n "${UPLOAD_EXEC_PREFIX:-}" ] && read -r -a upload_prefix <<< "$UPLOAD_EXEC_PREFIX"
  return 0
}

# free_port [ADDRESS]: a TCP port free on ADDRESS (default 127.0.0.1), probed under the prefix.
free_port() {
  local upload_prefix
  upload_exec_prefix
  ${upload_prefix[@]+"${upload_prefix[@]}"} python3 -c 'import socket, sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1]); s.close()' "${1:-127.0.0.1}"
}

start_upload_server() {
  local root="$1" address="${2:-127.0.0.1}"
  local nginx_bin upload_prefix
  upload_exec_prefix
  nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
  [ -x "$nginx_bin" ] || { echo "nginx is not installed (apt-get install nginx-light)" >&2; return 1; }
  UPLOAD_CONF_DIR="$(mktemp -d -p "${UPLOAD_STATE_PARENT:-${TMPDIR:-/tmp}}")"
  UPLOAD_PORT="$(free_port "$address")"
  mkdir -p "$root"
  cat > "$UPLOAD_CONF_DIR/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $UPLOAD_CONF_DIR/nginx.pid;
error_log $UPLOAD_CONF_DIR/error.log warn;
events { worker_connections 1024; }
http {
  access_log $UPLOAD_CONF_DIR/access.log;
  # When each request ended (epoch seconds, ms resolution) and how long it took from its first byte:
  # scripts/bench-upload splits a run into start, transfer and end with it.
  log_format timing '\$msec \$request_time \$request_uri';
  access_log $UPLOAD_CONF_DIR/timing.log timing;
  client_body_temp_path $UPLOAD_CONF_DIR/body;
  proxy_temp_path $UPLOAD_CONF_DIR/proxy;
  fastcgi_temp_path $UPLOAD_CONF_DIR/fastcgi;
  uwsgi_temp_path $UPLOAD_CONF_DIR/uwsgi;
  scgi_temp_path $UPLOAD_CONF_DIR/scgi;
  server {
    listen $address:$UPLOAD_PORT;
    root $root;
    client_max_body_size 0;
    location / {
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }
  }
}
CONF
  ${upload_prefix[@]+"${upload_prefix[@]}"} "$nginx_bin" -c "$UPLOAD_CONF_DIR/nginx.conf" -p "$UPLOAD_CONF_DIR" &
  UPLOAD_PID=$!
  for _ in $(seq 1 50); do
    kill -0 "$UPLOAD_PID" 2>/dev/null || break
    if ${upload_prefix[@]+"${upload_prefix[@]}"} python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('$address', $UPLOAD_PORT)))" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "nginx did not start; its log:" >&2
  cat "$UPLOAD_CONF_DIR/error.log" >&2 || true
  return 1
}

stop_upload_server() {
  if [ -n "$UPLOAD_PID" ]; then
    kill "$UPLOAD_PID" 2>/dev/null || true
    wait "$UPLOAD_PID" 2>/dev/null || true
    UPLOAD_PID=""
  fi
  [ -n "$UPLOAD_CONF_DIR" ] && rm -rf "$UPLOAD_CONF_DIR"
  UPLOAD_CONF_DIR=""
}
