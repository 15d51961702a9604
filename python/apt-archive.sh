# Sourced by python/build-wheel.sh and .ci/debian13.sh: the Debian archive this machine's own apt sources name
# (/etc/apt/sources.list.d/*.sources in deb822 form, /etc/apt/sources.list and *.list in one-line form), so that
# a build follows the user's mirror and the repository names no archive host.
#
#   apt_archive_uri SUITE   prints the first URI whose entry serves SUITE (bookworm, bookworm-security...),
#                           or fails with a message naming what it looked for. Safe under `set -euo pipefail`.
apt_archive_uri() {
  local suite=$1 uri
  uri=$(
    {
      # deb822 stanzas: a URIs: line and a Suites: line in one paragraph (blank lines part them).
      for f in /etc/apt/sources.list.d/*.sources; do
        if [ -f "$f" ]; then awk -v suite="$suite" '
          /^[[:space:]]*#/ { next }
          /^[[:space:]]*$/ { if (uri != "" && hit) print uri; uri = ""; hit = 0; next }
          tolower($1) == "uris:" { uri = $2 }
          tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) hit = 1 }
          END { if (uri != "" && hit) print uri }' "$f"; fi
      done
      # One-line entries: deb [options] URI SUITE COMPONENTS...
      for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        if [ -f "$f" ]; then awk -v suite="$suite" '
          $1 == "deb" || $1 == "deb-src" {
            i = 2
            if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == suite) print $i
          }' "$f"; fi
      done
    } | awk 'NR == 1' # the first (reading all: no broken pipe under pipefail)
  )
  if [ -z "$uri" ]; then
    echo "no apt source of this machine serves '$suite' (looked in /etc/apt/sources.list and" \
      "/etc/apt/sources.list.d/): add Debian's archive (or your mirror) there" >&2
    return 1
  fi
  printf '%s\n' "${uri%/}"
}
