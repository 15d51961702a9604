# Sourced by .ci/debian13.sh and .ci/aarch64.sh: a chroot's bind mounts undone and the chroot removed, safely.
# Uses the caller's ROOT (the chroot) and MOUNTS (its mounts under ROOT, in the order they are made).

# Undoes the mounts, in reverse order (lazily where a plain unmount fails).
unmount_all() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
    if mountpoint -q "$ROOT/${MOUNTS[i]}"; then umount "$ROOT/${MOUNTS[i]}" || umount -l "$ROOT/${MOUNTS[i]}"; fi
  done
}

# Deletes the chroot only when nothing is mounted in it any more (the repository and ../shared are bound inside).
remove_root() {
  unmount_all
  local m
  for m in "${MOUNTS[@]}"; do
    if mountpoint -q "$ROOT/$m"; then
      echo "$(basename "$0"): $ROOT/$m is still mounted; leaving $ROOT in place" >&2
      return 0
    fi
  done
  rm -rf "$ROOT"
}
