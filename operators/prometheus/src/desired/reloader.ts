// The pods' configuration reloader: a busybox sh script run as an init container (`once`: put a generation in place
// before Prometheus starts) and as a sidecar (install each new candidate generation, reload, keep it only if
// Prometheus accepted it). Prometheus reads its configuration, rule files and credential files only from the live
// directory (an emptyDir), which only ever names a generation Prometheus accepted, so a container restart (an OOM
// kill) or a pod recreation never loads a refused configuration. Layout of the live directory, like the kubelet's
// own for projected volumes:
//
//   ..gen-<id>/prometheus.yml, rules/<file>, assets/<key>, generation   one complete, checked generation
//   ..data -> ..gen-<id>                                                  swapped by rename(2): atomic
//   config -> ..data, rules -> ..data/rules, assets -> ..data/assets     the paths prometheus.yml names
//   reloader/state                                                        accepted=, refused=, message= (served
//                                                                         by Prometheus at /user/state)
//
// Sources, both projected volumes: the candidate (the config Secret and the rule shards the operator writes) and the
// last-good generation (a copy the operator makes once every pod accepted a generation; see generation.ts for how a
// generation is named and checked). Paths and the interval come from the environment so a test can run the script
// against temporary directories and a real Prometheus.

/** The config Secret's key holding prometheus.yml, gzipped (as prometheus-operator stores it). */
export const CONFIG_KEY = "prometheus.yml.gz";
/** The port Prometheus listens on, named "web". */
export const WEB_PORT = 9090;
/** How often (seconds) the reloader compares the candidate with what Prometheus last accepted. */
export const RELOAD_CHECK_SECONDS = 5;
/** The emptyDir holding the generation Prometheus runs (mounted here in every container of the pod). */
export const LIVE_DIR = "/etc/prometheus";
/** Where the candidate generation (config Secret + rule shards) is projected, in the reloader and init containers. */
export const CANDIDATE_DIR = "/etc/capstan/candidate";
/** Where the last-good generation (its Secret + rule shards) is projected, in the init container. */
export const LAST_GOOD_DIR = "/etc/capstan/last-good";
/** The reloader's state directory in the live emptyDir, served by Prometheus (`--web.user-assets`) at /user/. */
export const RELOADER_STATE_DIR = `${LIVE_DIR}/reloader`;
/** The path of the reloader's state on Prometheus's web port. */
export const RELOADER_STATE_PATH = "/user/state";
/** The key of the last-good Secret naming the Prometheus version whose pods accepted it. */
export const VERSION_KEY = "version";

/**
 * `sh -c RELOADER_SCRIPT reloader [once]`. Without `once` (the sidecar), every CHECK_SECONDS: when the candidate's
 * generation differs from the accepted one and from the last refused one, and Prometheus is ready, copy it into
 * `..gen-<id>` and check every file, swap `..data` to it, POST /-/reload; on 200 keep it (accepted), on 500 swap
 * back (refused, with Prometheus's message), on no answer swap back and retry. When the candidate is the accepted
 * generation again after a refusal (the change reverted), reload once, so Prometheus's reload status clears. With `once` (the init container):
 * keep the generation this pod already accepted (the emptyDir outlives a sandbox restart), else the last-good
 * generation of this Prometheus version, else the candidate (first start; or an upgrade: the last-good was proven on
 * another version), else the last-good of another version; waiting while none is complete. SIGTERM ends it at once
 * (it sleeps in the background and waits, so the trap runs).
 */
