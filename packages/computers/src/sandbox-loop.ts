/**
 * The bash loop that is a computer's long-lived main process inside bubblewrap.
 *
 * The runtime writes one frame per command to its stdin: the byte length, a newline, the
 * bytes. Each command runs in a fresh `bash -c` with /dev/null as stdin and its output in two
 * files under the control directory (files, not pipes, so the runtime knows all output a
 * command produced is there once its status arrives, whatever its background processes do).
 * The status `<n> <exit code>` goes back on fd 4, which commands do not inherit.
 *
 * `LC_ALL=C` is a plain (unexported) assignment: the loop counts bytes, commands keep LANG.
 */
export const CONTROL_DIR = "/run/computer";

export const STATUS_FD = 4;

export const SANDBOX_LOOP = `LC_ALL=C
n=0
printf 'ready\\n' >&${STATUS_FD}
while IFS= read -r len; do
  IFS= read -r -N "$len" cmd || break
  n=$((n+1))
  /bin/bash -c "$cmd" </dev/null >"${CONTROL_DIR}/$n.out" 2>"${CONTROL_DIR}/$n.err" ${STATUS_FD}>&-
  printf '%s %s\\n' "$n" "$?" >&${STATUS_FD}
done`;

/** The frame the loop reads for one command. */
export function commandFrame(command: string): Buffer {
  const bytes = Buffer.from(command, "utf8");
  return Buffer.concat([Buffer.from(`${bytes.length}\n`), bytes]);
}
