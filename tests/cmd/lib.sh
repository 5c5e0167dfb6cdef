# lib.sh - TAP helpers for the tool tests (sourced, POSIX sh).
#
#   . "$(dirname "$0")/lib.sh"
#   testcmd "name" 'tfk-cat x | tfk-count' "1\n"     # stdout must match
#   testerr "name" 'tfk-cat bad' 1 "record 0 at byte 0"   # rc + stderr part
#   check "name" test -s file                         # any command, rc 0
#   done_testing
#
# Provides $T (a scratch dir, removed at exit), $FIX (shared fixtures),
# $PYTHON (Debian's python3 with the oracle packages) and puts the tools
# under test first on PATH.

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${TFK_FIXTURES:=$(cd "$(dirname "$0")/../.." && pwd)/../shared/fixtures}"
: "${PYTHON:=/usr/bin/python3}"
PATH="$TFK_BIN:$PATH"
FIX=$TFK_FIXTURES
TESTS=$(cd "$(dirname "$0")/.." && pwd)
export PATH FIX PYTHON TESTS
T=$(mktemp -d /tmp/tfk-cmd-XXXXXX)
trap 'rm -rf "$T"' EXIT
_n=0
_fail=0

_result() {	# pass|fail name
	_n=$((_n + 1))
	if [ "$1" = pass ]; then
		echo "ok $_n - $2"
	else
		_fail=$((_fail + 1))
		echo "not ok $_n - $2"
	fi
}

# testcmd NAME COMMAND EXPECTED: COMMAND's stdout (run by sh in $T) must
# equal EXPECTED (printf escapes allowed) and its exit status must be 0.
testcmd() {
	_want=$(printf "$3")
	_got=$(cd "$T" && sh -c "$2" 2>"$T/.stderr")
	_rc=$?
	if [ $_rc -eq 0 ] && [ "$_got" = "$_want" ]; then
		_result pass "$1"
	else
		_result fail "$1"
		echo "#   command: $2"
		echo "#   exit: $_rc"
		printf '%s\n' "$_want" | sed 's/^/#   want: /'
		printf '%s\n' "$_got" | sed 's/^/#   got:  /'
		sed 's/^/#   stderr: /' "$T/.stderr"
	fi
}

# testerr NAME COMMAND RC STDERR_PART: exit status RC and stderr
# containing STDERR_PART (a fixed string).
testerr() {
	(cd "$T" && sh -c "$2") >"$T/.stdout" 2>"$T/.stderr"
	_rc=$?
	if [ $_rc -eq "$3" ] && grep -qF -- "$4" "$T/.stderr"; then
		_result pass "$1"
	else
		_result fail "$1"
		echo "#   command: $2"
		echo "#   exit: $_rc (want $3)"
		echo "#   want stderr containing: $4"
		sed 's/^/#   stderr: /' "$T/.stderr"
	fi
}

# check NAME CMD...: pass when CMD exits 0 (run in $T).
check() {
	_name=$1
	shift
	if (cd "$T" && "$@") >"$T/.out" 2>&1; then
		_result pass "$_name"
	else
		_result fail "$_name"
		sed 's/^/#   /' "$T/.out"
	fi
}

done_testing() {
	echo "1..$_n"
	[ $_fail -eq 0 ]
	exit $?
}