export const RELOADER_SCRIPT = `live="\${LIVE_DIR:-${LIVE_DIR}}"
cand="\${CANDIDATE_DIR:-${CANDIDATE_DIR}}"
good="\${LAST_GOOD_DIR:-${LAST_GOOD_DIR}}"
host="\${PROMETHEUS_HOST:-127.0.0.1}"
port="\${PROMETHEUS_PORT:-${WEB_PORT}}"
every="\${CHECK_SECONDS:-${RELOAD_CHECK_SECONDS}}"
version="\${PROMETHEUS_VERSION:-}"
st="$live/reloader"
gen_of() {
  [ -s "$1/config.sha256" ] || return 1
  cat "$1/config.sha256" "$1/rules.sha256" "$1/assets.sha256" 2>/dev/null | sha256sum | cut -c1-16
}
# Copies the generation in directory $1 to $live/..gen-<id>, checks every file of the copy, prints the id.
snapshot() {
  g="$(gen_of "$1")" || return 1
  [ -d "$live/..gen-$g" ] && { echo "$g"; return 0; }
  t="$live/..tmp"
  rm -rf "$t" && mkdir -p "$t/rules" "$t/assets" || return 1
  if cp "$1/config.sha256" "$1/rules.sha256" "$1/assets.sha256" "$1/${CONFIG_KEY}" "$t/" 2>/dev/null; then
    while read -r sum f; do cp "$1/$f" "$t/rules/$f" 2>/dev/null || break; done < "$t/rules.sha256"
    while read -r sum f; do cp "$1/$f" "$t/assets/$f" 2>/dev/null || break; done < "$t/assets.sha256"
    if [ "$(cat "$t/config.sha256" "$t/rules.sha256" "$t/assets.sha256" | sha256sum | cut -c1-16)" = "$g" ] &&
      (cd "$t" && sha256sum -c -s config.sha256 2>/dev/null) &&
      { [ ! -s "$t/rules.sha256" ] || (cd "$t/rules" && sha256sum -c -s ../rules.sha256 2>/dev/null); } &&
      { [ ! -s "$t/assets.sha256" ] || (cd "$t/assets" && sha256sum -c -s ../assets.sha256 2>/dev/null); } &&
      gunzip -c "$t/${CONFIG_KEY}" > "$t/prometheus.yml" && echo "$g" > "$t/generation" &&
      mv "$t" "$live/..gen-$g"; then
      echo "$g"
      return 0
    fi
  fi
  rm -rf "$t"
  return 1
}
point() {
  ln -sfn "..gen-$1" "$live/..data.tmp" && mv -Tf "$live/..data.tmp" "$live/..data"
}
save() {
  printf 'accepted=%s\\nrefused=%s\\nmessage=%s\\n' "$accepted" "$refused" "$message" > "$st/state.tmp" &&
    mv -f "$st/state.tmp" "$st/state"
}
ready() {
  wget -q -O /dev/null "http://$host:$port/-/ready" 2>/dev/null
}
# POST /-/reload: 0 accepted, 2 refused (Prometheus's words in $body), 1 no answer.
reload() {
  reply="$(printf 'POST /-/reload HTTP/1.0\\r\\nHost: %s:%s\\r\\nContent-Length: 0\\r\\n\\r\\n' "$host" "$port" |
    timeout 300 nc "$host" "$port" 2>&1 | tr -d '\\r')"
  body="$(echo "$reply" | sed '1,/^$/d' | tr '\\n' ' ' | sed 's/ *$//')"
  case "$(echo "$reply" | head -n 1 | cut -d ' ' -f 2)" in
    200) return 0 ;;
    500) return 2 ;;
    *) return 1 ;;
  esac
}
mkdir -p "$st" || exit 1
for n in config rules assets; do
  [ -L "$live/$n" ] && continue
  if [ "$n" = config ]; then ln -s ..data "$live/config"; else ln -s "..data/$n" "$live/$n"; fi || exit 1
done
accepted=""
refused=""
message=""
if [ -f "$st/state" ]; then
  accepted="$(sed -n 's/^accepted=//p' "$st/state")"
  refused="$(sed -n 's/^refused=//p' "$st/state")"
  message="$(sed -n 's/^message=//p' "$st/state")"
fi
if [ "$1" = once ]; then
  if [ -n "$accepted" ] && [ -d "$live/..gen-$accepted" ]; then
    point "$accepted" && echo "keeping generation $accepted, which this pod's Prometheus accepted" && exit 0
  fi
  while true; do
    if [ "$(cat "$good/${VERSION_KEY}" 2>/dev/null)" = "$version" ] && g="$(snapshot "$good")"; then
      accepted="$g" && point "$g" && save && echo "starting from the last good generation $g" && exit 0
    fi
    if g="$(snapshot "$cand")"; then
      accepted="" && point "$g" && save &&
        echo "starting from generation $g, not yet accepted by Prometheus $version (no last good generation of this version)" &&
        exit 0
    fi
    if g="$(snapshot "$good")"; then
      accepted="" && point "$g" && save &&
        echo "starting from the last good generation $g of Prometheus $(cat "$good/${VERSION_KEY}"), the candidate being incomplete" &&
        exit 0
    fi
    echo "waiting: neither the last good nor the candidate generation is complete (a Secret the kubelet has not delivered yet, or the operator stopped between two writes)"
    sleep 2
  done
fi
# PID 1 of its container: without a trap SIGTERM is ignored, and the pod would wait out its grace period.
trap 'exit 0' TERM INT
noted=""
while true; do
  cur="$(readlink "$live/..data" | sed 's/^\\.\\.gen-//')"
  if [ -n "$accepted" ] && [ "$cur" != "$accepted" ] && [ -d "$live/..gen-$accepted" ]; then
    point "$accepted" && cur="$accepted" && echo "generation $accepted put back in place (the reloader stopped during a reload)"
  fi
  if [ -z "$accepted" ] && [ -n "$cur" ] && ready; then
    accepted="$cur" && save && echo "Prometheus started with generation $cur"
  fi
  g="$(gen_of "$cand")"
  # The candidate is the accepted generation again (a refused change reverted): reload it once, so Prometheus's
  # reload status (and the alerts on it) says success again.
  if [ -n "$refused" ] && [ -n "$g" ] && [ "$g" = "$accepted" ] && ready && reload; then
    refused="" && message="" && save && echo "generation $accepted reloaded: the refused change was reverted"
  fi
  if [ -n "$accepted" ] && [ -n "$g" ] && [ "$g" != "$accepted" ] && [ "$g" != "$refused" ] && ready; then
    if n="$(snapshot "$cand")"; then
      point "$n"
      reload
      rc=$?
      if [ "$rc" = 0 ]; then
        accepted="$n" && refused="" && message="" && save && echo "generation $n loaded"
        for d in "$live"/..gen-*; do [ "$d" = "$live/..gen-$n" ] || rm -rf "$d"; done
      elif [ "$rc" = 2 ]; then
        point "$accepted" && refused="$n" && message="$body" && save && rm -rf "$live/..gen-$n"
        echo "Prometheus refused generation $n ($body); generation $accepted stays in place"
      else
        point "$accepted"
        echo "no answer from Prometheus to the reload of generation $n ($reply); retrying"
      fi
    elif [ "$noted" != "$g" ]; then
      noted="$g" && echo "generation $g is not complete yet (a rule shard or the config Secret not delivered); waiting"
    fi
  fi
  sleep "$every" &
  wait $!
done
`;
