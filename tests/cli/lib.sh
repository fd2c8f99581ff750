# Helpers for the CLI tests, sourced by each *_test.sh. A test runs the `rolly` binary, captures
# its stdout, stderr and exit code, and checks them; every failed check is printed, and the test
# exits 1 at the end when any failed (zstd's tests/cli-tests do the same with expectation files).
#
# Usage in a test:   run "$ROLLY" info "$file"; expect_exit 0; expect_line 'status: ok'

failures=0
out=""
err=""
code=0

# A temporary folder removed when the test exits.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/rolly-cli-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# Runs a command, keeping its stdout in $out, its stderr in $err and its exit code in $code.
run() {
  "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  code=$?
  out="$(cat "$WORK/stdout")"
  err="$(cat "$WORK/stderr")"
  last_command="$*"
}

fail() {
  echo "FAIL: $last_command: $*" >&2
  echo "--- stdout" >&2
  printf '%s\n' "$out" >&2
  echo "--- stderr" >&2
  printf '%s\n' "$err" >&2
  echo "---" >&2
  failures=$((failures + 1))
}

expect_exit() {
  [ "$code" -eq "$1" ] || fail "exit code $code, expected $1"
}

# The exact line on stdout.
expect_line() {
  printf '%s\n' "$out" | grep -qxF -- "$1" || fail "no stdout line: $1"
}

# A line on stdout matching the extended regular expression.
expect_match() {
  printf '%s\n' "$out" | grep -qE -- "$1" || fail "no stdout line matching: $1"
}

expect_no_match() {
  if printf '%s\n' "$out" | grep -qE -- "$1"; then fail "unexpected stdout line matching: $1"; fi
}

# A line on stderr matching the extended regular expression.
expect_err_match() {
  printf '%s\n' "$err" | grep -qE -- "$1" || fail "no stderr line matching: $1"
}

expect_empty_stdout() {
  [ -z "$out" ] || fail "stdout is not empty"
}

expect_empty_stderr() {
  [ -z "$err" ] || fail "stderr is not empty"
}

# Copies file $1 to $2 with the byte at offset $3 (negative: from the end) flipped.
flip_byte() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[int(sys.argv[3])] ^= 0x01
open(sys.argv[2], 'wb').write(data)
PY
}

# Writes a valid sample save to $1 with the example program.
make_sample() {
  "$GENERATOR" "$1" >/dev/null || { echo "FAIL: generator could not write $1" >&2; exit 1; }
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
